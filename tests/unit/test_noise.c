/* test_noise.c — noise rates against their probabilities, labels untouched, determinism. */
#include "core/err.h"
#include "core/hash.h"
#include "data/noise.h"
#include "unit.h"

/* |observed - p| within 6 binomial standard deviations (fails by chance ~1e-9). */
static void check_rate(uint64_t hits, uint64_t trials, double p, const char *what)
{
	double obs = (double)hits / (double)trials, sd = sqrt(p * (1 - p) / (double)trials);
	if (!(fabs(obs - p) <= 6 * sd + 1e-12))
		printf("#   %s: observed %.5f, expected %.5f (sd %.5f)\n", what, obs, p, sd);
	CHECK(fabs(obs - p) <= 6 * sd + 1e-12);
}

static void test_rates(void)
{
	llm_noise_opts o;
	llm_noise_opts_init(&o);
	CHECK_NEAR(o.docs, 0.05, 0);
	o.docs = 0.3;
	o.mask = 0.03;
	o.swap = 0.15;
	o.confuse = 0.25;
	o.mask_id = 7;
	o.seed = 11;
	llm_confusions *c = llm_confusions_new();
	uint32_t from = 100, to = 101;
	CHECK_EQ_INT(llm_confusions_add(c, &from, 1, &to, 1), LLM_OK);
	o.confusions = c;
	llm_noise_counts k;
	memset(&k, 0, sizeof k);
	enum { NDOC = 20000, LEN = 64 };
	uint32_t lab[LEN], keep[LEN], in[LEN];
	llm_rng g;
	llm_rng_seed(&g, 3);
	uint64_t occurrences = 0, swap_trials = 0, unchanged_clean = 1;
	for (int d = 0; d < NDOC; d++) {
		for (int i = 0; i < LEN; i++)
			lab[i] = i % 8 == 0 ? 100 : 1000 + (uint32_t)llm_rng_below(&g, 1000);
		memcpy(keep, lab, sizeof lab);
		memcpy(in, lab, sizeof lab);
		char id[32];
		int m = snprintf(id, sizeof id, "doc-%d", d);
		uint64_t sw = k.swapped;
		int noised = llm_noise_apply(&o, llm_noise_doc_key(id, (size_t)m, NULL, 0), lab, in, LEN, &k);
		CHECK(memcmp(lab, keep, sizeof lab) == 0); /* labels untouched */
		if (!noised) {
			unchanged_clean &= memcmp(in, lab, sizeof lab) == 0;
			continue;
		}
		occurrences += LEN / 8;
		/* swap scan: each swap consumes 2 of the LEN - 1 starting points' positions */
		swap_trials += LEN - 1 - (k.swapped - sw);
	}
	CHECK(unchanged_clean);
	CHECK_EQ_U64(k.docs, NDOC);
	CHECK_EQ_U64(k.tokens, (uint64_t)NDOC * LEN);
	check_rate(k.docs_noised, NDOC, o.docs, "documents");
	check_rate(k.masked, k.tokens_noised, o.mask, "mask");
	check_rate(k.confused, occurrences, o.confuse, "confuse");
	/* A swap decision is drawn at every scan position that has a right neighbour and is not
	 * the second half of a swap: the number of draws is LEN - 1 - swaps per document. */
	check_rate(k.swapped, swap_trials, o.swap, "swap");
	CHECK(k.changed > 0 && k.changed <= k.tokens_noised);
	llm_confusions_free(c);
}

/* Same key, same noise; the rng stream is independent of anything but (seed, key). */
static void test_determinism(void)
{
	llm_noise_opts o;
	llm_noise_opts_init(&o);
	o.docs = 1;
	o.mask = 0.2;
	o.mask_id = 1;
	uint32_t lab[500], a[500], b[500];
	for (int i = 0; i < 500; i++)
		lab[i] = (uint32_t)(i * 7 + 3);
	llm_noise_counts k;
	memset(&k, 0, sizeof k);
	memcpy(a, lab, sizeof lab);
	memcpy(b, lab, sizeof lab);
	uint64_t key = llm_noise_doc_key("x", 1, NULL, 0);
	llm_noise_apply(&o, key, lab, a, 500, &k);
	llm_noise_apply(&o, llm_noise_doc_key("y", 1, NULL, 0), lab, b, 500, &k); /* disturb */
	memcpy(b, lab, sizeof lab);
	llm_noise_apply(&o, key, lab, b, 500, &k);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(memcmp(a, lab, sizeof a) != 0);
	o.seed = 1;
	memcpy(b, lab, sizeof lab);
	llm_noise_apply(&o, key, lab, b, 500, &k);
	CHECK(memcmp(a, b, sizeof a) != 0);
	/* without an id the key is the content */
	memcpy(b, lab, sizeof lab);
	CHECK_EQ_U64(llm_noise_doc_key(NULL, 0, lab, 500), llm_noise_doc_key(NULL, 0, b, 500));
	CHECK(llm_noise_doc_key(NULL, 0, lab, 500) != llm_noise_doc_key(NULL, 0, a, 500));
}

/* Multi-token pairs replace as a unit; the longest match wins; unequal lengths are refused. */
static void test_confusions(void)
{
	llm_confusions *c = llm_confusions_new();
	uint32_t f1[1] = { 5 }, t1[1] = { 50 }, f2[2] = { 5, 6 }, t2[2] = { 60, 61 };
	CHECK_EQ_INT(llm_confusions_add(c, f1, 1, t1, 1), LLM_OK);
	CHECK_EQ_INT(llm_confusions_add(c, f2, 2, t2, 2), LLM_OK);
	CHECK_EQ_INT(llm_confusions_add(c, f2, 2, t1, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_confusions_add(c, f2, 0, t1, 0), LLM_EINVAL);
	/* many keys force the table to grow */
	for (uint32_t i = 1000; i < 1300; i++) {
		uint32_t to2 = i + 1;
		CHECK_EQ_INT(llm_confusions_add(c, &i, 1, &to2, 1), LLM_OK);
	}
	CHECK_EQ_INT(llm_confusions_count(c), 302);
	CHECK_EQ_INT(llm_confusions_max_id(c), 1300);
	llm_noise_opts o;
	llm_noise_opts_init(&o);
	o.docs = 1;
	o.mask = o.swap = 0;
	o.confuse = 1;
	o.confusions = c;
	uint32_t lab[7] = { 5, 6, 5, 7, 5, 1299, 9 }, in[7];
	uint32_t want[7] = { 60, 61, 50, 7, 50, 1300, 9 };
	memcpy(in, lab, sizeof in);
	llm_noise_counts k;
	memset(&k, 0, sizeof k);
	CHECK_EQ_INT(llm_noise_apply(&o, 1, lab, in, 7, &k), 1);
	CHECK(memcmp(in, want, sizeof in) == 0);
	CHECK_EQ_U64(k.confused, 4);
	CHECK_EQ_U64(k.changed, 5);
	/* a "from" cut by the end of the document is not matched */
	uint32_t lab2[1] = { 5 }, in2[1] = { 5 };
	llm_noise_apply(&o, 1, lab2, in2, 1, &k);
	CHECK_EQ_INT(in2[0], 50);
	/* an empty document */
	llm_noise_apply(&o, 2, NULL, NULL, 0, &k);
	llm_confusions_free(c);
}

/* The noise as first written, one llm_rng_uniform call per draw (single-token confusion from
 * -> to): llm_noise_apply keeps its own copy of the generator in registers and must draw
 * exactly the same numbers, so that a seed gives the same noise in every version. */
static int ref_apply(const llm_noise_opts *o, uint64_t key, uint32_t from, uint32_t to,
                     uint32_t *in, size_t n)
{
	llm_rng r;
	llm_rng_seed2(&r, o->seed, key);
	if (!(llm_rng_uniform(&r) < o->docs))
		return 0;
	if (o->confuse > 0)
		for (size_t i = 0; i < n; i++)
			if (in[i] == from && llm_rng_uniform(&r) < o->confuse)
				in[i] = to;
	if (o->swap > 0)
		for (size_t i = 0; i + 1 < n;) {
			if (llm_rng_uniform(&r) < o->swap) {
				uint32_t t = in[i];
				in[i] = in[i + 1];
				in[i + 1] = t;
				i += 2;
			} else {
				i++;
			}
		}
	if (o->mask > 0)
		for (size_t i = 0; i < n; i++)
			if (llm_rng_uniform(&r) < o->mask)
				in[i] = o->mask_id;
	return 1;
}

static void test_same_draws(void)
{
	llm_confusions *c = llm_confusions_new();
	uint32_t from = 7, to = 8;
	CHECK_EQ_INT(llm_confusions_add(c, &from, 1, &to, 1), LLM_OK);
	llm_rng g;
	llm_rng_seed(&g, 5);
	enum { LEN = 300 };
	uint32_t lab[LEN], a[LEN], b[LEN];
	int same = 1, selects = 1;
	for (int round = 0; round < 3000; round++) {
		llm_noise_opts o;
		llm_noise_opts_init(&o);
		o.docs = round % 3 == 0 ? 1 : 0.5;
		o.mask = (double)(round % 4) * 0.1;
		o.swap = (double)(round % 5) * 0.2;
		o.confuse = round % 2 ? 0.5 : 0;
		o.confusions = c;
		o.mask_id = 1;
		o.seed = (uint64_t)round / 7;
		size_t n = (size_t)llm_rng_below(&g, LEN + 1);
		for (size_t i = 0; i < n; i++)
			lab[i] = (uint32_t)llm_rng_below(&g, 12);
		memcpy(a, lab, sizeof lab);
		memcpy(b, lab, sizeof lab);
		uint64_t key = llm_rng_next(&g);
		llm_noise_counts k, ks;
		memset(&k, 0, sizeof k);
		memset(&ks, 0, sizeof ks);
		int want = ref_apply(&o, key, from, to, a, n);
		int got = llm_noise_apply(&o, key, lab, b, n, &k);
		same &= got == want && memcmp(a, b, n * sizeof *a) == 0;
		/* select: the same decision; a clean document is counted, a noised one is not */
		int sel = llm_noise_select(&o, key, n, &ks);
		selects &= sel == want && ks.docs == (uint64_t)!sel && ks.tokens == (sel ? 0 : n);
	}
	CHECK(same);
	CHECK(selects);
	llm_confusions_free(c);
}

int main(void)
{
	RUN(test_rates);
	RUN(test_same_draws);
	RUN(test_determinism);
	RUN(test_confusions);
	return unit_done();
}
