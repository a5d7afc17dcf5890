/*
 * test_dedup.c — union-find survivor rule, verification, saved index, stage files, lines.
 */
#include "unit.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "dedup/dedup.h"
#include "dedup/dedupdoc.h"
#include "dedup/rmlist.h"
#include "dedup/sigfile.h"

static char dir[64];

static const char *tmp(const char *name)
{
	static char p[4][128];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
	return p[i];
}

static llm_dedup_params mh_params(void)
{
	llm_dedup_params p;
	llm_dedup_params_default(&p, LLM_DEDUP_MINHASH);
	p.num_perm = 2;
	p.bands = 2;
	p.rows = 1;
	return p;
}

/* A signature with two band keys. */
static llm_dedup_sig two_keys(uint64_t *k, uint64_t a, uint64_t b)
{
	k[0] = a;
	k[1] = b;
	llm_dedup_sig s = { .has = 1, .nkeys = 2, .keys = k };
	return s;
}

/* A≈B≈C with A and C apart: whatever the order, one cluster, the first document survives. */
static void test_survivor(void)
{
	static const int orders[][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 2, 0, 1 }, { 1, 2, 0 } };
	static const uint64_t keys[3][2] = { { 10, 20 }, { 11, 20 }, { 11, 21 } }; /* A, B, C */
	llm_dedup_params p = mh_params();
	for (size_t o = 0; o < 4; o++) {
		llm_dedup *d;
		CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
		for (int i = 0; i < 3; i++) {
			uint64_t k[2];
			const uint64_t *src = keys[orders[o][i]];
			llm_dedup_sig s = two_keys(k, src[0], src[1]);
			CHECK_EQ_U64(llm_dedup_add(d, &s), (uint64_t)i);
		}
		llm_dedup_add(d, NULL); /* a record without signature stays alone */
		llm_dedup_finish(d);
		for (uint64_t v = 0; v < 3; v++)
			CHECK_EQ_U64(llm_dedup_root(d, v), 0);
		CHECK_EQ_U64(llm_dedup_root(d, 3), 3);
		CHECK(llm_dedup_has_dups(d, 0) && !llm_dedup_has_dups(d, 3));
		CHECK_EQ_U64(llm_dedup_joins(d), 2);
		llm_dedup_free(d);
	}
}

/* A, B, C in one cluster, D alone: A survives and is named, B and C name it, D stays 0;
 * a survivor is named without duplicates only when every id is wanted. */
static void test_decide(void)
{
	static const uint64_t keys[3][2] = { { 10, 20 }, { 11, 20 }, { 11, 21 } };
	llm_dedup_params p = mh_params();
	for (int name_all = 0; name_all <= 1; name_all++) {
		llm_dedup *d;
		CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
		for (int i = 0; i < 3; i++) {
			uint64_t k[2];
			llm_dedup_sig s = two_keys(k, keys[i][0], keys[i][1]);
			llm_dedup_add(d, &s);
		}
		llm_dedup_add(d, NULL);
		CHECK_EQ_INT(llm_dedup_finish(d), LLM_OK);
		const char *cid = NULL;
		size_t len = 0;
		CHECK_EQ_INT(llm_dedup_decide(d, 0, 1, "A", 1, name_all, &cid, &len), LLM_RMLIST_SURVIVOR);
		CHECK(len == 1 && cid[0] == 'A');
		for (uint64_t v = 1; v < 3; v++) {
			cid = NULL;
			CHECK_EQ_INT(llm_dedup_decide(d, v, 1, "B", 1, name_all, &cid, &len),
			             LLM_RMLIST_DUPLICATE);
			CHECK(len == 1 && cid[0] == 'A');
		}
		CHECK_EQ_INT(llm_dedup_decide(d, 3, 1, "D", 1, name_all, &cid, &len), 0);
		CHECK(!llm_dedup_id(d, 3, &len));
		llm_dedup_free(d);
	}
	/* A rejected first record names nothing: its duplicates have no survivor id. */
	llm_dedup *d;
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	for (int i = 0; i < 2; i++) {
		uint64_t k[2];
		llm_dedup_sig s = two_keys(k, 10, 20);
		llm_dedup_add(d, &s);
	}
	CHECK_EQ_INT(llm_dedup_finish(d), LLM_OK);
	const char *cid = NULL;
	size_t len = 0;
	CHECK_EQ_INT(llm_dedup_decide(d, 0, 0, "A", 1, 0, &cid, &len), LLM_RMLIST_SURVIVOR);
	CHECK(!cid);
	CHECK_EQ_INT(llm_dedup_decide(d, 1, 1, "B", 1, 0, &cid, &len), LLM_EINTERNAL);
	llm_dedup_free(d);
}

static void test_params_same(void)
{
	llm_dedup_params a = mh_params(), b = mh_params(), e;
	CHECK(llm_dedup_params_same(&a, &b));
	b.sh.seed++;
	CHECK(!llm_dedup_params_same(&a, &b));
	llm_dedup_params_default(&e, LLM_DEDUP_EXACT);
	CHECK(!llm_dedup_params_same(&a, &e));
}

static void test_exact_needs_both_halves(void)
{
	llm_dedup_params p;
	llm_dedup_params_default(&p, LLM_DEDUP_EXACT);
	llm_dedup *d;
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	uint64_t k = 5;
	llm_dedup_sig a = { .has = 1, .nkeys = 1, .keys = &k, .key_hi = 1 };
	llm_dedup_sig b = a, c = a;
	b.key_hi = 2; /* same low half, different text */
	llm_dedup_add(d, &a);
	llm_dedup_add(d, &b);
	llm_dedup_add(d, &c);
	llm_dedup_finish(d);
	CHECK_EQ_U64(llm_dedup_root(d, 1), 1);
	CHECK_EQ_U64(llm_dedup_root(d, 2), 0);
	llm_dedup_free(d);
	/* through the signer: normalisation decides */
	llm_signer *s;
	CHECK_EQ_INT(llm_signer_new(&s, &p), LLM_OK);
	llm_dedup_sig x, y;
	llm_signer_sign(s, "Hello, world", 12, &x);
	uint64_t xk = x.keys[0], xh = x.key_hi;
	llm_signer_sign(s, "hello world!", 12, &y);
	CHECK(y.keys[0] == xk && y.key_hi == xh);
	llm_signer_free(s);
}

static void test_verify(void)
{
	llm_dedup_params p = mh_params();
	p.verify = 0.5;
	llm_dedup *d;
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	uint32_t s0[] = { 1, 2, 3, 4 }, s1[] = { 1, 2, 3, 5 }, s2[] = { 7, 8, 9, 10 };
	uint64_t k[2];
	llm_dedup_sig a = two_keys(k, 1, 2);
	a.set = s0, a.nset = 4;
	llm_dedup_add(d, &a);
	llm_dedup_sig b = two_keys(k, 1, 3); /* candidate, Jaccard 3/5 */
	b.set = s1, b.nset = 4;
	llm_dedup_add(d, &b);
	llm_dedup_sig c = two_keys(k, 4, 2); /* candidate, Jaccard 0: a false positive */
	c.set = s2, c.nset = 4;
	llm_dedup_add(d, &c);
	llm_dedup_finish(d);
	CHECK_EQ_U64(llm_dedup_root(d, 1), 0);
	CHECK_EQ_U64(llm_dedup_root(d, 2), 2);
	CHECK_EQ_U64(llm_dedup_candidates(d), 2);
	llm_dedup_free(d);
}

static void test_simhash_engine(void)
{
	llm_dedup_params p;
	llm_dedup_params_default(&p, LLM_DEDUP_SIMHASH);
	llm_dedup *d;
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	uint64_t base = 0x0123456789abcdefull;
	uint64_t fps[] = { base, base ^ 0x7, base ^ 0xf0f0, base ^ 0x7 ^ 0x100, base };
	for (int i = 0; i < 5; i++) {
		llm_dedup_sig s = { .has = 1, .fp = fps[i] };
		llm_dedup_add(d, &s);
	}
	llm_dedup_finish(d);
	CHECK_EQ_U64(llm_dedup_root(d, 1), 0); /* distance 3 */
	CHECK_EQ_U64(llm_dedup_root(d, 2), 2); /* distance 8 */
	CHECK_EQ_U64(llm_dedup_root(d, 3), 0); /* distance 1 from node 1 */
	CHECK_EQ_U64(llm_dedup_root(d, 4), 0); /* equal */
	llm_dedup_free(d);
}

/* Random signatures with heavy collisions: keys from a small range (exact: two high halves),
 * fingerprints a few bits apart, sets from a small universe. */
static void random_sig(llm_rng *r, llm_dedup_method m, uint64_t *keys, uint32_t *set,
                       llm_dedup_sig *s)
{
	memset(s, 0, sizeof *s);
	s->has = llm_rng_below(r, 50) != 0;
	s->nkeys = m == LLM_DEDUP_EXACT ? 1 : 2;
	for (unsigned j = 0; j < 2; j++)
		keys[j] = llm_rng_below(r, m == LLM_DEDUP_EXACT ? 3000 : 40000) + j * 100000;
	s->keys = keys;
	s->key_hi = llm_rng_below(r, 2);
	s->fp = 0x0123456789abcdefull;
	for (int k = llm_rng_below(r, 40); k > 0; k--)
		s->fp ^= 1ull << llm_rng_below(r, 64);
	s->nset = 8;
	for (unsigned j = 0; j < 8; j++)
		set[j] = (uint32_t)(j * 4 + (llm_rng_below(r, 4) == 0));
	s->set = set;
}

/* Whatever the budget (tables throughout, records from the first document, or a switch
 * half-way), every node gets the same survivor, and a saved index is the same file. */
static void test_memory_budget(void)
{
	static const llm_dedup_method methods[] = { LLM_DEDUP_EXACT, LLM_DEDUP_MINHASH,
		                                    LLM_DEDUP_MINHASH, LLM_DEDUP_SIMHASH };
	static const size_t budgets[] = { SIZE_MAX, 1, 200000 };
	enum { N = 20000 };
	for (size_t mi = 0; mi < 4; mi++) {
		llm_dedup_params p = mh_params();
		if (methods[mi] != LLM_DEDUP_MINHASH)
			llm_dedup_params_default(&p, methods[mi]);
		if (mi == 2)
			p.verify = 0.6;
		uint64_t *roots[3];
		char *idx[3] = { NULL, NULL, NULL };
		size_t idxlen[3] = { 0, 0, 0 };
		for (size_t bi = 0; bi < 3; bi++) {
			llm_dedup *d;
			CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
			llm_dedup_set_memory(d, budgets[bi], dir);
			llm_rng r;
			llm_rng_seed(&r, mi);
			for (int i = 0; i < N; i++) {
				uint64_t keys[2];
				uint32_t set[8];
				llm_dedup_sig s;
				random_sig(&r, methods[mi], keys, set, &s);
				llm_dedup_add(d, &s);
			}
			CHECK_EQ_INT(llm_dedup_finish(d), LLM_OK);
			CHECK_EQ_INT(llm_dedup_runs(d) > 0, bi > 0);
			roots[bi] = malloc(N * sizeof **roots);
			for (uint64_t v = 0; v < N; v++) {
				roots[bi][v] = llm_dedup_root(d, v);
				if (roots[bi][v] == v && p.verify == 0) {
					char id[16];
					snprintf(id, sizeof id, "n%llu", (unsigned long long)v);
					llm_dedup_set_id(d, v, id, strlen(id));
				}
			}
			if (p.verify == 0) {
				CHECK_EQ_INT(llm_dedup_save_index(d, tmp("budget.idx")), LLM_OK);
				CHECK_EQ_INT(llm_read_file(tmp("budget.idx"), &idx[bi], &idxlen[bi]), LLM_OK);
			}
			llm_dedup_free(d);
		}
		size_t differ = 0, joined = 0;
		for (uint64_t v = 0; v < N; v++) {
			differ += roots[1][v] != roots[0][v] || roots[2][v] != roots[0][v];
			joined += roots[0][v] != v;
		}
		CHECK_EQ_U64(differ, 0);
		CHECK(joined > N / 10 && joined < N - N / 10); /* the test is not trivial */
		for (size_t bi = 1; bi < 3; bi++)
			CHECK(idxlen[bi] == idxlen[0] && (!idxlen[0] || !memcmp(idx[bi], idx[0], idxlen[0])));
		for (size_t bi = 0; bi < 3; bi++) {
			free(idx[bi]);
			free(roots[bi]);
		}
	}
}

/* Run docs [from, to) of a fixed key set through an engine; name every survivor. */
static llm_dedup *engine_with(const llm_dedup_params *p, const char *index, int from, int to)
{
	llm_dedup *d;
	CHECK_EQ_INT(llm_dedup_new(&d, p), LLM_OK);
	if (index && access(index, F_OK) == 0)
		CHECK_EQ_INT(llm_dedup_load_index(d, index), LLM_OK);
	uint64_t base = llm_dedup_base(d);
	for (int i = from; i < to; i++) {
		uint64_t k[2];
		llm_dedup_sig s = two_keys(k, (uint64_t)(i % 7) + 100, (uint64_t)i + 1000);
		llm_dedup_add(d, &s);
	}
	llm_dedup_finish(d);
	for (int i = from; i < to; i++) {
		uint64_t v = base + (uint64_t)(i - from);
		char id[16];
		snprintf(id, sizeof id, "doc%d", i);
		if (llm_dedup_root(d, v) == v)
			llm_dedup_set_id(d, v, id, strlen(id));
	}
	return d;
}

/* An index's clusters as text: "id size run" per line. */
static void cluster_line(void *ctx, const char *id, size_t idlen, uint64_t size, unsigned run)
{
	llm_buf_addf(ctx, "%.*s %llu %u\n", (int)idlen, id, (unsigned long long)size, run);
}

static char *clusters_of(const char *path)
{
	llm_buf b = LLM_BUF_INIT;
	CHECK_EQ_INT(llm_dedup_index_clusters(path, cluster_line, &b), LLM_OK);
	llm_buf_adds(&b, "");
	return llm_buf_detach(&b, NULL);
}

static void test_index(void)
{
	llm_dedup_params p = mh_params();
	const char *i1 = tmp("one.idx"), *i2 = tmp("two.idx");
	unlink(i1);
	unlink(i2);
	llm_dedup *a = engine_with(&p, i1, 0, 5);
	CHECK_EQ_INT(llm_dedup_save_index(a, i1), LLM_OK);
	llm_dedup_free(a);
	llm_dedup *b = engine_with(&p, i1, 5, 20);
	CHECK_EQ_U64(llm_dedup_base(b), 5);
	/* doc 7 has key 100, like doc 0: a duplicate of the earlier run's doc0 */
	size_t l;
	uint64_t r = llm_dedup_root(b, 5 + 2);
	const char *id = llm_dedup_id(b, r, &l);
	CHECK(r == 0 && id && l == 4 && !memcmp(id, "doc0", 4));
	/* keys 100..106 repeat every 7 documents: doc0's cluster holds 0, 7, 14 */
	CHECK_EQ_U64(llm_dedup_dup_count(b, 0), 3);
	CHECK_EQ_U64(llm_dedup_dup_count(b, 5), 3);
	CHECK_EQ_INT(llm_dedup_save_index(b, i1), LLM_OK);
	llm_dedup_free(b);
	llm_dedup *all = engine_with(&p, NULL, 0, 20);
	CHECK_EQ_INT(llm_dedup_save_index(all, i2), LLM_OK);
	llm_dedup_free(all);
	/* the same clusters (sizes included); the later ones made by the second run */
	char *ca = clusters_of(i1), *cb = clusters_of(i2);
	CHECK(strstr(ca, "doc0 3 1\ndoc1 3 1\n") == ca && strstr(cb, "doc0 3 1\ndoc1 3 1\n") == cb);
	CHECK(strstr(ca, "doc5 3 2\n") && strstr(cb, "doc5 3 1\n"));
	CHECK_EQ_U64(strlen(ca), strlen(cb));
	free(ca);
	free(cb);
	llm_dedup_index_info in;
	CHECK_EQ_INT(llm_dedup_index_info_read(i1, &in, NULL), LLM_OK);
	CHECK(in.runs == 2 && in.documents == 20 && in.clusters == 7 && in.dup_clusters == 7);
	char *x;
	size_t xl;
	CHECK_EQ_INT(llm_read_file(i1, &x, &xl), LLM_OK);
	/* damage: every single-byte change and every truncation is refused, never crashes */
	int refused = 0;
	for (size_t i = 0; i < xl; i++) {
		x[i] ^= 0x40;
		CHECK_EQ_INT(llm_write_file(i2, x, xl), LLM_OK);
		llm_dedup *d;
		llm_dedup_new(&d, &p);
		refused += llm_dedup_load_index(d, i2) != LLM_OK;
		llm_dedup_free(d);
		x[i] ^= 0x40;
	}
	CHECK_EQ_INT(refused, (int)xl);
	CHECK_EQ_INT(llm_write_file(i2, x, xl - 9), LLM_OK);
	llm_dedup *d;
	llm_dedup_new(&d, &p);
	CHECK_EQ_INT(llm_dedup_load_index(d, i2), LLM_EFORMAT);
	llm_dedup_free(d);
	/* other parameters */
	llm_dedup_params q = p;
	q.sh.seed = 2;
	llm_dedup_new(&d, &q);
	CHECK_EQ_INT(llm_dedup_load_index(d, i1), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "seed 1), this run has") != NULL);
	llm_dedup_free(d);
	free(x);
}

/* A run with the inputs of the index's last run replaces it: the index it sees is the one
 * before that run, whatever the inputs hold now. */
static void test_index_rerun(void)
{
	llm_dedup_params p = mh_params();
	const char *i1 = tmp("rerun.idx"), *i0 = tmp("rerun0.idx");
	const char *m1[] = { "/data/m1.jsonl" }, *m2[] = { "/data/m2a.jsonl", "/data/m2b.jsonl" };
	unlink(i1);
	llm_dedup *d;
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	llm_dedup_set_run(d, m1, 1, "first");
	for (int i = 0; i < 10; i++) {
		uint64_t k[2];
		llm_dedup_sig s = two_keys(k, (uint64_t)(i % 7) + 100, (uint64_t)i + 1000);
		llm_dedup_add(d, &s);
	}
	llm_dedup_finish(d);
	for (uint64_t v = 0; v < 10; v++)
		if (llm_dedup_root(d, v) == v) {
			char id[16];
			snprintf(id, sizeof id, "a%llu", (unsigned long long)v);
			llm_dedup_set_id(d, v, id, strlen(id));
		}
	CHECK_EQ_INT(llm_dedup_save_index(d, i1), LLM_OK);
	CHECK_EQ_INT(llm_dedup_save_index(d, i0), LLM_OK);
	llm_dedup_free(d);
	/* the second month twice (other documents the second time) against i1, and the second
	 * version once against a copy of the index before it: same roots, same index */
	uint64_t roots[2][8];
	for (int pass = 0; pass < 3; pass++) {
		CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
		llm_dedup_set_run(d, m2, 2, "second");
		CHECK_EQ_INT(llm_dedup_load_index(d, pass < 2 ? i1 : i0), LLM_OK);
		CHECK_EQ_INT(llm_dedup_replaces(d), pass == 1 ? 2 : 0);
		uint64_t base = llm_dedup_base(d);
		for (int i = 0; i < 8; i++) {
			uint64_t k[2];
			int x = pass ? i + 3 : i;
			llm_dedup_sig s = two_keys(k, (uint64_t)(x % 5) + 100, (uint64_t)x + 2000);
			llm_dedup_add(d, &s);
		}
		llm_dedup_finish(d);
		for (uint64_t v = base; v < base + 8; v++) {
			uint64_t r = llm_dedup_root(d, v);
			if (pass)
				roots[pass - 1][v - base] = r < base ? r : 100 + r - base;
			if (r == v) {
				char id[16];
				snprintf(id, sizeof id, "b%d%llu", pass ? 1 : 0, (unsigned long long)(v - base));
				llm_dedup_set_id(d, v, id, strlen(id));
			}
		}
		CHECK_EQ_INT(llm_dedup_save_index(d, pass < 2 ? i1 : i0), LLM_OK);
		llm_dedup_free(d);
	}
	CHECK(memcmp(roots[0], roots[1], sizeof roots[0]) == 0);
	char *a = clusters_of(i1), *b = clusters_of(i0);
	CHECK_EQ_INT(strcmp(a, b), 0);
	free(a);
	free(b);
	/* the first month again: it is not the last run */
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	llm_dedup_set_run(d, m1, 1, "again");
	CHECK_EQ_INT(llm_dedup_load_index(d, i1), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "'/data/m1.jsonl' was deduplicated by run 1 of 2") != NULL);
	llm_dedup_free(d);
	/* half of the last run */
	CHECK_EQ_INT(llm_dedup_new(&d, &p), LLM_OK);
	llm_dedup_set_run(d, m2 + 1, 1, "half");
	CHECK_EQ_INT(llm_dedup_load_index(d, i1), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "without its input '/data/m2a.jsonl'") != NULL);
	llm_dedup_free(d);
}

static void test_sigfile(void)
{
	llm_dedup_params p = mh_params();
	p.verify = 0.8;
	const char *f = tmp("a.sig");
	llm_sigfile_writer *w;
	CHECK_EQ_INT(llm_sigfile_create(&w, f, &p), LLM_OK);
	uint64_t k[2];
	uint32_t set[] = { 3, 9 };
	llm_dedup_sig s = two_keys(k, 42, 43);
	s.set = set, s.nset = 2;
	CHECK_EQ_INT(llm_sigfile_add(w, &s, "x1", 2), LLM_OK);
	CHECK_EQ_INT(llm_sigfile_add(w, NULL, "", 0), LLM_OK);
	CHECK_EQ_INT(llm_sigfile_close(w), LLM_OK);
	llm_sigfile_reader *r;
	llm_dedup_params q;
	CHECK_EQ_INT(llm_sigfile_open(&r, f, &q), LLM_OK);
	CHECK(q.bands == 2 && q.verify == 0.8 && q.sh.seed == p.sh.seed);
	const char *id;
	size_t idl;
	llm_dedup_sig g;
	CHECK_EQ_INT(llm_sigfile_next(r, &g, &id, &idl), LLM_OK);
	CHECK(g.has && g.keys[0] == 42 && g.keys[1] == 43 && g.nset == 2 && g.set[1] == 9);
	CHECK_MEM(id, idl, "x1", 2);
	CHECK_EQ_INT(llm_sigfile_next(r, &g, &id, &idl), LLM_OK);
	CHECK(!g.has && idl == 0);
	CHECK_EQ_INT(llm_sigfile_next(r, &g, &id, &idl), LLM_EOF);
	llm_sigfile_free(r);
	/* a flipped byte anywhere is caught by the time the reader reaches the end */
	char *x;
	size_t xl;
	CHECK_EQ_INT(llm_read_file(f, &x, &xl), LLM_OK);
	const char *bad = tmp("bad.sig");
	for (size_t i = 0; i < xl; i++) {
		x[i] ^= 1;
		llm_write_file(bad, x, xl);
		x[i] ^= 1;
		int rc = llm_sigfile_open(&r, bad, &q);
		while (rc == LLM_OK)
			rc = llm_sigfile_next(r, &g, &id, &idl);
		CHECK(rc != LLM_EOF);
		llm_sigfile_free(r);
	}
	free(x);
}

static void test_removal_list(void)
{
	const char *f = tmp("a.rm");
	llm_rmlist_writer w;
	llm_rmlist_writer_init(&w);
	llm_rmlist_add(&w, 1, LLM_RMLIST_SURVIVOR, 2, "k", 1);
	llm_rmlist_add(&w, 4, LLM_RMLIST_DUPLICATE, 2, "k", 1);
	CHECK_EQ_INT(llm_rmlist_write(&w, f, 6, 77), LLM_OK);
	llm_rmlist_writer_release(&w);
	llm_rmlist_reader l;
	CHECK_EQ_INT(llm_rmlist_load(&l, f), LLM_OK);
	CHECK(l.nrecords == 6 && l.sig_checksum == 77 && l.nentries == 2);
	llm_rmlist_entry e;
	CHECK_EQ_INT(llm_rmlist_next(&l, &e), LLM_OK);
	CHECK(e.rec == 1 && e.kind == LLM_RMLIST_SURVIVOR && e.count == 2);
	CHECK_EQ_INT(llm_rmlist_next(&l, &e), LLM_OK);
	CHECK(e.rec == 4 && e.kind == LLM_RMLIST_DUPLICATE && e.idlen == 1 && e.id[0] == 'k');
	CHECK_EQ_INT(llm_rmlist_next(&l, &e), LLM_EOF);
	llm_rmlist_reader_release(&l);
}

static void test_removal_list_path(void)
{
	static const char *const cases[][3] = {
		{ "a/s0.sig", NULL, "a/s0.rm" },       { "a/s0.sig.zst", NULL, "a/s0.rm" },
		{ "a/s0.sig.zst", "out", "out/s0.rm" }, { "s0", "out", "out/s0.rm" },
		{ "x.zst", NULL, "x.rm" },             { ".sig", NULL, ".sig.rm" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *p = llm_rmlist_path(cases[i][0], cases[i][1]);
		CHECK_STR(p, cases[i][2]);
		free(p);
	}
}

static void test_lines(void)
{
	llm_linededup *ld = llm_linededup_new(LLM_NORM_FULL, 1, SIZE_MAX);
	const char *a = "Menu\nBody one\n\nFooter, 2024", *b = "menu\nBody two\n\nFOOTER 2025";
	llm_linededup_count(ld, a, strlen(a));
	llm_linededup_count(ld, b, strlen(b));
	CHECK_EQ_U64(llm_linededup_distinct(ld), 4);
	llm_buf out = LLM_BUF_INIT;
	CHECK_EQ_INT(llm_linededup_filter(ld, a, strlen(a), &out), 2);
	CHECK_STR(out.p, "Body one\n");
	llm_buf_release(&out);
	llm_linededup_free(ld);
}

/* Past its budget the table becomes a Bloom filter: every frequent line is still found, and
 * the rare lines taken for frequent ones stay under the stated rate. */
static void test_lines_bloom(void)
{
	enum { N = 60000 };
	llm_linededup *ld = llm_linededup_new(LLM_NORM_NONE, 2, 1 << 19);
	char line[32];
	for (int i = 0; i < N; i++) {
		int reps = i % 10 == 0 ? 3 : 1 + i % 2; /* 10% seen 3 times, the rest once or twice */
		snprintf(line, sizeof line, "line %d", i);
		for (int r = 0; r < reps; r++)
			llm_linededup_count(ld, line, strlen(line));
	}
	double bound = llm_linededup_fp_rate(ld);
	CHECK(bound > 0 && bound < 0.05);
	CHECK_EQ_U64(llm_linededup_memory(ld), 1 << 19);
	CHECK(llm_linededup_distinct(ld) > N * 0.98 && llm_linededup_distinct(ld) <= N);
	int missed = 0, fp = 0, rare = 0;
	llm_buf out = LLM_BUF_INIT;
	for (int i = 0; i < N; i++) {
		snprintf(line, sizeof line, "line %d", i);
		llm_buf_reset(&out);
		size_t dropped = llm_linededup_filter(ld, line, strlen(line), &out);
		if (i % 10 == 0)
			missed += dropped != 1;
		else
			rare++, fp += dropped == 1;
	}
	CHECK_EQ_INT(missed, 0);
	CHECK((double)fp / rare <= bound);
	llm_buf_release(&out);
	llm_linededup_free(ld);
}

typedef struct {
	llm_buf log; /* one line per callback: reason or id and keys */
} poolseen;

static void pool_cb(void *ctx, const llm_dedup_doc *doc, const llm_dedup_sig *sig)
{
	poolseen *p = ctx;
	if (!sig) {
		llm_buf_addf(&p->log, "reject %s\n", doc->reason);
		return;
	}
	llm_buf_addf(&p->log, "%s %d", doc->id.p, sig->has);
	for (unsigned j = 0; j < sig->nkeys; j++)
		llm_buf_addf(&p->log, " %llx", (unsigned long long)sig->keys[j]);
	llm_buf_addc(&p->log, '\n');
}

/* The sign pool gives the same callbacks in the same order for any number of threads,
 * across batch boundaries and file changes. */
static void test_signpool(void)
{
	llm_dedup_params p;
	llm_dedup_params_default(&p, LLM_DEDUP_MINHASH);
	poolseen seen[2] = { { LLM_BUF_INIT }, { LLM_BUF_INIT } };
	static const int threads[2] = { 1, 3 };
	for (int k = 0; k < 2; k++) {
		llm_signpool *sp;
		CHECK_EQ_INT(llm_signpool_new(&sp, &p, threads[k], "text", 1 << 20, pool_cb, &seen[k]),
		             LLM_OK);
		char line[200];
		for (int i = 0; i < 2500; i++) {
			int n = i % 97 == 5 ? snprintf(line, sizeof line, "not json %d", i)
			      : i % 89 == 3 ? snprintf(line, sizeof line, "{\"title\": %d}", i)
			      : snprintf(line, sizeof line, "{\"text\": \"w%d x y z q r s t u v %d\"}", i % 50, i % 7);
			llm_signpool_add(sp, LLM_OK, line, (size_t)n, i < 1500 ? "a.jsonl" : "b.jsonl",
			                 (uint64_t)i + 1);
		}
		llm_signpool_free(sp);
	}
	CHECK(seen[0].log.len > 0);
	CHECK(seen[0].log.len == seen[1].log.len && !memcmp(seen[0].log.p, seen[1].log.p, seen[0].log.len));
	CHECK(strstr(seen[0].log.p, "reject bad_json\n") && strstr(seen[0].log.p, "reject no_text\n"));
	CHECK(strstr(seen[0].log.p, "b.jsonl:2500 1"));
	llm_buf_release(&seen[0].log);
	llm_buf_release(&seen[1].log);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_dedup.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_survivor);
	RUN(test_decide);
	RUN(test_params_same);
	RUN(test_exact_needs_both_halves);
	RUN(test_verify);
	RUN(test_simhash_engine);
	RUN(test_memory_budget);
	RUN(test_index);
	RUN(test_index_rerun);
	RUN(test_sigfile);
	RUN(test_removal_list);
	RUN(test_removal_list_path);
	RUN(test_lines);
	RUN(test_lines_bloom);
	RUN(test_signpool);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return unit_done();
}
