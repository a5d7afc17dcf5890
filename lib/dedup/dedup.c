/*
 * dedup.c — signer, clustering engine and saved index (see dedup.h for the contract).
 *
 * Bucket table: open addressing with linear probing over 16-byte slots {key, node}. Band keys
 * are already uniform hashes; keys are still mixed once so that structured keys (SimHash
 * blocks) spread too. The table is a multimap for exact keys: a 64-bit key match is confirmed
 * with the high half of the 128-bit hash kept per node, so two different texts never merge
 * on a 64-bit collision.
 *
 * Union-find: parent pointers with path halving, and the smaller node always becomes the root,
 * which is what makes "first in input order survives" hold for every cluster shape (A≈B≈C,
 * or C arriving between A and B) without a second pass.
 */
#include "dedup.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/xsort.h"
#include "rmlist.h"

#define NONE UINT64_MAX

/*
 * A bucket entry's value is its node tagged with the run that made the entry: node in the low
 * 48 bits, run (1-based, the index's numbering) above. Entries of an index keep their run, so
 * that saving writes it back and a rerun can leave out what its earlier run added. In a
 * bucket the entry of the index, if any, is the only one of an earlier run, so it sorts first
 * either way: tagging changes no bucket's first node.
 */
#define NODE_BITS 48
#define NODE_MASK ((1ull << NODE_BITS) - 1)
#define MAX_RUNS 65535u
static uint64_t node_of(uint64_t tv) { return tv & NODE_MASK; }
static unsigned run_of(uint64_t tv) { return (unsigned)(tv >> NODE_BITS); }
static uint64_t tagged(uint64_t v, unsigned run) { return v | (uint64_t)run << NODE_BITS; }

/* ---- bucket table ---- */

typedef struct {
	uint64_t key, val;
} slot;

typedef struct {
	slot *s;
	size_t cap, n; /* cap is a power of two */
} keytab;

static void kt_release(keytab *t)
{
	free(t->s);
	memset(t, 0, sizeof *t);
}

static void kt_rehash(keytab *t, size_t cap)
{
	slot *old = t->s;
	size_t oldcap = t->cap;
	t->s = llm_malloc(cap * sizeof *t->s);
	for (size_t i = 0; i < cap; i++)
		t->s[i].val = NONE;
	t->cap = cap;
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].val == NONE)
			continue;
		size_t p = llm_mix64(old[i].key) & (cap - 1);
		while (t->s[p].val != NONE)
			p = (p + 1) & (cap - 1);
		t->s[p] = old[i];
	}
	free(old);
}

/* Position where a search for key starts; a search visits slots until an empty one. */
static size_t kt_start(const keytab *t, uint64_t key) { return llm_mix64(key) & (t->cap - 1); }

/* Insert without checking for an existing key (the multimap case); grows at 3/4 load. */
static void kt_insert(keytab *t, uint64_t key, uint64_t val)
{
	if (4 * (t->n + 1) > 3 * t->cap)
		kt_rehash(t, t->cap ? 2 * t->cap : 1024);
	size_t p = kt_start(t, key);
	while (t->s[p].val != NONE)
		p = (p + 1) & (t->cap - 1);
	t->s[p].key = key;
	t->s[p].val = val;
	t->n++;
}

/* Add delta to the value of key (0 when absent). */
static void kt_add(keytab *t, uint64_t key, uint64_t delta)
{
	if (t->cap)
		for (size_t p = kt_start(t, key); t->s[p].val != NONE; p = (p + 1) & (t->cap - 1))
			if (t->s[p].key == key) {
				t->s[p].val += delta;
				return;
			}
	kt_insert(t, key, delta);
}

/* The value of key, or NONE. */
static uint64_t kt_get(const keytab *t, uint64_t key)
{
	if (!t->cap)
		return NONE;
	for (size_t p = kt_start(t, key); t->s[p].val != NONE; p = (p + 1) & (t->cap - 1))
		if (t->s[p].key == key)
			return t->s[p].val;
	return NONE;
}

/* ---- parameters ---- */

void llm_dedup_params_default(llm_dedup_params *p, llm_dedup_method m)
{
	memset(p, 0, sizeof *p);
	p->method = m;
	p->sh.norm = LLM_NORM_FULL;
	p->sh.units = LLM_UNITS_AUTO;
	p->sh.ngram = 5;
	p->sh.seed = 1;
	p->num_perm = 112;
	p->bands = 14;
	p->rows = 8;
	p->hash_bits = 32;
	p->hamming = 3;
	p->blocks = 6;
}

int llm_dedup_params_check(const llm_dedup_params *p)
{
	if (p->sh.ngram < 1)
		return llm_fail(LLM_EINVAL, "n-gram size must be at least 1");
	if (p->method == LLM_DEDUP_MINHASH) {
		llm_minhash *mh;
		int rc = llm_minhash_new(&mh, p->num_perm, p->bands, p->rows, p->hash_bits, 0);
		llm_minhash_free(mh);
		if (rc)
			return rc;
		if (p->verify < 0 || p->verify > 1)
			return llm_fail(LLM_EINVAL, "verification threshold %g not in [0, 1]", p->verify);
	}
	if (p->method == LLM_DEDUP_SIMHASH) {
		llm_simhash_tables t;
		return llm_simhash_tables_init(&t, p->blocks, p->hamming);
	}
	return LLM_OK;
}

static const char *norm_name(llm_norm_level n)
{
	return n == LLM_NORM_NONE ? "none" : n == LLM_NORM_SPACE ? "space" : "full";
}

int llm_dedup_params_same(const llm_dedup_params *a, const llm_dedup_params *b)
{
	llm_buf x = LLM_BUF_INIT, y = LLM_BUF_INIT;
	llm_dedup_params_describe(a, &x);
	llm_dedup_params_describe(b, &y);
	int same = a->method == b->method && !strcmp(x.p, y.p);
	llm_buf_release(&x);
	llm_buf_release(&y);
	return same;
}

static const char *units_name(llm_units u)
{
	return u == LLM_UNITS_WORD ? "word" : u == LLM_UNITS_CHAR ? "char" :
	       u == LLM_UNITS_AUTO_CHAR ? "auto-char" : "auto";
}

void llm_dedup_params_describe(const llm_dedup_params *p, llm_buf *out)
{
	switch (p->method) {
	case LLM_DEDUP_EXACT:
		llm_buf_addf(out, "exact: XXH3-128 of the text, normalisation %s", norm_name(p->sh.norm));
		return;
	case LLM_DEDUP_MINHASH:
		llm_buf_addf(out, "minhash: %u permutations, %u bands x %u rows, %u-bit",
		             p->num_perm, p->bands, p->rows, p->hash_bits);
		llm_buf_addf(out, " (50%% candidate rate at Jaccard %.3f)",
		             /* s where 1-(1-s^r)^b = 1/2 */
		             pow(1 - pow(0.5, 1.0 / p->bands), 1.0 / p->rows));
		if (p->verify > 0)
			llm_buf_addf(out, ", verified at Jaccard >= %g", p->verify);
		break;
	case LLM_DEDUP_SIMHASH:
		llm_buf_addf(out, "simhash: 64-bit, Hamming distance <= %u, %u blocks", p->hamming,
		             p->blocks);
		break;
	}
	llm_buf_addf(out, "; %u-%s shingles, normalisation %s, seed %llu", p->sh.ngram,
	             units_name(p->sh.units), norm_name(p->sh.norm),
	             (unsigned long long)p->sh.seed);
}

/* ---- signer ---- */

struct llm_signer {
	llm_dedup_params p;
	llm_shingler sh;
	llm_minhash *mh;
	uint64_t *sig, *keys;
	uint32_t *set;
	size_t setcap;
	llm_buf norm;
};

int llm_signer_new(llm_signer **out, const llm_dedup_params *p)
{
	*out = NULL;
	int rc = llm_dedup_params_check(p);
	if (rc)
		return rc;
	llm_signer *s = llm_calloc(1, sizeof *s);
	s->p = *p;
	llm_shingler_init(&s->sh);
	llm_buf_init(&s->norm);
	if (p->method == LLM_DEDUP_MINHASH) {
		llm_minhash_new(&s->mh, p->num_perm, p->bands, p->rows, p->hash_bits, p->sh.seed);
		s->sig = llm_malloc(p->num_perm * sizeof *s->sig);
		s->keys = llm_malloc(p->bands * sizeof *s->keys);
	} else {
		s->keys = llm_malloc(sizeof *s->keys);
	}
	*out = s;
	return LLM_OK;
}

void llm_signer_free(llm_signer *s)
{
	if (!s)
		return;
	llm_shingler_release(&s->sh);
	llm_buf_release(&s->norm);
	llm_minhash_free(s->mh);
	free(s->sig);
	free(s->keys);
	free(s->set);
	free(s);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

void llm_signer_sign(llm_signer *s, const char *text, size_t n, llm_dedup_sig *sig)
{
	memset(sig, 0, sizeof *sig);
	if (s->p.method == LLM_DEDUP_EXACT) {
		/* Every text has an exact key, the empty one included: empty documents are
		 * exact duplicates of each other. */
		llm_buf_reset(&s->norm);
		llm_norm_text(text, n, s->p.sh.norm, &s->norm);
		llm_hash128_t h = llm_hash128(s->norm.p ? s->norm.p : "", s->norm.len, 0);
		s->keys[0] = h.lo;
		sig->keys = s->keys;
		sig->nkeys = 1;
		sig->key_hi = h.hi;
		sig->has = 1;
		return;
	}
	size_t nh = llm_shingle(&s->sh, &s->p.sh, text, n);
	if (nh == 0)
		return;
	sig->has = 1;
	if (s->p.method == LLM_DEDUP_SIMHASH) {
		sig->fp = llm_simhash(s->sh.h, nh);
		return;
	}
	/* Repeated shingles do not change a minimum: no need to make the set first. */
	llm_minhash_sign(s->mh, s->sh.h, nh, s->sig);
	llm_minhash_band_keys(s->mh, s->sig, s->keys);
	sig->keys = s->keys;
	sig->nkeys = s->p.bands;
	if (s->p.verify > 0) {
		if (nh > s->setcap) {
			s->setcap = nh;
			s->set = llm_realloc(s->set, nh * sizeof *s->set);
		}
		for (size_t i = 0; i < nh; i++)
			s->set[i] = (uint32_t)(s->sh.h[i] >> 32);
		qsort(s->set, nh, sizeof *s->set, cmp_u32);
		size_t k = 0;
		for (size_t i = 0; i < nh; i++)
			if (k == 0 || s->set[i] != s->set[k - 1])
				s->set[k++] = s->set[i];
		sig->set = s->set;
		sig->nset = (uint32_t)k;
	}
}

/* ---- engine ---- */

/*
 * The buckets are held in one of two ways, with one result:
 *   tables   until they reach half the memory budget: the bucket table, the simhash members,
 *            and for exact the high half of each bucket's first node; documents are joined
 *            with their candidates as they arrive.
 *   records  from then on: every bucket entry of every document is a record {key, aux, node}
 *            of an external sort (xsort.h), the tables' entries first. finish merges them
 *            and joins each bucket's members with its first (smallest) node: the pairs the
 *            tables would have joined, verification included.
 * Simhash records are {table key, fingerprint, node}; the distinct fingerprints of a bucket
 * are compared pairwise, and a second sort {fingerprint, 0, node} gives the index its entries.
 *
 * Verification sets live in a temporary file (offset and length per node in memory). Ids
 * go to a temporary file in node order; only survivors with duplicates are kept in memory,
 * which is all the second pass asks for; saving an index reads the file back.
 */

#define SETBUF (1u << 20) /* write buffer of the verification sets */
#define SETFILE "temporary verification file"

struct llm_dedup {
	llm_dedup_params p;
	llm_simhash_tables tabs;  /* simhash */
	size_t budget;
	char *tmpdir;
	int err;                  /* first failure of a temporary file, reported by finish/save */
	uint64_t *parent;
	uint64_t n, cap, base;
	/* tables */
	keytab buckets;
	uint64_t *khi, khicap;    /* exact: per node, high half of its key */
	uint64_t *mfp, *mnode, *mnext; /* simhash members, one per distinct fingerprint; */
	uint64_t nm, mcap;        /* mnext[m * ntables + t] links a table's bucket */
	keytab fptab;             /* fingerprint -> member */
	/* records */
	llm_xsort *recs, *fps;    /* both NULL while in tables */
	/* verification sets */
	int setfd;
	uint64_t setbytes, *setoff; /* bytes stored; per node, offset and length */
	uint32_t *setlen, *scratch;
	size_t scratchcap;
	char *setbuf;             /* the last sets, not yet written: from setbufoff to setbytes */
	uint64_t setbufoff;
	/* ids */
	FILE *idf;                /* u64 node, u32 length, id; in node order */
	uint64_t idnext;          /* nodes below it cannot be named any more */
	keytab idtab;             /* survivor with duplicates -> offset in ids */
	llm_buf ids;              /* u32 length + bytes, back to back */
	unsigned char *hasdup;    /* bitset, after finish */
	int finished;
	uint64_t candidates, joins;
	/* runs: this one, and those of the loaded index (see "index file") */
	unsigned run, replaces;   /* this run's number; the index's run it replaces, or 0 */
	char **inputs, *cmd;
	size_t ninputs;
	uint64_t docs;            /* documents with a signature in this run */
	llm_buf runs;             /* records of the loaded runs kept, as in the file */
	uint64_t *runend;         /* per kept run, the end of its clusters' node range */
	unsigned nruns;
	uint64_t *wsize;          /* per loaded node, its cluster's size */
	keytab csize, cnew;       /* after finish, per root with duplicates: size, new members */
};

int llm_dedup_new(llm_dedup **out, const llm_dedup_params *p)
{
	*out = NULL;
	int rc = llm_dedup_params_check(p);
	if (rc)
		return rc;
	llm_dedup *d = llm_calloc(1, sizeof *d);
	d->p = *p;
	d->budget = SIZE_MAX;
	d->setfd = -1;
	d->run = 1;
	if (p->method == LLM_DEDUP_SIMHASH)
		llm_simhash_tables_init(&d->tabs, p->blocks, p->hamming);
	llm_buf_init(&d->ids);
	*out = d;
	return LLM_OK;
}

void llm_dedup_set_memory(llm_dedup *d, size_t budget, const char *tmpdir)
{
	d->budget = budget;
	free(d->tmpdir);
	d->tmpdir = tmpdir ? llm_strdup(tmpdir) : NULL;
}

void llm_dedup_free(llm_dedup *d)
{
	if (!d)
		return;
	free(d->tmpdir);
	free(d->parent);
	kt_release(&d->buckets);
	free(d->khi);
	free(d->mfp);
	free(d->mnode);
	free(d->mnext);
	kt_release(&d->fptab);
	llm_xsort_free(d->recs);
	llm_xsort_free(d->fps);
	if (d->setfd >= 0)
		close(d->setfd);
	free(d->setoff);
	free(d->setlen);
	free(d->scratch);
	free(d->setbuf);
	if (d->idf)
		fclose(d->idf);
	kt_release(&d->idtab);
	llm_buf_release(&d->ids);
	free(d->hasdup);
	for (size_t i = 0; i < d->ninputs; i++)
		free(d->inputs[i]);
	free(d->inputs);
	free(d->cmd);
	llm_buf_release(&d->runs);
	free(d->runend);
	free(d->wsize);
	kt_release(&d->csize);
	kt_release(&d->cnew);
	free(d);
}

uint64_t llm_dedup_base(const llm_dedup *d) { return d->base; }
uint64_t llm_dedup_candidates(const llm_dedup *d) { return d->candidates; }
uint64_t llm_dedup_joins(const llm_dedup *d) { return d->joins; }

unsigned llm_dedup_runs(const llm_dedup *d)
{
	return (d->recs ? llm_xsort_runs(d->recs) : 0) + (d->fps ? llm_xsort_runs(d->fps) : 0);
}

/* What the budget counts: the tables. */
static size_t table_bytes(const llm_dedup *d)
{
	return (d->buckets.cap + d->fptab.cap) * sizeof(slot) + d->khicap * 8 +
	       d->mcap * (16 + 8 * (size_t)d->tabs.ntables);
}

size_t llm_dedup_memory(const llm_dedup *d)
{
	size_t m = d->cap * 8 + table_bytes(d) + d->idtab.cap * sizeof(slot) + d->ids.cap +
	           d->scratchcap * 4 + (d->hasdup ? d->n / 8 + 1 : 0) + (d->setbuf ? SETBUF : 0);
	if (d->recs)
		m += llm_xsort_memory(d->recs) + (d->fps ? llm_xsort_memory(d->fps) : 0);
	if (d->setoff)
		m += d->cap * 12;
	return m;
}

static void fail_once(llm_dedup *d, int rc)
{
	if (rc && !d->err)
		d->err = rc;
}

static uint64_t new_node(llm_dedup *d)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 4096;
		d->parent = llm_realloc(d->parent, d->cap * sizeof *d->parent);
		if (d->p.verify > 0) {
			d->setoff = llm_realloc(d->setoff, d->cap * sizeof *d->setoff);
			d->setlen = llm_realloc(d->setlen, d->cap * sizeof *d->setlen);
		}
	}
	if (d->p.method == LLM_DEDUP_EXACT && !d->recs && d->n == d->khicap) {
		d->khicap = d->khicap ? 2 * d->khicap : 4096;
		d->khi = llm_realloc(d->khi, d->khicap * sizeof *d->khi);
	}
	uint64_t v = d->n++;
	d->parent[v] = v;
	if (d->setlen)
		d->setlen[v] = 0, d->setoff[v] = 0;
	return v;
}

uint64_t llm_dedup_root(llm_dedup *d, uint64_t v)
{
	while (d->parent[v] != v) {
		d->parent[v] = d->parent[d->parent[v]];
		v = d->parent[v];
	}
	return v;
}

/* a and b may be tagged. */
static void join(llm_dedup *d, uint64_t a, uint64_t b)
{
	a = llm_dedup_root(d, node_of(a));
	b = llm_dedup_root(d, node_of(b));
	if (a == b)
		return;
	if (a < b)
		d->parent[b] = a;
	else
		d->parent[a] = b;
	d->joins++;
}

/* ---- verification sets ---- */

/* Sets are appended through a buffer, so that a document costs a memcpy, not a system call;
 * a set is wholly in the buffer or wholly in the file. */
static void store_set(llm_dedup *d, uint64_t v, const uint32_t *set, uint32_t n)
{
	size_t bytes = (size_t)n * 4, held = (size_t)(d->setbytes - d->setbufoff);
	if (d->setfd < 0 && !d->err && (d->setfd = llm_tmpfd(d->tmpdir)) < 0) {
		fail_once(d, d->setfd);
		d->setfd = -1;
	}
	if (d->setfd < 0)
		return;
	if (!d->setbuf)
		d->setbuf = llm_malloc(SETBUF);
	if (held + bytes > SETBUF) {
		fail_once(d, llm_pwrite_all(d->setfd, d->setbuf, held, d->setbufoff, SETFILE));
		d->setbufoff = d->setbytes;
		held = 0;
	}
	if (bytes > SETBUF) {
		fail_once(d, llm_pwrite_all(d->setfd, set, bytes, d->setbytes, SETFILE));
		d->setbufoff += bytes;
	} else {
		memcpy(d->setbuf + held, set, bytes);
	}
	d->setoff[v] = d->setbytes;
	d->setlen[v] = n;
	d->setbytes += bytes;
}

static int load_set(llm_dedup *d, uint64_t v, uint32_t *dst)
{
	size_t bytes = (size_t)d->setlen[v] * 4;
	if (d->setoff[v] >= d->setbufoff) {
		memcpy(dst, d->setbuf + (d->setoff[v] - d->setbufoff), bytes);
		return LLM_OK;
	}
	return llm_pread_all(d->setfd, dst, bytes, d->setoff[v], SETFILE);
}

static int verified(llm_dedup *d, uint64_t a, uint64_t b)
{
	a = node_of(a);
	b = node_of(b);
	size_t na = d->setlen[a], nb = d->setlen[b];
	if (d->err || d->setfd < 0)
		return 0;
	if (na + nb > d->scratchcap) {
		d->scratchcap = na + nb;
		d->scratch = llm_realloc(d->scratch, d->scratchcap * 4);
	}
	int rc = load_set(d, a, d->scratch);
	if (!rc)
		rc = load_set(d, b, d->scratch + na);
	fail_once(d, rc);
	return !rc && llm_jaccard_sorted32(d->scratch, na, d->scratch + na, nb) >= d->p.verify;
}

/* ---- tables ---- */

static uint64_t table_key(const llm_dedup *d, unsigned t, uint64_t fp)
{
	/* The table's bits, tagged with the table number; a rare collision between tables only
	 * costs one distance check. */
	return (fp & d->tabs.mask[t]) ^ ((uint64_t)(t + 1) * 0x9e3779b97f4a7c15ull);
}

static void add_member(llm_dedup *d, uint64_t fp, uint64_t node)
{
	unsigned nt = d->tabs.ntables;
	if (d->nm == d->mcap) {
		d->mcap = d->mcap ? 2 * d->mcap : 1024;
		d->mfp = llm_realloc(d->mfp, d->mcap * sizeof *d->mfp);
		d->mnode = llm_realloc(d->mnode, d->mcap * sizeof *d->mnode);
		d->mnext = llm_realloc(d->mnext, d->mcap * nt * sizeof *d->mnext);
	}
	uint64_t m = d->nm++;
	d->mfp[m] = fp;
	d->mnode[m] = node;
	kt_insert(&d->fptab, fp, m);
	for (unsigned t = 0; t < nt; t++) {
		uint64_t key = table_key(d, t, fp);
		size_t p = kt_start(&d->buckets, key);
		uint64_t head = NONE;
		if (d->buckets.cap)
			for (; d->buckets.s[p].val != NONE; p = (p + 1) & (d->buckets.cap - 1))
				if (d->buckets.s[p].key == key) {
					head = d->buckets.s[p].val;
					d->buckets.s[p].val = m;
					break;
				}
		d->mnext[m * nt + t] = head;
		if (head == NONE)
			kt_insert(&d->buckets, key, m);
	}
}

static void table_simhash(llm_dedup *d, uint64_t v, uint64_t fp)
{
	/* A fingerprint seen before joins its member and adds nothing: anything within k of
	 * it is within k of that member, so heavy exact duplication costs O(1) per document. */
	uint64_t m = kt_get(&d->fptab, fp);
	if (m != NONE) {
		d->candidates++;
		join(d, v, d->mnode[m]);
		return;
	}
	unsigned nt = d->tabs.ntables;
	for (unsigned t = 0; t < nt; t++) {
		uint64_t key = table_key(d, t, fp);
		for (m = kt_get(&d->buckets, key); m != NONE; m = d->mnext[m * nt + t]) {
			if ((d->mfp[m] & d->tabs.mask[t]) != (fp & d->tabs.mask[t]))
				continue;
			d->candidates++;
			if (llm_hamming64(d->mfp[m], fp) <= d->p.hamming)
				join(d, v, d->mnode[m]);
		}
	}
	add_member(d, fp, v);
}

/* A bucket entry (key, key_hi of exact) for node v: joined with the bucket's first node. */
static void table_key_add(llm_dedup *d, uint64_t v, uint64_t key, uint64_t hi)
{
	int exact = d->p.method == LLM_DEDUP_EXACT;
	uint64_t first = NONE;
	if (d->buckets.cap) {
		for (size_t p = kt_start(&d->buckets, key); d->buckets.s[p].val != NONE;
		     p = (p + 1) & (d->buckets.cap - 1)) {
			const slot *s = &d->buckets.s[p];
			if (s->key == key && (!exact || d->khi[node_of(s->val)] == hi)) {
				first = s->val;
				break;
			}
		}
	}
	if (first == NONE) {
		if (exact)
			d->khi[node_of(v)] = hi;
		kt_insert(&d->buckets, key, v);
		return;
	}
	d->candidates++;
	if (d->p.verify > 0 && node_of(first) >= d->base && !verified(d, v, first))
		return;
	join(d, v, first);
}

/* ---- records ---- */

static void put(llm_xsort *x, llm_dedup *d, uint64_t a, uint64_t b, uint64_t c)
{
	if (!d->err)
		fail_once(d, llm_xsort_add(x, a, b, c));
}

static void record_simhash(llm_dedup *d, uint64_t v, uint64_t fp)
{
	for (unsigned t = 0; t < d->tabs.ntables; t++)
		put(d->recs, d, table_key(d, t, fp), fp, v);
	put(d->fps, d, fp, 0, v);
}

/* The tables pass half the budget: their entries become the first records. */
static void spill(llm_dedup *d)
{
	int sim = d->p.method == LLM_DEDUP_SIMHASH, exact = d->p.method == LLM_DEDUP_EXACT;
	d->recs = llm_xsort_new(sim ? d->budget / 4 * 3 : d->budget, d->tmpdir);
	if (sim) {
		d->fps = llm_xsort_new(d->budget / 4, d->tmpdir);
		for (uint64_t m = 0; m < d->nm; m++)
			record_simhash(d, d->mnode[m], d->mfp[m]);
		free(d->mfp);
		free(d->mnode);
		free(d->mnext);
		d->mfp = d->mnode = d->mnext = NULL;
		d->nm = d->mcap = 0;
		kt_release(&d->fptab);
	} else {
		for (size_t i = 0; i < d->buckets.cap; i++) {
			const slot *s = &d->buckets.s[i];
			if (s->val != NONE)
				put(d->recs, d, s->key, exact ? d->khi[node_of(s->val)] : 0, s->val);
		}
		free(d->khi);
		d->khi = NULL;
		d->khicap = 0;
	}
	kt_release(&d->buckets);
	llm_debug("dedup tables reached %zu bytes; sorting bucket entries on disk from node %llu",
	          d->budget / 2, (unsigned long long)d->n);
}

static void maybe_spill(llm_dedup *d)
{
	if (!d->recs && table_bytes(d) > d->budget / 2)
		spill(d);
}

/* One bucket entry of an index or a document. */
static void add_entry(llm_dedup *d, uint64_t v, uint64_t key, uint64_t hi)
{
	if (d->recs)
		put(d->recs, d, key, d->p.method == LLM_DEDUP_EXACT ? hi : 0, v);
	else
		table_key_add(d, v, key, hi);
}

uint64_t llm_dedup_add(llm_dedup *d, const llm_dedup_sig *sig)
{
	maybe_spill(d);
	uint64_t v = new_node(d), tv = tagged(v, d->run);
	if (!sig)
		return v;
	d->docs++;
	if (!sig->has)
		return v;
	if (d->p.verify > 0)
		store_set(d, v, sig->set, sig->nset);
	if (d->p.method == LLM_DEDUP_SIMHASH) {
		if (d->recs)
			record_simhash(d, tv, sig->fp);
		else
			table_simhash(d, tv, sig->fp);
		return v;
	}
	for (unsigned j = 0; j < sig->nkeys; j++)
		add_entry(d, tv, sig->keys[j], sig->key_hi);
	return v;
}

typedef struct {
	uint64_t fp, node;
} member;

/* One simhash bucket, sorted by fingerprint then node. */
static void merge_simhash_bucket(llm_dedup *d, member *g, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && g[k - 1].fp == g[i].fp) {
			d->candidates++;
			join(d, g[i].node, g[k - 1].node);
		} else {
			g[k++] = g[i];
		}
	}
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < k; j++) {
			d->candidates++;
			if (llm_hamming64(g[i].fp, g[j].fp) <= d->p.hamming)
				join(d, g[i].node, g[j].node);
		}
}

/* Records: join each bucket's members with its first node (simhash: pairwise). */
static int merge(llm_dedup *d)
{
	int sim = d->p.method == LLM_DEDUP_SIMHASH, rc = llm_xsort_rewind(d->recs);
	member *g = NULL;
	size_t ng = 0, gcap = 0;
	llm_rec3 r, first = { 0, 0, NONE };
	while (!rc && (rc = llm_xsort_next(d->recs, &r)) == LLM_OK) {
		int same = first.c != NONE && r.a == first.a && (sim || r.b == first.b);
		if (!same) {
			if (sim && ng)
				merge_simhash_bucket(d, g, ng);
			first = r;
			ng = 0;
		}
		if (sim) {
			if (ng == gcap) {
				gcap = gcap ? 2 * gcap : 64;
				g = llm_realloc(g, gcap * sizeof *g);
			}
			g[ng++] = (member){ r.b, r.c };
			continue;
		}
		if (!same)
			continue;
		d->candidates++;
		if (d->p.verify > 0 && node_of(first.c) >= d->base && !verified(d, r.c, first.c))
			continue;
		join(d, r.c, first.c);
	}
	if (sim && ng && rc == LLM_EOF)
		merge_simhash_bucket(d, g, ng);
	free(g);
	return rc == LLM_EOF ? LLM_OK : rc;
}

/* ---- ids ---- */

static void keep_id(llm_dedup *d, uint64_t node, const char *id, uint32_t len)
{
	kt_insert(&d->idtab, node, d->ids.len);
	llm_buf_add(&d->ids, &len, 4);
	llm_buf_add(&d->ids, id, len);
}

void llm_dedup_set_id(llm_dedup *d, uint64_t node, const char *id, size_t len)
{
	if (node < d->idnext)
		return;
	d->idnext = node + 1;
	uint32_t l = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	if (d->finished && llm_dedup_has_dups(d, node))
		keep_id(d, node, id, l);
	if (d->err)
		return;
	if (!d->idf) {
		int fd = llm_tmpfd(d->tmpdir);
		if (fd < 0 || !(d->idf = fdopen(fd, "w+b"))) {
			if (fd >= 0)
				close(fd);
			fail_once(d, fd < 0 ? fd : llm_fail(LLM_EIO, "temporary id file: %s", strerror(errno)));
			return;
		}
	}
	if (fwrite(&node, 8, 1, d->idf) != 1 || fwrite(&l, 4, 1, d->idf) != 1 ||
	    fwrite(id, 1, l, d->idf) != l)
		fail_once(d, llm_fail(LLM_EIO, "temporary id file: %s", strerror(errno)));
}

const char *llm_dedup_id(const llm_dedup *d, uint64_t node, size_t *len)
{
	uint64_t off = kt_get(&d->idtab, node);
	if (off == NONE)
		return NULL;
	uint32_t l;
	memcpy(&l, d->ids.p + off, 4);
	*len = l;
	return d->ids.p + off + 4;
}

int llm_dedup_decide(llm_dedup *d, uint64_t v, int ok, const char *id, size_t idlen,
                     int name_all, const char **cid, size_t *cidlen)
{
	uint64_t root = llm_dedup_root(d, v);
	if (root == v) {
		if (ok && (name_all || llm_dedup_has_dups(d, v)))
			llm_dedup_set_id(d, v, id ? id : "", idlen);
		if (!llm_dedup_has_dups(d, v))
			return 0;
		*cid = llm_dedup_id(d, v, cidlen);
		return LLM_RMLIST_SURVIVOR;
	}
	*cid = llm_dedup_id(d, root, cidlen);
	if (!*cid)
		return llm_fail(LLM_EINTERNAL, "internal error: survivor %llu of %llu has no id",
		                (unsigned long long)root, (unsigned long long)v);
	return LLM_RMLIST_DUPLICATE;
}

/* Read the id file from its start: 1 and the next id, 0 at its end, or an error. */
static int id_rewind(llm_dedup *d)
{
	if (d->idf && (fflush(d->idf) || fseek(d->idf, 0, SEEK_SET)))
		return llm_fail(LLM_EIO, "temporary id file: %s", strerror(errno));
	return LLM_OK;
}

static int id_next(llm_dedup *d, uint64_t *node, llm_buf *id)
{
	uint32_t l;
	if (!d->idf || fread(node, 8, 1, d->idf) != 1)
		return d->idf && ferror(d->idf) ? llm_fail(LLM_EIO, "temporary id file: read error") : 0;
	llm_buf_reset(id);
	if (fread(&l, 4, 1, d->idf) != 1 || (llm_buf_grow(id, l), fread(id->p, 1, l, d->idf) != l))
		return llm_fail(LLM_EIO, "temporary id file: short read");
	id->len = l;
	id->p[l] = 0;
	return 1;
}

int llm_dedup_finish(llm_dedup *d)
{
	if (d->recs && !d->err)
		fail_once(d, merge(d));
	free(d->hasdup);
	d->hasdup = llm_calloc(d->n / 8 + 1, 1);
	for (uint64_t v = 0; v < d->n; v++) {
		uint64_t r = llm_dedup_root(d, v);
		d->parent[v] = r;
		if (r != v)
			d->hasdup[r / 8] |= (unsigned char)(1u << (r % 8));
	}
	/* Cluster sizes: a loaded node weighs the size of its cluster in the index, a new one 1.
	 * Only clusters with duplicates are in the tables. */
	kt_release(&d->csize);
	kt_release(&d->cnew);
	for (uint64_t v = 0; v < d->n; v++) {
		uint64_t r = d->parent[v];
		if (r == v)
			continue;
		kt_add(&d->csize, r, v < d->base ? d->wsize[v] : 1);
		if (v >= d->base)
			kt_add(&d->cnew, r, 1);
	}
	d->finished = 1;
	/* The clusters of a loaded index that have new duplicates: their ids are needed now. */
	if (d->base && !d->err) {
		llm_buf id = LLM_BUF_INIT;
		uint64_t node;
		int rc = id_rewind(d);
		while (!rc && (rc = id_next(d, &node, &id)) == 1) {
			if (llm_dedup_has_dups(d, node))
				keep_id(d, node, id.p ? id.p : "", (uint32_t)id.len);
			rc = LLM_OK;
		}
		fail_once(d, rc);
		if (d->idf && fseek(d->idf, 0, SEEK_END))
			fail_once(d, llm_fail(LLM_EIO, "temporary id file: %s", strerror(errno)));
		llm_buf_release(&id);
	}
	return d->err;
}

int llm_dedup_has_dups(const llm_dedup *d, uint64_t root)
{
	return d->hasdup && root < d->n && (d->hasdup[root / 8] >> (root % 8)) & 1;
}

uint64_t llm_dedup_dup_count(const llm_dedup *d, uint64_t root)
{
	uint64_t own = root < d->base ? d->wsize[root] : 1, more = kt_get(&d->csize, root);
	return own + (more == NONE ? 0 : more);
}

/* Members of root's cluster added by this run. */
static uint64_t new_members(const llm_dedup *d, uint64_t root)
{
	uint64_t more = kt_get(&d->cnew, root);
	return (root >= d->base) + (more == NONE ? 0 : more);
}

/* ---- index file ---- */

/*
 * Layout (llmkit-formats(5), DEDUP INDEX), little-endian:
 *   header, 104 bytes: magic, version, method, the parameters (48 bytes), clusters, entries,
 *     bytes of the cluster section, bytes of the run section, runs, 0
 *   runs: per run u64 documents, u64 clusters it made, u32 inputs, u32 command length, the
 *     command, per input u32 length and name
 *   clusters in node order, so that each run's clusters follow those of the runs before it:
 *     u64 size, u64 members added by the last run, u32 id length, id
 *   entries sorted by key: u64 key, u64 high half of the hash (exact only),
 *     u64 cluster | run << 48
 *   XXH3-64 of everything before it
 */
#define IDX_MAGIC "LLMDIDX1"
#define IDX_VERSION 2u
#define IDX_HEADER 104
#define RUN_FIXED 24u
#define CLUSTER_FIXED 20u

static void put32(llm_buf *b, uint32_t x) { llm_buf_add(b, &x, 4); }
static void put64(llm_buf *b, uint64_t x) { llm_buf_add(b, &x, 8); }
static uint32_t get32(const char *p) { uint32_t x; memcpy(&x, p, 4); return x; }
static uint64_t get64(const char *p) { uint64_t x; memcpy(&x, p, 8); return x; }

static void put_params(llm_buf *b, const llm_dedup_params *p)
{
	put32(b, p->sh.norm);
	put32(b, p->sh.units);
	put32(b, p->sh.ngram);
	int mh = p->method == LLM_DEDUP_MINHASH, sh = p->method == LLM_DEDUP_SIMHASH;
	put32(b, mh ? p->num_perm : 0);
	put32(b, mh ? p->bands : 0);
	put32(b, mh ? p->rows : 0);
	put32(b, mh ? p->hash_bits : 0);
	put32(b, sh ? p->hamming : 0);
	put32(b, sh ? p->blocks : 0);
	put32(b, 0);
	put64(b, p->sh.seed);
}

/* The parameters of a header (method at 12, the rest at 16), for messages and --info. */
static void get_params(const char *h, llm_dedup_params *p)
{
	uint32_t m = get32(h + 12);
	llm_dedup_params_default(p, m <= LLM_DEDUP_SIMHASH ? (llm_dedup_method)m : LLM_DEDUP_MINHASH);
	const char *q = h + 16;
	p->sh.norm = (llm_norm_level)get32(q);
	p->sh.units = (llm_units)get32(q + 4);
	p->sh.ngram = get32(q + 8);
	if (p->method == LLM_DEDUP_MINHASH)
		p->num_perm = get32(q + 12), p->bands = get32(q + 16), p->rows = get32(q + 20),
		p->hash_bits = get32(q + 24);
	if (p->method == LLM_DEDUP_SIMHASH)
		p->hamming = get32(q + 28), p->blocks = get32(q + 32);
	p->sh.seed = get64(q + 40);
}

static unsigned entry_size(llm_dedup_method m) { return m == LLM_DEDUP_EXACT ? 24 : 16; }

/* Length of the file and whether its last 8 bytes are the XXH3-64 of the bytes before. */
static int index_checksum(const char *path, uint64_t *len)
{
	llm_reader *r;
	int rc = llm_reader_open(&r, path);
	if (rc)
		return rc;
	llm_hasher *h = llm_hasher_new(0);
	static _Thread_local char buf[8 + (1 << 16)];
	size_t held = 0; /* the last bytes read, not hashed yet: at most 8 */
	ssize_t k;
	*len = 0;
	while ((k = llm_reader_read(r, buf + held, sizeof buf - held)) > 0) {
		size_t have = held + (size_t)k;
		*len += (uint64_t)k;
		held = have < 8 ? have : 8;
		llm_hasher_add(h, buf, have - held);
		memmove(buf, buf + have - held, held);
	}
	rc = k < 0 ? (int)k : LLM_OK;
	if (!rc && (held < 8 || llm_hasher_digest(h) != get64(buf)))
		rc = llm_fail(LLM_EFORMAT, "%s: index checksum mismatch or file too short (damaged)",
		              path);
	llm_hasher_free(h);
	llm_reader_free(r);
	return rc;
}

/* One run's record in the run section. */
typedef struct {
	uint64_t docs, clusters, cend; /* cend: end of its clusters (and those before) */
	const char *rec, *cmd, *inputs;
	size_t len;
	uint32_t cmdlen, ninputs;
} run_rec;

/* An index file being read: header and runs checked, positioned at the clusters. */
typedef struct {
	const char *path;
	llm_reader *r;
	char h[IDX_HEADER];
	uint64_t len, nclusters, nentries, idb, rb, esz;
	unsigned nruns;
	char *runbuf;
	run_rec *runs;
} idx_file;

static void idx_close(idx_file *f)
{
	llm_reader_free(f->r);
	free(f->runbuf);
	free(f->runs);
}

static int idx_bad(const idx_file *f, const char *what)
{
	return llm_fail(LLM_EFORMAT, "%s: %s", f->path, what);
}

static int parse_runs(idx_file *f)
{
	const char *b = f->runbuf;
	size_t n = (size_t)f->rb, off = 0;
	uint64_t cend = 0;
	f->runs = llm_calloc(f->nruns ? f->nruns : 1, sizeof *f->runs);
	for (unsigned i = 0; i < f->nruns; i++) {
		run_rec *r = &f->runs[i];
		if (n - off < RUN_FIXED)
			return idx_bad(f, "run records run past their section");
		r->rec = b + off;
		r->docs = get64(b + off);
		r->clusters = get64(b + off + 8);
		r->ninputs = get32(b + off + 16);
		r->cmdlen = get32(b + off + 20);
		off += RUN_FIXED;
		if (n - off < r->cmdlen)
			return idx_bad(f, "run records run past their section");
		r->cmd = b + off;
		off += r->cmdlen;
		r->inputs = b + off;
		for (uint32_t k = 0; k < r->ninputs; k++) {
			if (n - off < 4 || n - off - 4 < get32(b + off))
				return idx_bad(f, "run records run past their section");
			off += 4 + (size_t)get32(b + off);
		}
		r->len = (size_t)(b + off - r->rec);
		if (r->clusters > f->nclusters - cend)
			return idx_bad(f, "runs hold more clusters than the index");
		cend += r->clusters;
		r->cend = cend;
	}
	if (off != n)
		return idx_bad(f, "run section has trailing bytes");
	if (cend != f->nclusters)
		return idx_bad(f, "runs hold fewer clusters than the index");
	return LLM_OK;
}

/* Open, check the checksum, the header (method and parameters against want, unless NULL)
 * and the run section. */
static int idx_open(idx_file *f, const char *path, const llm_dedup_params *want)
{
	memset(f, 0, sizeof *f);
	f->path = path;
	int rc = llm_reader_open(&f->r, path);
	if (rc)
		return rc;
	if (llm_reader_read_exact(f->r, f->h, IDX_HEADER) || memcmp(f->h, IDX_MAGIC, 8) != 0)
		return idx_bad(f, "not a dedup index (bad magic or too short)");
	if (get32(f->h + 8) != IDX_VERSION)
		return llm_fail(LLM_EFORMAT, "%s: index version %u not supported (this llm-dedup "
		                "reads version %u; rebuild the index)", path, get32(f->h + 8), IDX_VERSION);
	if ((rc = index_checksum(path, &f->len)))
		return rc;
	if (f->len < IDX_HEADER + 8)
		return idx_bad(f, "too short");
	if (get32(f->h + 12) > LLM_DEDUP_SIMHASH || get32(f->h + 100) != 0)
		return idx_bad(f, "unknown method in the header");
	llm_dedup_params fp;
	get_params(f->h, &fp);
	if (want) {
		llm_buf w = LLM_BUF_INIT, a = LLM_BUF_INIT, b = LLM_BUF_INIT;
		put_params(&w, want);
		int same = get32(f->h + 12) == (uint32_t)want->method && !memcmp(f->h + 16, w.p, 48);
		if (!same) {
			llm_dedup_params q = *want;
			q.verify = 0;
			llm_dedup_params_describe(&fp, &a);
			llm_dedup_params_describe(&q, &b);
			rc = llm_fail(LLM_EINVAL, "%s: index was built with other dedup parameters (%s), "
			              "this run has %s", path, a.p, b.p);
		}
		llm_buf_release(&w);
		llm_buf_release(&a);
		llm_buf_release(&b);
		if (rc)
			return rc;
	}
	f->nclusters = get64(f->h + 64);
	f->nentries = get64(f->h + 72);
	f->idb = get64(f->h + 80);
	f->rb = get64(f->h + 88);
	f->nruns = get32(f->h + 96);
	f->esz = entry_size((llm_dedup_method)get32(f->h + 12));
	uint64_t body = f->len - IDX_HEADER - 8;
	if (f->rb > body || f->idb > body - f->rb || f->nentries > (body - f->rb - f->idb) / f->esz ||
	    f->rb + f->idb + f->nentries * f->esz != body || f->nclusters > f->idb / CLUSTER_FIXED ||
	    f->nruns > f->rb / RUN_FIXED || f->nruns >= MAX_RUNS)
		return idx_bad(f, "index sizes do not match the file length");
	f->runbuf = llm_malloc((size_t)f->rb + 1);
	if (llm_reader_read_exact(f->r, f->runbuf, (size_t)f->rb))
		return idx_bad(f, "truncated");
	return parse_runs(f);
}

/* The next cluster (number c): its size, members of the last run and id. */
static int idx_cluster(idx_file *f, uint64_t c, uint64_t *left, uint64_t *size, uint64_t *last,
                       llm_buf *id)
{
	char fix[CLUSTER_FIXED];
	if (*left < CLUSTER_FIXED || llm_reader_read_exact(f->r, fix, CLUSTER_FIXED) ||
	    *left - CLUSTER_FIXED < get32(fix + 16))
		return llm_fail(LLM_EFORMAT, "%s: cluster %llu runs past its section", f->path,
		                (unsigned long long)c);
	uint32_t l = get32(fix + 16);
	*size = get64(fix);
	*last = get64(fix + 8);
	if (*size == 0 || *last > *size)
		return llm_fail(LLM_EFORMAT, "%s: cluster %llu has size %llu with %llu new", f->path,
		                (unsigned long long)c, (unsigned long long)*size,
		                (unsigned long long)*last);
	llm_buf_reset(id);
	llm_buf_grow(id, l);
	if (llm_reader_read_exact(f->r, id->p, l))
		return idx_bad(f, "truncated");
	id->len = l;
	id->p[l] = 0;
	*left -= CLUSTER_FIXED + (uint64_t)l;
	return LLM_OK;
}

/* The run (1-based) that made cluster c. */
static unsigned cluster_run(const idx_file *f, uint64_t c)
{
	unsigned lo = 0, hi = f->nruns; /* first run whose cend > c */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (f->runs[mid].cend > c)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo + 1;
}

/* Input k of a run record (k < ninputs, in order): walk from *pos. */
static const char *run_input(const run_rec *r, size_t *pos, uint32_t *len)
{
	const char *p = r->inputs + *pos;
	*len = get32(p);
	*pos += 4 + (size_t)*len;
	return p + 4;
}

static int is_input(const llm_dedup *d, const keytab *t, const char *name, uint32_t len)
{
	uint64_t i = kt_get(t, llm_hash64(name, len, 0));
	return i != NONE && strlen(d->inputs[i]) == len && !memcmp(d->inputs[i], name, len);
}

/* Whether this run repeats the index's last run; LLM_EINVAL when it overlaps another run or
 * leaves out an input of the last one. */
static int find_rerun(llm_dedup *d, const idx_file *f, int *replace)
{
	*replace = 0;
	if (!d->ninputs || !f->nruns)
		return LLM_OK;
	keytab t = { 0 };
	for (size_t i = 0; i < d->ninputs; i++)
		kt_insert(&t, llm_hash64(d->inputs[i], strlen(d->inputs[i]), 0), i);
	int rc = LLM_OK;
	for (unsigned i = 0; i < f->nruns && !rc; i++) {
		const run_rec *r = &f->runs[i];
		size_t pos = 0, hits = 0;
		const char *missing = NULL, *hit = NULL;
		uint32_t mlen = 0, hlen = 0;
		for (uint32_t k = 0; k < r->ninputs; k++) {
			uint32_t len;
			const char *name = run_input(r, &pos, &len);
			if (!is_input(d, &t, name, len)) {
				if (!missing)
					missing = name, mlen = len;
			} else if (!hits++) {
				hit = name, hlen = len;
			}
		}
		if (!hits)
			continue;
		if (i + 1 < f->nruns) {
			rc = llm_fail(LLM_EINVAL, "%s: input '%.*s' was deduplicated by run %u of %u; "
			              "only the last run can be repeated", f->path, (int)hlen, hit, i + 1,
			              f->nruns);
		} else if (missing) {
			rc = llm_fail(LLM_EINVAL, "%s: this run repeats run %u but without its input "
			              "'%.*s'; repeat it with all of its inputs", f->path, i + 1,
			              (int)mlen, missing);
		} else {
			*replace = 1;
		}
	}
	kt_release(&t);
	return rc;
}

void llm_dedup_set_run(llm_dedup *d, const char *const *inputs, size_t ninputs, const char *cmd)
{
	for (size_t i = 0; i < d->ninputs; i++)
		free(d->inputs[i]);
	free(d->inputs);
	free(d->cmd);
	d->inputs = llm_calloc(ninputs ? ninputs : 1, sizeof *d->inputs);
	d->ninputs = 0;
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i])
			d->inputs[d->ninputs++] = llm_strdup(inputs[i]);
	d->cmd = llm_strdup(cmd ? cmd : "");
}

unsigned llm_dedup_replaces(const llm_dedup *d) { return d->replaces; }

int llm_dedup_load_index(llm_dedup *d, const char *path)
{
	if (d->n)
		return llm_fail(LLM_EINTERNAL, "%s: index loaded into a used engine", path);
	if (d->p.verify > 0)
		return llm_fail(LLM_EUNSUPPORTED, "%s: an index cannot be combined with verification",
		                path);
	/* The whole file is checked before anything is loaded; then it is read as a stream. */
	idx_file f;
	llm_buf id = LLM_BUF_INIT;
	int replace = 0, rc = idx_open(&f, path, &d->p);
	if (!rc)
		rc = find_rerun(d, &f, &replace);
	if (rc)
		goto out;
	/* A rerun leaves out the last run: its clusters (the last ones), its entries, and the
	 * members it added to earlier clusters. */
	unsigned keep = replace ? f.nruns - 1 : f.nruns;
	uint64_t kept = keep ? f.runs[keep - 1].cend : 0, left = f.idb;
	d->wsize = llm_malloc((kept ? kept : 1) * sizeof *d->wsize);
	for (uint64_t c = 0; c < f.nclusters; c++) {
		uint64_t size, last;
		if ((rc = idx_cluster(&f, c, &left, &size, &last, &id)))
			goto out;
		if (c >= kept)
			continue;
		if (replace && size == last) {
			rc = llm_fail(LLM_EFORMAT, "%s: cluster %llu of an earlier run is all new",
			              path, (unsigned long long)c);
			goto out;
		}
		uint64_t v = new_node(d);
		d->wsize[v] = replace ? size - last : size;
		llm_dedup_set_id(d, v, id.p, id.len);
	}
	if (left) {
		rc = idx_bad(&f, "cluster section has trailing bytes");
		goto out;
	}
	for (uint64_t e = 0; e < f.nentries; e++) {
		char p[24];
		if (llm_reader_read_exact(f.r, p, f.esz)) {
			rc = idx_bad(&f, "truncated");
			goto out;
		}
		uint64_t key = get64(p), tv = get64(p + f.esz - 8), c = node_of(tv);
		unsigned run = run_of(tv);
		if (c >= f.nclusters || run < 1 || run > f.nruns || cluster_run(&f, c) > run) {
			rc = llm_fail(LLM_EFORMAT, "%s: entry %llu names cluster %llu of %llu in run %u "
			              "of %u", path, (unsigned long long)e, (unsigned long long)c,
			              (unsigned long long)f.nclusters, run, f.nruns);
			goto out;
		}
		if (run > keep)
			continue;
		maybe_spill(d);
		if (d->p.method != LLM_DEDUP_SIMHASH)
			add_entry(d, tv, key, get64(p + 8));
		else if (d->recs)
			record_simhash(d, tv, key);
		else
			add_member(d, key, tv);
	}
	d->base = d->n;
	d->run = keep + 1;
	d->replaces = replace ? f.nruns : 0;
	d->nruns = keep;
	d->runend = llm_malloc((keep ? keep : 1) * sizeof *d->runend);
	llm_buf_reset(&d->runs);
	for (unsigned i = 0; i < keep; i++) {
		d->runend[i] = f.runs[i].cend;
		llm_buf_add(&d->runs, f.runs[i].rec, f.runs[i].len);
	}
	rc = d->err;
out:
	llm_buf_release(&id);
	idx_close(&f);
	return rc;
}

/*
 * The entries of the index, sorted: a group of records with equal (a, b) is one entry
 * {a, b, its first node's cluster}. Records mode has them already; tables are sorted here.
 */
static llm_xsort *index_entries(llm_dedup *d, int *own)
{
	*own = !d->recs;
	if (d->recs)
		return d->p.method == LLM_DEDUP_SIMHASH ? d->fps : d->recs;
	llm_xsort *x = llm_xsort_new(d->budget, d->tmpdir);
	int exact = d->p.method == LLM_DEDUP_EXACT;
	if (d->p.method == LLM_DEDUP_SIMHASH)
		for (uint64_t m = 0; m < d->nm; m++)
			put(x, d, d->mfp[m], 0, d->mnode[m]);
	else
		for (size_t i = 0; i < d->buckets.cap; i++) {
			const slot *s = &d->buckets.s[i];
			if (s->val != NONE)
				put(x, d, s->key, exact ? d->khi[node_of(s->val)] : 0, s->val);
		}
	return x;
}

/* Each entry in order: calls fn with (a, b, first node). */
static int each_entry(llm_xsort *x, void (*fn)(void *, const llm_rec3 *), void *ctx)
{
	int rc = llm_xsort_rewind(x);
	llm_rec3 r, last = { 0, 0, NONE };
	while (!rc && (rc = llm_xsort_next(x, &r)) == LLM_OK) {
		if (last.c != NONE && r.a == last.a && r.b == last.b)
			continue;
		last = r;
		fn(ctx, &r);
	}
	return rc == LLM_EOF ? LLM_OK : rc;
}

typedef struct {
	llm_dedup *d;
	uint64_t *named, *rank; /* bitset of named roots, clusters before each word */
	uint64_t nentries;
	llm_writer *w;
	llm_hasher *h;
	llm_buf out;
	int rc;
} saver;

static void mark_entry(void *ctx, const llm_rec3 *r)
{
	saver *s = ctx;
	uint64_t root = s->d->parent[node_of(r->c)];
	s->named[root / 64] |= 1ull << (root % 64);
	s->nentries++;
}

static int is_named(const saver *s, uint64_t v) { return (s->named[v / 64] >> (v % 64)) & 1; }

static uint64_t cluster_of(const saver *s, uint64_t root)
{
	uint64_t below = s->named[root / 64] & ((1ull << (root % 64)) - 1);
	return s->rank[root / 64] + (uint64_t)__builtin_popcountll(below);
}

/* Hash and write what s->out holds once it is large. */
static void save_flush(saver *s, int force)
{
	if (s->out.len < (1u << 16) && !force)
		return;
	llm_hasher_add(s->h, s->out.p, s->out.len);
	if (!s->rc)
		s->rc = llm_writer_write(s->w, s->out.p, s->out.len);
	llm_buf_reset(&s->out);
}

static void write_entry(void *ctx, const llm_rec3 *r)
{
	saver *s = ctx;
	put64(&s->out, r->a);
	if (s->d->p.method == LLM_DEDUP_EXACT)
		put64(&s->out, r->b);
	put64(&s->out, tagged(cluster_of(s, s->d->parent[node_of(r->c)]), run_of(r->c)));
	save_flush(s, 0);
}

/* The run (1-based) whose cluster a root is. */
static unsigned root_run(const llm_dedup *d, uint64_t root)
{
	if (root >= d->base)
		return d->run;
	unsigned i = 0;
	while (i + 1 < d->nruns && d->runend[i] <= root)
		i++;
	return i + 1;
}

/* Bytes of this run's record. */
static uint64_t this_run_bytes(const llm_dedup *d)
{
	uint64_t b = RUN_FIXED + strlen(d->cmd ? d->cmd : "");
	for (size_t i = 0; i < d->ninputs; i++)
		b += 4 + strlen(d->inputs[i]);
	return b;
}

/* The clusters' numbers: rank[i], the named roots before word i of the bitset; returns their
 * count. */
static uint64_t rank_clusters(saver *s, uint64_t words)
{
	uint64_t nc = 0;
	for (uint64_t i = 0; i < words; i++) {
		s->rank[i] = nc;
		nc += (uint64_t)__builtin_popcountll(s->named[i]);
	}
	return nc;
}

/* The bytes of the kept clusters' ids, and per run the clusters it holds, from the id file;
 * LLM_EINTERNAL when a kept cluster has no id. */
static int size_clusters(saver *s, uint64_t nc, uint64_t *per_run, uint64_t *idb, llm_buf *id)
{
	llm_dedup *d = s->d;
	uint64_t found = 0, node;
	int rc = id_rewind(d);
	while (!rc && (rc = id_next(d, &node, id)) == 1) {
		if (node < d->n && is_named(s, node)) {
			*idb += CLUSTER_FIXED + id->len, found++;
			per_run[root_run(d, node)]++;
		}
		rc = LLM_OK;
	}
	if (!rc && found != nc)
		rc = llm_fail(LLM_EINTERNAL, "%llu of %llu survivors have no id for the index",
		              (unsigned long long)(nc - found), (unsigned long long)nc);
	return rc;
}

static void put_header(saver *s, uint64_t nc, uint64_t idb)
{
	const llm_dedup *d = s->d;
	llm_buf_add(&s->out, IDX_MAGIC, 8);
	put32(&s->out, IDX_VERSION);
	put32(&s->out, (uint32_t)d->p.method);
	put_params(&s->out, &d->p);
	put64(&s->out, nc);
	put64(&s->out, s->nentries);
	put64(&s->out, idb);
	put64(&s->out, d->runs.len + this_run_bytes(d));
	put32(&s->out, d->nruns + 1);
	put32(&s->out, 0);
}

/* The kept runs as loaded, with the clusters they hold now (merges move some), then this
 * run: its documents, clusters, inputs and command line. */
static void put_runs(saver *s, const uint64_t *per_run)
{
	const llm_dedup *d = s->d;
	for (size_t off = 0, i = 0; off < d->runs.len; i++) {
		const char *r = d->runs.p + off;
		size_t pos = RUN_FIXED + get32(r + 20);
		for (uint32_t k = 0; k < get32(r + 16); k++)
			pos += 4 + get32(r + pos);
		put64(&s->out, get64(r));
		put64(&s->out, per_run[i + 1]);
		llm_buf_add(&s->out, r + 16, pos - 16);
		off += pos;
	}
	put64(&s->out, d->docs);
	put64(&s->out, per_run[d->run]);
	put32(&s->out, (uint32_t)d->ninputs);
	put32(&s->out, (uint32_t)strlen(d->cmd ? d->cmd : ""));
	llm_buf_adds(&s->out, d->cmd ? d->cmd : "");
	for (size_t i = 0; i < d->ninputs; i++) {
		put32(&s->out, (uint32_t)strlen(d->inputs[i]));
		llm_buf_adds(&s->out, d->inputs[i]);
	}
}

/* Every kept cluster: its size, its new members, its id. */
static int put_clusters(saver *s, llm_buf *id)
{
	llm_dedup *d = s->d;
	uint64_t node;
	int rc = id_rewind(d);
	while (!rc && (rc = id_next(d, &node, id)) == 1) {
		if (node < d->n && is_named(s, node)) {
			put64(&s->out, llm_dedup_dup_count(d, node));
			put64(&s->out, new_members(d, node));
			put32(&s->out, (uint32_t)id->len);
			llm_buf_add(&s->out, id->p, id->len);
			save_flush(s, 0);
		}
		rc = LLM_OK;
	}
	return rc;
}

/* The entries after the clusters, the checksum last; the file published or, on an error,
 * aborted. */
static int put_entries_and_close(saver *s, llm_xsort *x, int rc)
{
	if (!rc)
		rc = each_entry(x, write_entry, s);
	save_flush(s, 1);
	put64(&s->out, llm_hasher_digest(s->h));
	if (!rc && !s->rc)
		s->rc = llm_writer_write(s->w, s->out.p, s->out.len);
	rc = rc ? rc : s->rc;
	if (rc)
		llm_writer_abort(s->w);
	else
		rc = llm_writer_close(s->w);
	return rc;
}

int llm_dedup_save_index(llm_dedup *d, const char *path)
{
	if (!d->finished)
		llm_dedup_finish(d);
	if (d->err)
		return d->err;
	/* Clusters are numbered by survivor in node order and entries sorted by key, so the
	 * file depends only on the clusters, buckets and runs, not on how the input was split
	 * into sorted runs. Only clusters that some entry names are kept (a document without
	 * shingles has nothing to be matched by). */
	int own;
	llm_xsort *x = index_entries(d, &own);
	uint64_t words = d->n / 64 + 1;
	saver s = { .d = d, .named = llm_calloc(words, 8), .rank = llm_malloc(words * 8) };
	uint64_t *per_run = llm_calloc(d->run + 1, sizeof *per_run);
	llm_buf id = LLM_BUF_INIT;
	int rc = d->err ? d->err : each_entry(x, mark_entry, &s);
	uint64_t nc = rank_clusters(&s, words), idb = 0;
	if (!rc)
		rc = size_clusters(&s, nc, per_run, &idb, &id);
	if (!rc)
		rc = llm_writer_open(&s.w, path);
	if (!rc) {
		s.h = llm_hasher_new(0);
		put_header(&s, nc, idb);
		put_runs(&s, per_run);
		rc = put_entries_and_close(&s, x, put_clusters(&s, &id));
		llm_hasher_free(s.h);
	}
	if (d->idf && fseek(d->idf, 0, SEEK_END) && !rc)
		rc = llm_fail(LLM_EIO, "temporary id file: %s", strerror(errno));
	if (own)
		llm_xsort_free(x);
	free(s.named);
	free(s.rank);
	free(per_run);
	llm_buf_release(&s.out);
	llm_buf_release(&id);
	return rc;
}

/* ---- reading an index without loading it ---- */

int llm_dedup_index_info_read(const char *path, llm_dedup_index_info *info, llm_buf *out)
{
	memset(info, 0, sizeof *info);
	idx_file f;
	llm_buf id = LLM_BUF_INIT;
	int rc = idx_open(&f, path, NULL);
	if (rc)
		goto out;
	get_params(f.h, &info->p);
	info->version = IDX_VERSION;
	info->bytes = f.len;
	info->clusters = f.nclusters;
	info->entries = f.nentries;
	info->runs = f.nruns;
	uint64_t left = f.idb;
	for (uint64_t c = 0; c < f.nclusters && !rc; c++) {
		uint64_t size, last;
		if (!(rc = idx_cluster(&f, c, &left, &size, &last, &id)))
			info->dup_clusters += size > 1;
	}
	for (unsigned i = 0; i < f.nruns && !rc; i++) {
		const run_rec *r = &f.runs[i];
		info->documents += r->docs;
		if (!out)
			continue;
		llm_buf_addf(out, "run %u: %llu documents, %llu new clusters: %.*s\n", i + 1,
		             (unsigned long long)r->docs, (unsigned long long)r->clusters,
		             (int)r->cmdlen, r->cmd);
		size_t pos = 0;
		for (uint32_t k = 0; k < r->ninputs; k++) {
			uint32_t len;
			const char *name = run_input(r, &pos, &len);
			llm_buf_addf(out, "  input %.*s\n", (int)len, name);
		}
	}
out:
	llm_buf_release(&id);
	idx_close(&f);
	return rc;
}

int llm_dedup_index_clusters(const char *path, llm_dedup_cluster_fn fn, void *ctx)
{
	idx_file f;
	llm_buf id = LLM_BUF_INIT;
	int rc = idx_open(&f, path, NULL);
	uint64_t left = f.idb;
	for (uint64_t c = 0; !rc && c < f.nclusters; c++) {
		uint64_t size, last;
		if (!(rc = idx_cluster(&f, c, &left, &size, &last, &id)))
			fn(ctx, id.p, id.len, size, cluster_run(&f, c));
	}
	llm_buf_release(&id);
	idx_close(&f);
	return rc;
}

/* ---- line dedup ---- */

/*
 * Counts are exact in a table {line key -> count} until the table would grow past the budget;
 * then they move to a counting Bloom filter of `budget` one-byte cells: a line's K cells are
 * picked by double hashing of its key, an occurrence raises only the cells at the line's
 * minimum (conservative update), and its count is that minimum. The minimum never falls
 * below the true count, so no frequent line is missed; it exceeds the true count only when
 * every one of the K cells was also raised by other lines, with probability at most (X/m)^K
 * when X of the m cells are in use: the stated false-positive rate. The number of distinct
 * lines is then estimated as -(m/K) ln(1 - X/m).
 */
#define BLOOM_K 4

struct llm_linededup {
	llm_norm_level norm;
	unsigned max_count;
	size_t budget;
	keytab counts;          /* exact counts, while no filter */
	unsigned char *cells;   /* the filter */
	uint64_t ncells, distinct; /* distinct: exact counts only */
	llm_buf tmp;
};

llm_linededup *llm_linededup_new(llm_norm_level norm, unsigned max_count, size_t budget)
{
	llm_linededup *ld = llm_calloc(1, sizeof *ld);
	ld->norm = norm;
	ld->max_count = max_count;
	ld->budget = budget < (1u << 16) ? 1u << 16 : budget;
	llm_buf_init(&ld->tmp);
	return ld;
}

void llm_linededup_free(llm_linededup *ld)
{
	if (!ld)
		return;
	kt_release(&ld->counts);
	free(ld->cells);
	llm_buf_release(&ld->tmp);
	free(ld);
}

/* Key of one line, or 0 with *empty set when it normalises to nothing. */
static uint64_t line_key(llm_linededup *ld, const char *s, size_t n, int *empty)
{
	llm_buf_reset(&ld->tmp);
	llm_norm_text(s, n, ld->norm, &ld->tmp);
	/* Even without normalisation a blank line is not content worth counting. */
	size_t k = 0;
	while (k < ld->tmp.len && (ld->tmp.p[k] == ' ' || ld->tmp.p[k] == '\t' || ld->tmp.p[k] == '\r'))
		k++;
	*empty = k == ld->tmp.len;
	return *empty ? 0 : llm_hash64(ld->tmp.p, ld->tmp.len, 0x6c696e65);
}

/* A line's count: the minimum of its cells, whose positions go to at. */
static unsigned bloom_min(const llm_linededup *ld, uint64_t key, uint64_t at[BLOOM_K])
{
	llm_bloom_cells(key, ld->ncells, BLOOM_K, at);
	unsigned m = 255;
	for (unsigned i = 0; i < BLOOM_K; i++)
		if (ld->cells[at[i]] < m)
			m = ld->cells[at[i]];
	return m;
}

static unsigned bloom_get(const llm_linededup *ld, uint64_t key)
{
	uint64_t at[BLOOM_K];
	return bloom_min(ld, key, at);
}

/* Conservative update: only the cells at the minimum rise, to the new count. */
static void bloom_add(llm_linededup *ld, uint64_t key, unsigned count)
{
	uint64_t at[BLOOM_K];
	unsigned m = bloom_min(ld, key, at), v = m + count > 255 ? 255 : m + count;
	for (unsigned i = 0; i < BLOOM_K; i++)
		if (ld->cells[at[i]] < v)
			ld->cells[at[i]] = (unsigned char)v;
}

/* The table would grow past the budget: its counts move into the filter. */
static void to_bloom(llm_linededup *ld)
{
	ld->ncells = ld->budget;
	ld->cells = llm_calloc(ld->ncells, 1);
	for (size_t i = 0; i < ld->counts.cap; i++)
		if (ld->counts.s[i].val != NONE)
			bloom_add(ld, ld->counts.s[i].key, (unsigned)ld->counts.s[i].val);
	kt_release(&ld->counts);
	llm_debug("line counts reached %zu bytes: counting Bloom filter from here", ld->budget);
}

static void count_line(llm_linededup *ld, uint64_t key)
{
	if (ld->cells) {
		bloom_add(ld, key, 1);
		return;
	}
	keytab *t = &ld->counts;
	if (t->cap)
		for (size_t p = kt_start(t, key); t->s[p].val != NONE; p = (p + 1) & (t->cap - 1))
			if (t->s[p].key == key) {
				if (t->s[p].val < 255)
					t->s[p].val++;
				return;
			}
	if (4 * (t->n + 1) > 3 * t->cap && 2 * t->cap * sizeof(slot) > ld->budget) {
		to_bloom(ld);
		bloom_add(ld, key, 1);
		return;
	}
	kt_insert(t, key, 1);
	ld->distinct++;
}

void llm_linededup_count(llm_linededup *ld, const char *text, size_t n)
{
	for (size_t i = 0; i <= n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - text) : n;
		int empty;
		uint64_t key = line_key(ld, text + i, e - i, &empty);
		if (!empty)
			count_line(ld, key);
		if (!nl)
			break;
		i = e + 1;
	}
}

size_t llm_linededup_filter(llm_linededup *ld, const char *text, size_t n, llm_buf *out)
{
	size_t dropped = 0;
	int first = 1;
	for (size_t i = 0; i <= n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - text) : n;
		int empty;
		uint64_t key = line_key(ld, text + i, e - i, &empty);
		uint64_t c = empty ? 0 : ld->cells ? bloom_get(ld, key) : kt_get(&ld->counts, key);
		if (!empty && c != NONE && c > ld->max_count) {
			dropped++;
		} else {
			if (!first)
				llm_buf_addc(out, '\n');
			llm_buf_add(out, text + i, e - i);
			first = 0;
		}
		if (!nl)
			break;
		i = e + 1;
	}
	return dropped;
}

/* Fraction of the filter's cells in use. */
static double bloom_fill(const llm_linededup *ld)
{
	uint64_t used = 0;
	for (uint64_t i = 0; i < ld->ncells; i++)
		used += ld->cells[i] != 0;
	return (double)used / (double)ld->ncells;
}

uint64_t llm_linededup_distinct(const llm_linededup *ld)
{
	if (!ld->cells)
		return ld->distinct;
	double f = bloom_fill(ld);
	return f >= 1 ? UINT64_MAX : (uint64_t)llround(-(double)ld->ncells / BLOOM_K * log(1 - f));
}

size_t llm_linededup_memory(const llm_linededup *ld)
{
	return ld->counts.cap * sizeof(slot) + ld->ncells;
}

double llm_linededup_fp_rate(const llm_linededup *ld)
{
	if (!ld->cells)
		return 0;
	return pow(bloom_fill(ld), BLOOM_K);
}
