/*
 * gpuplan.c — host-side planning for the GPU trainer (gpuplan.h).
 */
#include "gpuplan.h"

#include <stdlib.h>

#include "core/err.h"

int llm_gpuplan_embed(const int32_t *tokens, int N, int V, int32_t *order, int32_t *starts,
                      int32_t *uniq)
{
	/* Counting sort: stable, linear, and the groups come out in token order. */
	int32_t *count = llm_calloc((size_t)V + 1, sizeof *count);
	for (int n = 0; n < N; n++)
		count[tokens[n] + 1]++;
	int U = 0;
	for (int v = 0; v < V; v++) {
		if (count[v + 1]) {
			uniq[U] = v;
			starts[U] = count[v];
			U++;
		}
		count[v + 1] += count[v];
	}
	starts[U] = N;
	for (int n = 0; n < N; n++)
		order[count[tokens[n]]++] = n;
	free(count);
	return U;
}

size_t llm_gpuplan_buckets(const size_t *offset, const size_t *numel, const int *ready,
                           size_t n, size_t cap, llm_gpuplan_bucket *out)
{
	size_t nb = 0;
	for (size_t i = n; i-- > 0;) {
		if (nb == 0 || (cap && out[nb - 1].len >= cap)) {
			out[nb++] = (llm_gpuplan_bucket){ .start = offset[i] + numel[i], .len = 0, .ready = ready[i] };
		}
		llm_gpuplan_bucket *b = &out[nb - 1];
		b->start = offset[i];
		b->len += numel[i];
		if (ready[i] > b->ready)
			b->ready = ready[i];
	}
	return nb;
}

void llm_gpuplan_zero(size_t n, int W, int rank, size_t align, llm_gpuplan_part *s)
{
	size_t unit = (size_t)W * (align ? align : 1);
	s->padded = (n + unit - 1) / unit * unit;
	s->per_rank = s->padded / (size_t)W;
	s->start = (size_t)rank * s->per_rank;
	s->len = s->start >= n ? 0 : (n - s->start < s->per_rank ? n - s->start : s->per_rank);
}

size_t llm_gpuplan_pieces(const size_t *offset, const size_t *numel, size_t n,
                          const llm_gpuplan_part *s, llm_gpuplan_piece *out)
{
	size_t np = 0, lo = s->start, hi = s->start + s->len;
	for (size_t i = 0; i < n; i++) {
		size_t a = offset[i] > lo ? offset[i] : lo, b = offset[i] + numel[i];
		b = b < hi ? b : hi;
		if (a < b)
			out[np++] = (llm_gpuplan_piece){ .offset = a, .numel = b - a, .tensor = i };
	}
	return np;
}
