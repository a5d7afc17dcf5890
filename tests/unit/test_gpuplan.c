/*
 * test_gpuplan.c — embedding-backward grouping, all-reduce buckets and ZeRO-1 shards, each
 * checked against a direct restatement of its contract (brute force over the inputs).
 */
#include "core/hash.h"
#include "model/gpuplan.h"
#include "unit.h"

static void test_embed_plan_groups_rows_stably(void)
{
	enum { N = 500, V = 37 };
	int32_t tok[N], order[N], starts[N + 1], uniq[N];
	llm_rng r;
	llm_rng_seed(&r, 7);
	for (int n = 0; n < N; n++)
		tok[n] = (int32_t)llm_rng_below(&r, V - 5) + (n % 2) * 5; /* some tokens never occur */
	int U = llm_gpuplan_embed(tok, N, V, order, starts, uniq);
	/* Brute force: the distinct tokens in increasing order, and each one's rows in order. */
	int want_u = 0, pos = 0, bad = 0;
	for (int v = 0; v < V; v++) {
		int any = 0;
		for (int n = 0; n < N; n++)
			if (tok[n] == v) {
				if (!any) {
					bad += want_u >= U || uniq[want_u] != v || starts[want_u] != pos;
					any = 1;
				}
				bad += order[pos++] != n;
			}
		want_u += any;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(U, want_u);
	CHECK_EQ_INT(starts[U], N);
}

static void test_embed_plan_single_token(void)
{
	int32_t tok[4] = { 3, 3, 3, 3 }, order[4], starts[5], uniq[4];
	CHECK_EQ_INT(llm_gpuplan_embed(tok, 4, 10, order, starts, uniq), 1);
	CHECK(uniq[0] == 3 && starts[0] == 0 && starts[1] == 4);
	CHECK(order[0] == 0 && order[3] == 3);
}

/* A model-like table: embed (ready last), 3 layers of 3 tensors, norm and head (ready first). */
static void table(size_t *off, size_t *num, int *ready, size_t *n)
{
	size_t k = 0, o = 0;
	size_t sizes[] = { 1000, 10, 300, 300, 10, 300, 300, 10, 300, 300, 10, 1000 };
	int rd[] = { 4, 3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0 };
	for (; k < 12; k++) {
		off[k] = o;
		num[k] = sizes[k];
		ready[k] = rd[k];
		o += sizes[k];
	}
	*n = k;
}

static void test_buckets_cover_in_launch_order(void)
{
	size_t off[12], num[12], n;
	int ready[12];
	table(off, num, ready, &n);
	llm_gpuplan_bucket b[12];
	for (size_t cap = 0; cap <= 3000; cap += 250) {
		size_t nb = llm_gpuplan_buckets(off, num, ready, n, cap, b);
		size_t end = off[n - 1] + num[n - 1];
		int bad = 0;
		for (size_t i = 0; i < nb; i++) {
			/* Contiguous from the end down, each at least cap unless it is the last. */
			bad += b[i].start + b[i].len != end;
			bad += i + 1 < nb && cap && b[i].len < cap;
			/* Ready when its lowest tensor is: the max over its tensors. */
			int want = -1;
			for (size_t k = 0; k < n; k++)
				if (off[k] >= b[i].start && off[k] < b[i].start + b[i].len && ready[k] > want)
					want = ready[k];
			bad += b[i].ready != want;
			/* Whole tensors only. */
			int starts_tensor = 0;
			for (size_t k = 0; k < n; k++)
				starts_tensor |= off[k] == b[i].start;
			bad += !starts_tensor;
			end = b[i].start;
		}
		bad += end != 0;
		if (cap == 0)
			bad += nb != 1;
		if (bad)
			printf("#   cap %zu: %d problems\n", cap, bad);
		CHECK_EQ_INT(bad, 0);
	}
	size_t nb = llm_gpuplan_buckets(off, num, ready, n, 1, b); /* one tensor per bucket */
	CHECK_EQ_INT(nb, n);
	CHECK(b[0].start == off[n - 1] && b[0].ready == 0 && b[nb - 1].ready == 4);
}

static void test_zero_shards_partition(void)
{
	size_t ns[] = { 0, 1, 7, 1000, 1001, 123457 };
	for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
		for (int W = 1; W <= 9; W++) {
			size_t covered = 0, next = 0;
			int bad = 0;
			for (int r = 0; r < W; r++) {
				llm_gpuplan_part s;
				llm_gpuplan_zero(ns[a], W, r, 64, &s);
				bad += s.padded % ((size_t)W * 64) != 0 || s.padded < ns[a] ||
				       s.padded >= ns[a] + (size_t)W * 64 + (ns[a] == 0 ? 1 : 0);
				bad += s.per_rank * (size_t)W != s.padded || s.start != (size_t)r * s.per_rank;
				bad += s.start % 64 != 0 || s.len > s.per_rank;
				if (s.len) {
					bad += s.start != next;
					next = s.start + s.len;
				}
				covered += s.len;
			}
			if (bad)
				printf("#   n %zu W %d: %d problems\n", ns[a], W, bad);
			CHECK_EQ_INT(bad, 0);
			CHECK_EQ_U64(covered, ns[a]);
		}
}

static void test_shard_pieces(void)
{
	size_t off[12], num[12], n;
	int ready[12];
	table(off, num, ready, &n);
	size_t total = off[n - 1] + num[n - 1];
	for (int W = 1; W <= 5; W++) {
		size_t sum = 0;
		for (int r = 0; r < W; r++) {
			llm_gpuplan_part s;
			llm_gpuplan_zero(total, W, r, 16, &s);
			llm_gpuplan_piece p[12];
			size_t np = llm_gpuplan_pieces(off, num, n, &s, p);
			for (size_t i = 0; i < np; i++) {
				size_t t = p[i].tensor;
				CHECK(p[i].offset >= off[t] && p[i].offset + p[i].numel <= off[t] + num[t]);
				CHECK(p[i].offset >= s.start && p[i].offset + p[i].numel <= s.start + s.len);
				CHECK(i == 0 || p[i].offset == p[i - 1].offset + p[i - 1].numel);
				sum += p[i].numel;
			}
		}
		CHECK_EQ_U64(sum, total);
	}
}

int main(void)
{
	RUN(test_embed_plan_groups_rows_stably);
	RUN(test_embed_plan_single_token);
	RUN(test_buckets_cover_in_launch_order);
	RUN(test_zero_shards_partition);
	RUN(test_shard_pieces);
	return unit_done();
}
