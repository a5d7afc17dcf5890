/* Unit tests for lib/core/xsort: the merged order equals an in-memory sort, with and without
 * runs on disk, read twice; an unwritable temporary directory is an error. */
#include <stdlib.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/xsort.h"
#include "unit.h"

static int cmp(const void *p, const void *q)
{
	const llm_rec3 *x = p, *y = q;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return x->c < y->c ? -1 : x->c > y->c;
}

/* n records with few distinct a (ties on a and b too), sorted through a budget. */
static void sort_through(size_t n, size_t budget, int want_runs)
{
	llm_rng rng;
	llm_rng_seed(&rng, n);
	llm_rec3 *ref = malloc((n ? n : 1) * sizeof *ref);
	llm_xsort *x = llm_xsort_new(budget, NULL);
	for (size_t i = 0; i < n; i++) {
		ref[i] = (llm_rec3){ llm_rng_below(&rng, n / 3 + 1), llm_rng_below(&rng, 3), i };
		CHECK(llm_xsort_add(x, ref[i].a, ref[i].b, ref[i].c) == LLM_OK);
	}
	qsort(ref, n, sizeof *ref, cmp);
	CHECK_EQ_U64(llm_xsort_count(x), n);
	for (int pass = 0; pass < 2; pass++) {
		CHECK(llm_xsort_rewind(x) == LLM_OK);
		CHECK_EQ_INT(llm_xsort_runs(x) > 0, want_runs);
		llm_rec3 r;
		size_t k = 0, bad = 0;
		int rc;
		while ((rc = llm_xsort_next(x, &r)) == LLM_OK) {
			if (k >= n || cmp(&r, &ref[k]) != 0)
				bad++;
			k++;
		}
		CHECK_EQ_INT(rc, LLM_EOF);
		CHECK_EQ_U64(k, n);
		CHECK_EQ_U64(bad, 0);
	}
	CHECK(llm_xsort_memory(x) <= (budget < (64u << 10) ? (64u << 10) : budget) + 4096);
	llm_xsort_free(x);
	free(ref);
}

static void test_in_memory(void)
{
	sort_through(0, 1 << 20, 0);
	sort_through(1, 1 << 20, 0);
	sort_through(20000, 1 << 20, 0);
}

static void test_runs_on_disk(void)
{
	sort_through(2730, 0, 0);       /* exactly one buffer (64 KiB / 24): no run */
	sort_through(2731, 0, 1);       /* one record over */
	sort_through(100000, 0, 1);     /* 37 runs with 73-record windows */
	sort_through(300000, 1 << 20, 1);
}

static void test_bad_directory(void)
{
	llm_xsort *x = llm_xsort_new(0, "/nonexistent/dir");
	int rc = LLM_OK;
	for (int i = 0; i < 10000 && rc == LLM_OK; i++)
		rc = llm_xsort_add(x, (uint64_t)i, 0, 0);
	CHECK_EQ_INT(rc, LLM_EIO);
	llm_xsort_free(x);
}

int main(void)
{
	RUN(test_in_memory);
	RUN(test_runs_on_disk);
	RUN(test_bad_directory);
	return unit_done();
}
