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

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hash.h"
#include "io.h"

#define NONE UINT64_MAX

/* ---- bucket table ---- */

typedef struct {
	uint64_t key, val;
} slot;

typedef struct {
	slot *s;
	size_t cap, n; /* cap is a power of two */
} keytab;

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

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
		size_t p = mix64(old[i].key) & (cap - 1);
		while (t->s[p].val != NONE)
			p = (p + 1) & (cap - 1);
		t->s[p] = old[i];
	}
	free(old);
}

/* Position where a search for key starts; a search visits slots until an empty one. */
static size_t kt_start(const keytab *t, uint64_t key) { return mix64(key) & (t->cap - 1); }

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

static const char *units_name(llm_units u)
{
	return u == LLM_UNITS_WORD ? "word" : u == LLM_UNITS_CHAR ? "char" : "auto";
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

struct llm_dedup {
	llm_dedup_params p;
	llm_simhash_tables tabs; /* simhash */
	uint64_t *parent;
	uint64_t n, cap, base;
	keytab buckets;
	uint64_t *khi;            /* exact: per node, high half of its key (NONE-free) */
	/* simhash members: one per distinct fingerprint */
	uint64_t *mfp, *mnode, *mnext; /* mnext[m * ntables + t] */
	uint64_t nm, mcap;
	keytab fptab;             /* fingerprint -> member */
	/* verification sets */
	uint64_t *setoff;
	uint32_t *setlen, *sets;
	uint64_t nsets, setscap;
	/* ids */
	keytab idtab;             /* node -> offset in ids */
	llm_buf ids;              /* u32 length + bytes, back to back */
	unsigned char *hasdup;    /* bitset, after finish */
	int finished;
	uint64_t candidates, joins;
};

int llm_dedup_new(llm_dedup **out, const llm_dedup_params *p)
{
	*out = NULL;
	int rc = llm_dedup_params_check(p);
	if (rc)
		return rc;
	llm_dedup *d = llm_calloc(1, sizeof *d);
	d->p = *p;
	if (p->method == LLM_DEDUP_SIMHASH)
		llm_simhash_tables_init(&d->tabs, p->blocks, p->hamming);
	llm_buf_init(&d->ids);
	*out = d;
	return LLM_OK;
}

void llm_dedup_free(llm_dedup *d)
{
	if (!d)
		return;
	free(d->parent);
	kt_release(&d->buckets);
	free(d->khi);
	free(d->mfp);
	free(d->mnode);
	free(d->mnext);
	kt_release(&d->fptab);
	free(d->setoff);
	free(d->setlen);
	free(d->sets);
	kt_release(&d->idtab);
	llm_buf_release(&d->ids);
	free(d->hasdup);
	free(d);
}

uint64_t llm_dedup_nodes(const llm_dedup *d) { return d->n; }
uint64_t llm_dedup_base(const llm_dedup *d) { return d->base; }
uint64_t llm_dedup_candidates(const llm_dedup *d) { return d->candidates; }
uint64_t llm_dedup_joins(const llm_dedup *d) { return d->joins; }

size_t llm_dedup_memory(const llm_dedup *d)
{
	size_t m = d->cap * 8 + d->buckets.cap * sizeof(slot) + d->fptab.cap * sizeof(slot) +
	           d->idtab.cap * sizeof(slot) + d->ids.cap;
	if (d->khi)
		m += d->cap * 8;
	m += d->mcap * 16 + d->mcap * d->tabs.ntables * 8;
	if (d->setoff)
		m += d->cap * 12 + d->setscap * 4;
	return m;
}

static uint64_t new_node(llm_dedup *d)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 4096;
		d->parent = llm_realloc(d->parent, d->cap * sizeof *d->parent);
		if (d->p.method == LLM_DEDUP_EXACT)
			d->khi = llm_realloc(d->khi, d->cap * sizeof *d->khi);
		if (d->p.verify > 0) {
			d->setoff = llm_realloc(d->setoff, d->cap * sizeof *d->setoff);
			d->setlen = llm_realloc(d->setlen, d->cap * sizeof *d->setlen);
		}
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

static void join(llm_dedup *d, uint64_t a, uint64_t b)
{
	a = llm_dedup_root(d, a);
	b = llm_dedup_root(d, b);
	if (a == b)
		return;
	if (a < b)
		d->parent[b] = a;
	else
		d->parent[a] = b;
	d->joins++;
}

static int verified(llm_dedup *d, uint64_t a, uint64_t b)
{
	const uint32_t *sa = d->sets + d->setoff[a], *sb = d->sets + d->setoff[b];
	return llm_jaccard_sorted32(sa, d->setlen[a], sb, d->setlen[b]) >= d->p.verify;
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
		/* Bucket key: the table's bits, tagged with the table number; a rare collision
		 * between tables only costs one distance check. */
		uint64_t key = (fp & d->tabs.mask[t]) ^ ((uint64_t)(t + 1) * 0x9e3779b97f4a7c15ull);
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

static void add_simhash(llm_dedup *d, uint64_t v, uint64_t fp)
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
		uint64_t key = (fp & d->tabs.mask[t]) ^ ((uint64_t)(t + 1) * 0x9e3779b97f4a7c15ull);
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

static void add_keys(llm_dedup *d, uint64_t v, const llm_dedup_sig *sig)
{
	int exact = d->p.method == LLM_DEDUP_EXACT;
	for (unsigned j = 0; j < sig->nkeys; j++) {
		uint64_t key = sig->keys[j], first = NONE;
		if (d->buckets.cap) {
			for (size_t p = kt_start(&d->buckets, key); d->buckets.s[p].val != NONE;
			     p = (p + 1) & (d->buckets.cap - 1)) {
				const slot *s = &d->buckets.s[p];
				if (s->key == key && (!exact || d->khi[s->val] == sig->key_hi)) {
					first = s->val;
					break;
				}
			}
		}
		if (first == NONE) {
			kt_insert(&d->buckets, key, v);
			continue;
		}
		d->candidates++;
		if (d->p.verify > 0 && first >= d->base && !verified(d, v, first))
			continue;
		join(d, v, first);
	}
}

uint64_t llm_dedup_add(llm_dedup *d, const llm_dedup_sig *sig)
{
	uint64_t v = new_node(d);
	if (!sig || !sig->has)
		return v;
	if (d->p.method == LLM_DEDUP_EXACT)
		d->khi[v] = sig->key_hi;
	if (d->p.verify > 0) {
		if (d->nsets + sig->nset > d->setscap) {
			d->setscap = 2 * (d->nsets + sig->nset) + 4096;
			d->sets = llm_realloc(d->sets, d->setscap * sizeof *d->sets);
		}
		memcpy(d->sets + d->nsets, sig->set, sig->nset * sizeof *sig->set);
		d->setoff[v] = d->nsets;
		d->setlen[v] = sig->nset;
		d->nsets += sig->nset;
	}
	if (d->p.method == LLM_DEDUP_SIMHASH)
		add_simhash(d, v, sig->fp);
	else
		add_keys(d, v, sig);
	return v;
}

void llm_dedup_finish(llm_dedup *d)
{
	free(d->hasdup);
	d->hasdup = llm_calloc(d->n / 8 + 1, 1);
	for (uint64_t v = 0; v < d->n; v++) {
		uint64_t r = llm_dedup_root(d, v);
		d->parent[v] = r;
		if (r != v)
			d->hasdup[r / 8] |= (unsigned char)(1u << (r % 8));
	}
	d->finished = 1;
}

int llm_dedup_has_dups(const llm_dedup *d, uint64_t root)
{
	return d->hasdup && root < d->n && (d->hasdup[root / 8] >> (root % 8)) & 1;
}

void llm_dedup_set_id(llm_dedup *d, uint64_t node, const char *id, size_t len)
{
	if (kt_get(&d->idtab, node) != NONE)
		return;
	kt_insert(&d->idtab, node, d->ids.len);
	uint32_t l = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	llm_buf_add(&d->ids, &l, 4);
	llm_buf_add(&d->ids, id, l);
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

/* ---- index file ---- */

#define IDX_MAGIC "LLMDIDX1"
#define IDX_VERSION 1u
#define IDX_HEADER 88

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

static unsigned entry_size(llm_dedup_method m) { return m == LLM_DEDUP_EXACT ? 24 : 16; }

int llm_dedup_load_index(llm_dedup *d, const char *path)
{
	if (d->n)
		return llm_fail(LLM_EINTERNAL, "%s: index loaded into a used engine", path);
	if (d->p.verify > 0)
		return llm_fail(LLM_EUNSUPPORTED, "%s: an index cannot be combined with verification",
		                path);
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc)
		return rc;
	rc = LLM_EFORMAT;
	llm_buf want = LLM_BUF_INIT;
	if (len < IDX_HEADER + 8 || memcmp(data, IDX_MAGIC, 8) != 0) {
		llm_fail(rc, "%s: not a dedup index (bad magic or too short)", path);
		goto out;
	}
	if (get32(data + 8) != IDX_VERSION) {
		llm_fail(rc, "%s: index version %u not supported (want %u)", path, get32(data + 8),
		         IDX_VERSION);
		goto out;
	}
	if (llm_hash64(data, len - 8, 0) != get64(data + len - 8)) {
		llm_fail(rc, "%s: index checksum mismatch (file damaged)", path);
		goto out;
	}
	put_params(&want, &d->p);
	if (get32(data + 12) != (uint32_t)d->p.method || memcmp(data + 16, want.p, 48) != 0) {
		rc = llm_fail(LLM_EINVAL, "%s: index was built with other dedup parameters", path);
		goto out;
	}
	uint64_t nclusters = get64(data + 64), nentries = get64(data + 72), idb = get64(data + 80);
	uint64_t esz = entry_size(d->p.method), body = len - IDX_HEADER - 8;
	if (idb > body || nentries > (body - idb) / esz || idb + nentries * esz != body ||
	    nclusters > idb / 4) {
		llm_fail(rc, "%s: index sizes do not match the file length", path);
		goto out;
	}
	const char *p = data + IDX_HEADER, *end = p + idb;
	for (uint64_t c = 0; c < nclusters; c++) {
		if (end - p < 4 || (uint64_t)(end - p - 4) < get32(p)) {
			llm_fail(rc, "%s: cluster id %llu runs past its section", path,
			         (unsigned long long)c);
			goto out;
		}
		uint64_t v = new_node(d);
		llm_dedup_set_id(d, v, p + 4, get32(p));
		p += 4 + get32(p);
	}
	if (p != end) {
		llm_fail(rc, "%s: cluster id section has trailing bytes", path);
		goto out;
	}
	for (uint64_t e = 0; e < nentries; e++, p += esz) {
		uint64_t key = get64(p), c = get64(p + esz - 8);
		if (c >= nclusters) {
			llm_fail(rc, "%s: entry %llu names cluster %llu of %llu", path,
			         (unsigned long long)e, (unsigned long long)c,
			         (unsigned long long)nclusters);
			goto out;
		}
		if (d->p.method == LLM_DEDUP_SIMHASH) {
			add_member(d, key, c);
		} else {
			if (d->p.method == LLM_DEDUP_EXACT)
				d->khi[c] = get64(p + 8);
			kt_insert(&d->buckets, key, c);
		}
	}
	d->base = d->n;
	rc = LLM_OK;
out:
	llm_buf_release(&want);
	free(data);
	return rc;
}

typedef struct {
	uint64_t key, hi, c;
} entry;

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->c < y->c ? -1 : x->c > y->c;
}

int llm_dedup_save_index(llm_dedup *d, const char *path)
{
	if (!d->finished)
		llm_dedup_finish(d);
	/* Entries first, pointing at roots; only clusters that some entry names are kept (a
	 * document without shingles has nothing to be matched by). Clusters are then numbered
	 * by root in node order and entries sorted by key, so the file depends only on the
	 * clusters and buckets, not on how the input was split into runs. */
	size_t ne = 0;
	entry *es;
	if (d->p.method == LLM_DEDUP_SIMHASH) {
		es = llm_malloc((d->nm ? d->nm : 1) * sizeof *es);
		for (uint64_t m = 0; m < d->nm; m++)
			es[ne++] = (entry){ d->mfp[m], 0, d->parent[d->mnode[m]] };
	} else {
		es = llm_malloc((d->buckets.n ? d->buckets.n : 1) * sizeof *es);
		for (size_t i = 0; i < d->buckets.cap; i++) {
			const slot *s = &d->buckets.s[i];
			if (s->val == NONE)
				continue;
			uint64_t hi = d->p.method == LLM_DEDUP_EXACT ? d->khi[s->val] : 0;
			es[ne++] = (entry){ s->key, hi, d->parent[s->val] };
		}
	}
	uint64_t *num = llm_malloc((d->n ? d->n : 1) * sizeof *num), nc = 0;
	for (uint64_t v = 0; v < d->n; v++)
		num[v] = NONE;
	for (size_t i = 0; i < ne; i++)
		num[es[i].c] = 0;
	llm_buf out = LLM_BUF_INIT;
	llm_buf_add(&out, IDX_MAGIC, 8);
	put32(&out, IDX_VERSION);
	put32(&out, (uint32_t)d->p.method);
	put_params(&out, &d->p);
	put64(&out, 0); /* nclusters, nentries, ids bytes: patched below */
	put64(&out, 0);
	put64(&out, 0);
	int rc = LLM_OK;
	for (uint64_t v = 0; v < d->n; v++) {
		if (num[v] == NONE)
			continue;
		size_t l;
		const char *id = llm_dedup_id(d, v, &l);
		if (!id) {
			rc = llm_fail(LLM_EINTERNAL, "survivor %llu has no id for the index",
			              (unsigned long long)v);
			goto out;
		}
		num[v] = nc++;
		put32(&out, (uint32_t)l);
		llm_buf_add(&out, id, l);
	}
	uint64_t idb = out.len - IDX_HEADER;
	for (size_t i = 0; i < ne; i++)
		es[i].c = num[es[i].c];
	qsort(es, ne, sizeof *es, cmp_entry);
	for (size_t i = 0; i < ne; i++) {
		put64(&out, es[i].key);
		if (d->p.method == LLM_DEDUP_EXACT)
			put64(&out, es[i].hi);
		put64(&out, es[i].c);
	}
	memcpy(out.p + 64, &nc, 8);
	uint64_t ne64 = ne;
	memcpy(out.p + 72, &ne64, 8);
	memcpy(out.p + 80, &idb, 8);
	put64(&out, llm_hash64(out.p, out.len, 0));
	rc = llm_write_file(path, out.p, out.len);
out:
	free(es);
	free(num);
	llm_buf_release(&out);
	return rc;
}

/* ---- line dedup ---- */

struct llm_linededup {
	llm_norm_level norm;
	unsigned max_count;
	keytab counts;
	llm_buf tmp;
};

llm_linededup *llm_linededup_new(llm_norm_level norm, unsigned max_count)
{
	llm_linededup *ld = llm_calloc(1, sizeof *ld);
	ld->norm = norm;
	ld->max_count = max_count;
	llm_buf_init(&ld->tmp);
	return ld;
}

void llm_linededup_free(llm_linededup *ld)
{
	if (!ld)
		return;
	kt_release(&ld->counts);
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

void llm_linededup_count(llm_linededup *ld, const char *text, size_t n)
{
	for (size_t i = 0; i <= n;) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - text) : n;
		int empty;
		uint64_t key = line_key(ld, text + i, e - i, &empty);
		if (!empty) {
			keytab *t = &ld->counts;
			size_t p = t->cap ? kt_start(t, key) : 0;
			int found = 0;
			if (t->cap)
				for (; t->s[p].val != NONE; p = (p + 1) & (t->cap - 1))
					if (t->s[p].key == key) {
						if (t->s[p].val < 255)
							t->s[p].val++;
						found = 1;
						break;
					}
			if (!found)
				kt_insert(t, key, 1);
		}
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
		uint64_t c = empty ? 0 : kt_get(&ld->counts, key);
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

uint64_t llm_linededup_distinct(const llm_linededup *ld) { return ld->counts.n; }
size_t llm_linededup_memory(const llm_linededup *ld) { return ld->counts.cap * sizeof(slot); }
