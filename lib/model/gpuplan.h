/*
 * gpuplan.h — how the GPU trainer divides work, computed on the host: the deterministic
 * embedding backward, the gradient buckets of the overlapped all-reduce, and ZeRO-1 shards.
 * Pure functions on sizes, testable without a GPU.
 */
#ifndef LLM_GPUPLAN_H
#define LLM_GPUPLAN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Rows of an embedding backward grouped by token: order[0..N) lists the row indices sorted by
 * token, stable (rows of one token in increasing order); group u holds rows
 * order[starts[u] .. starts[u+1]) and its token is uniq[u], uniq increasing. Returns U, the
 * number of distinct tokens. order[N], starts[N+1], uniq[N]; tokens in [0, V). O(N + V) time.
 */
int llm_gpuplan_embed(const int32_t *tokens, int N, int V, int32_t *order, int32_t *starts,
                      int32_t *uniq);

/*
 * All-reduce buckets. Tensors i = 0..n-1 lie back to back in one flat array (offset[i+1] =
 * offset[i] + numel[i]); ready[i] is the point of the backward after which tensor i's gradient
 * is final, and the backward finishes tensors from the end of the array to its start
 * (ready[] does not increase with i). Buckets are built from the end: each takes whole
 * tensors until it holds at least cap elements (cap 0: one bucket), so it can be reduced as
 * soon as its first tensor (the one at its lowest offset) is ready. Writes at most n buckets,
 * in launch order (highest offsets first), and returns their number.
 */
typedef struct {
	size_t start, len; /* elements of the flat array */
	int ready;         /* launch after this backward point */
} llm_gpuplan_bucket;
size_t llm_gpuplan_buckets(const size_t *offset, const size_t *numel, const int *ready,
                           size_t n, size_t cap, llm_gpuplan_bucket *out);

/*
 * ZeRO-1 shard of a flat array of n elements over W ranks: the array is padded to a multiple
 * of W * align elements so that every rank has per_rank elements (NCCL's reduce-scatter and
 * all-gather need equal counts; align keeps shard starts aligned for vector loads). Rank r owns
 * [start, start + per_rank) of the padded array, of which len elements are real data
 * (the last ranks may own only padding: len 0).
 */
typedef struct {
	size_t padded, per_rank, start, len;
} llm_gpuplan_part;
void llm_gpuplan_zero(size_t n, int W, int rank, size_t align, llm_gpuplan_part *s);

/*
 * The pieces of tensors (as for llm_gpuplan_buckets) that fall inside a shard, for per-tensor
 * settings such as weight decay: writes at most n pieces, in offset order, and returns their
 * number. piece.tensor is the tensor index, offset is in the flat array.
 */
typedef struct {
	size_t offset, numel;
	size_t tensor;
} llm_gpuplan_piece;
size_t llm_gpuplan_pieces(const size_t *offset, const size_t *numel, size_t n,
                          const llm_gpuplan_part *s, llm_gpuplan_piece *out);

#endif
