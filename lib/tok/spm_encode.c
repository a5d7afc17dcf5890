/*
 * spm_encode.c — SentencePiece's encoders over normalized text (spm.h): BPE by piece scores,
 * Unigram by Viterbi, and their sampling (BPE-dropout; Unigram over all or the n best
 * segmentations). Each follows the sentencepiece library's order of operations and float
 * arithmetic, so that ties and rounding fall the same way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "spm_internal.h"

/* SentencePiece's penalty of an unknown character below the lowest piece score. */
#define UNK_PENALTY 10.0f

struct spm_sym {
	uint32_t start, len; /* bytes of the normalized text; len 0: merged into its left */
	int32_t prev, next;
	bool freeze;         /* a user-defined symbol: never merged */
};

struct spm_agenda {
	float score;
	uint32_t left, right, size;
};

struct spm_best {
	double score;  /* a float for SentencePiece's models */
	int32_t start; /* -1: no path ends here yet */
	uint32_t id;
};

/* An entry of a position's n-best list: the score of a path ending here, its last piece, and
 * where it came from (the position and the rank in that position's list). */
struct spm_kbest {
	double score;
	uint32_t id, from, rank;
};

llm_spm_enc *llm_spm_enc_new(const llm_spm *m)
{
	llm_spm_enc *e = llm_calloc(1, sizeof *e);
	e->m = m;
	llm_ids_init(&e->tmp);
	return e;
}

void llm_spm_enc_free(llm_spm_enc *e)
{
	if (!e)
		return;
	llm_buf_release(&e->norm);
	free(e->sym);
	free(e->heap);
	free(e->best);
	free(e->fwd);
	free(e->kb);
	llm_ids_release(&e->tmp);
	free(e);
}

void llm_spm_enc_sample(llm_spm_enc *e, int nbest, double alpha, uint64_t seed)
{
	e->sample = true;
	e->nbest = nbest;
	e->alpha = alpha;
	e->seed = seed;
}

/* The length of the UTF-8 character that byte c starts, by its lead byte as SentencePiece's
 * OneCharLen reads it. */
static size_t one_char_len(unsigned char c)
{
	static const unsigned char len[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
	return len[c >> 4];
}

/* ---- BPE ---- */

/* Whether a comes off the agenda before b: the higher score, then the leftmost. */
static inline bool agenda_before(const struct spm_agenda *a, const struct spm_agenda *b)
{
	return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static void agenda_push(llm_spm_enc *e, size_t *n, struct spm_agenda x)
{
	if (*n == e->heapcap) {
		e->heapcap = e->heapcap ? 2 * e->heapcap : 256;
		e->heap = llm_realloc(e->heap, e->heapcap * sizeof *e->heap);
	}
	struct spm_agenda *h = e->heap;
	size_t i = (*n)++;
	while (i && agenda_before(&x, &h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = x;
}

static struct spm_agenda agenda_pop(llm_spm_enc *e, size_t *n)
{
	struct spm_agenda *h = e->heap, top = h[0], x = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && agenda_before(&h[c + 1], &h[c]))
			c++;
		if (!agenda_before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
	return top;
}

/* Where an UNUSED piece came from when it last entered the agenda (SentencePiece's rev_merge,
 * whose last entry for a piece wins): the lengths of its left and right parts. */
typedef struct {
	uint32_t id, left_len;
} rev_merge;

typedef struct {
	rev_merge *v;
	size_t n, cap;
} rev_list;

static void maybe_add_pair(llm_spm_enc *e, const char *t, size_t *nh, rev_list *rev,
                           int32_t l, int32_t r)
{
	const llm_spm *m = e->m;
	if (l < 0 || r < 0 || e->sym[l].freeze || e->sym[r].freeze)
		return;
	const struct spm_sym *a = &e->sym[l], *b = &e->sym[r];
	uint32_t node = spm_node(m, t + a->start, (size_t)a->len + b->len);
	if (node == SPM_NONE || m->piece[node] == SPM_NONE)
		return;
	uint32_t id = m->piece[node];
	agenda_push(e, nh, (struct spm_agenda){ (float)m->score[id], (uint32_t)l, (uint32_t)r, a->len + b->len });
	if (m->type[id] == LLM_SPM_UNUSED) {
		if (rev->n == rev->cap) {
			rev->cap = rev->cap ? 2 * rev->cap : 16;
			rev->v = llm_realloc(rev->v, rev->cap * sizeof *rev->v);
		}
		rev->v[rev->n++] = (rev_merge){ id, a->len };
	}
}

static void resegment(const llm_spm *m, const rev_list *rev, const char *s, size_t n,
                      llm_ids *out)
{
	uint32_t id = spm_piece_to_id(m, s, n);
	if (m->type[id] == LLM_SPM_UNUSED) {
		for (size_t i = rev->n; i-- > 0;)
			if (rev->v[i].id == id) {
				uint32_t k = rev->v[i].left_len;
				resegment(m, rev, s, k, out);
				resegment(m, rev, s + k, n - k, out);
				return;
			}
	}
	spm_emit(m, s, n, id, out);
}

static void encode_bpe(llm_spm_enc *e, const char *t, size_t n, llm_ids *out)
{
	const llm_spm *m = e->m;
	size_t ns = 0;
	for (size_t pos = 0; pos < n; ns++) {
		if (ns == e->symcap) {
			e->symcap = e->symcap ? 2 * e->symcap : 256;
			e->sym = llm_realloc(e->sym, e->symcap * sizeof *e->sym);
		}
		size_t k = spm_udef_prefix(m, t + pos, n - pos);
		bool freeze = k > 0;
		if (!k) {
			k = one_char_len((unsigned char)t[pos]);
			if (k > n - pos)
				k = n - pos;
		}
		e->sym[ns] = (struct spm_sym){ (uint32_t)pos, (uint32_t)k, (int32_t)ns - 1,
			                        pos + k < n ? (int32_t)ns + 1 : -1, freeze };
		pos += k;
	}
	llm_rng rng;
	bool dropout = e->sample && e->alpha > 0;
	if (dropout)
		llm_rng_seed(&rng, llm_hash64(t, n, e->seed));
	rev_list rev = { NULL, 0, 0 };
	size_t nh = 0;
	for (size_t i = 1; i < ns; i++)
		maybe_add_pair(e, t, &nh, &rev, (int32_t)i - 1, (int32_t)i);
	while (nh) {
		struct spm_agenda top = agenda_pop(e, &nh);
		struct spm_sym *l = &e->sym[top.left], *r = &e->sym[top.right];
		if (!l->len || !r->len || l->len + r->len != top.size)
			continue;
		/* BPE-dropout (Provilkov et al. 2020) as SentencePiece does it: a merge is skipped
		 * with probability alpha, and its pair is not considered again. */
		if (dropout && (e->alpha >= 1 || llm_rng_uniform(&rng) < e->alpha))
			continue;
		l->len += r->len;
		l->next = r->next;
		if (r->next >= 0)
			e->sym[r->next].prev = (int32_t)top.left;
		r->len = 0;
		maybe_add_pair(e, t, &nh, &rev, l->prev, (int32_t)top.left);
		maybe_add_pair(e, t, &nh, &rev, (int32_t)top.left, l->next);
	}
	/* Unknown characters next to each other are one unknown piece, as in Unigram. */
	for (int32_t i = ns ? 0 : -1; i >= 0; i = e->sym[i].next) {
		const struct spm_sym *y = &e->sym[i];
		uint32_t len = y->len;
		if (spm_piece_to_id(m, t + y->start, len) == (uint32_t)m->unk)
			while (y->next >= 0 && spm_piece_to_id(m, t + e->sym[y->next].start,
			                                        e->sym[y->next].len) == (uint32_t)m->unk) {
				i = y->next;
				len += e->sym[i].len;
				y = &e->sym[i];
			}
		resegment(m, &rev, t + y->start + y->len - len, len, out);
	}
	free(rev.v);
}

/* ---- Unigram ---- */

/* The pieces that start at byte pos of t[0..n) and are not UNUSED, shortest first: the
 * edges of SentencePiece's lattice there. */
typedef struct {
	uint32_t node;
	size_t pos, end;
} piece_iter;

static inline piece_iter pieces_at(size_t pos)
{
	return (piece_iter){ 0, pos, pos };
}

/* The next piece's id and its length in *len, or SPM_NONE after the last. */
static inline uint32_t piece_next(const llm_spm *m, const char *t, size_t n, piece_iter *it,
                                  size_t *len)
{
	while (it->end < n) {
		it->node = spm_step(m, it->node, (unsigned char)t[it->end++]);
		if (it->node == SPM_NONE)
			break;
		uint32_t id = m->piece[it->node];
		if (id == SPM_NONE || m->type[id] == LLM_SPM_UNUSED)
			continue;
		*len = it->end - it->pos;
		return id;
	}
	it->end = n;
	return SPM_NONE;
}

static void reserve_best(llm_spm_enc *e, size_t n)
{
	if (n + 1 > e->bestcap) {
		e->bestcap = n + 1;
		e->best = llm_realloc(e->best, e->bestcap * sizeof *e->best);
	}
}

/* Emit the path the backpointers in e->best describe, from the end of t[0..n). */
static void emit_best(llm_spm_enc *e, const char *t, size_t n, llm_ids *out)
{
	e->tmp.n = 0;
	for (size_t end = n; end > 0; end = (size_t)e->best[end].start)
		llm_ids_push(&e->tmp, (uint32_t)end);
	/* Unknown characters next to each other are one unknown piece, as SentencePiece's
	 * Unigram gives them. */
	uint32_t unk = (uint32_t)e->m->unk;
	for (size_t i = e->tmp.n; i-- > 0;) {
		size_t end = e->tmp.v[i], start = (size_t)e->best[end].start;
		uint32_t id = e->best[end].id;
		while (id == unk && i > 0 && e->best[e->tmp.v[i - 1]].id == unk)
			end = e->tmp.v[--i];
		spm_emit(e->m, t + start, end - start, id, out);
	}
}

/* SentencePiece's EncodeOptimized: one pass over the start positions, each keeping the best
 * path to every end. Its arithmetic: a piece's score (a double, from the user-defined bonus's
 * type) plus the float score so far, compared in double and stored as float; the unknown
 * character's in float. */
static void encode_unigram(llm_spm_enc *e, const char *t, size_t n, llm_ids *out)
{
	const llm_spm *m = e->m;
	reserve_best(e, n);
	for (size_t i = 0; i <= n; i++)
		e->best[i] = (struct spm_best){ 0, -1, 0 };
	const double unk_score = m->hf ? m->min_score - UNK_PENALTY
	                               : (double)((float)m->min_score - UNK_PENALTY);
	for (size_t pos = 0; pos < n;) {
		double here = e->best[pos].score;
		size_t mblen = one_char_len((unsigned char)t[pos]);
		if (mblen > n - pos)
			mblen = n - pos;
		bool single = false;
		piece_iter it = pieces_at(pos);
		size_t len;
		for (uint32_t id; (id = piece_next(m, t, n, &it, &len)) != SPM_NONE;) {
			struct spm_best *b = &e->best[pos + len];
			double sc = m->type[id] == LLM_SPM_USER_DEFINED
			            ? (double)((float)len * (float)m->max_score) - 0.1 : m->score[id];
			double cand = sc + here;
			if (b->start < 0 || cand > b->score) {
				b->score = m->hf ? cand : (double)(float)cand;
				b->start = (int32_t)pos;
				b->id = id;
			}
			single |= len == mblen;
		}
		if (!single) {
			struct spm_best *b = &e->best[pos + mblen];
			/* float + float in SentencePiece */
			double cand = m->hf ? unk_score + here : (double)((float)unk_score + (float)here);
			if (b->start < 0 || cand > b->score) {
				b->score = cand;
				b->start = (int32_t)pos;
				b->id = (uint32_t)m->unk;
			}
		}
		pos += mblen;
	}
	emit_best(e, t, n, out);
}

/* A lattice node's score as SentencePiece's sampling lattice gives it: user-defined symbols
 * a bonus over any other path (their length in characters). */
static double lattice_score(const llm_spm *m, uint32_t id, const char *s, size_t len)
{
	if (m->type[id] != LLM_SPM_USER_DEFINED)
		return m->score[id];
	size_t chars = 0;
	for (size_t i = 0; i < len; i += one_char_len((unsigned char)s[i]))
		chars++;
	return (double)chars * m->max_score + 1.0;
}

static double log_add(double a, double b)
{
	if (a == -INFINITY)
		return b;
	double hi = a > b ? a : b, lo = a > b ? b : a;
	return hi + log1p(exp(lo - hi));
}

typedef struct {
	uint32_t start, end, id;
	double score;
} edge;

/* The lattice's edges, in order of their start. */
static edge *lattice_edges(llm_spm_enc *e, const char *t, size_t n, size_t *count)
{
	const llm_spm *m = e->m;
	size_t ne = 0, cap = 64;
	edge *ed = llm_malloc(cap * sizeof *ed);
	for (size_t pos = 0; pos < n;) {
		size_t mblen = one_char_len((unsigned char)t[pos]);
		if (mblen > n - pos)
			mblen = n - pos;
		bool single = false;
		piece_iter it = pieces_at(pos);
		size_t len;
		for (uint32_t id; (id = piece_next(m, t, n, &it, &len)) != SPM_NONE;) {
			if (ne + 2 > cap)
				ed = llm_realloc(ed, (cap *= 2) * sizeof *ed);
			ed[ne++] = (edge){ (uint32_t)pos, (uint32_t)(pos + len), id,
				           lattice_score(m, id, t + pos, len) };
			single |= len == mblen;
		}
		if (!single) {
			if (ne + 2 > cap)
				ed = llm_realloc(ed, (cap *= 2) * sizeof *ed);
			ed[ne++] = (edge){ (uint32_t)pos, (uint32_t)(pos + mblen), (uint32_t)m->unk,
				           m->min_score - UNK_PENALTY };
		}
		pos += mblen;
	}
	*count = ne;
	return ed;
}

/* Draw index i of w[0..n) with probability w[i] / sum(w). */
static size_t draw(llm_rng *rng, const double *w, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += w[i];
	double u = llm_rng_uniform(rng) * sum;
	for (size_t i = 0; i + 1 < n; i++) {
		if (u < w[i])
			return i;
		u -= w[i];
	}
	return n - 1;
}

/* Forward filtering, backward sampling over every segmentation (SentencePiece's
 * Lattice::Sample with inv_theta = alpha). */
static void sample_all(llm_spm_enc *e, const char *t, size_t n, llm_rng *rng, llm_ids *out)
{
	size_t ne;
	edge *ed = lattice_edges(e, t, n, &ne);
	if (n + 1 > e->fwdcap) {
		e->fwdcap = n + 1;
		e->fwd = llm_realloc(e->fwd, e->fwdcap * sizeof *e->fwd);
	}
	double *f = e->fwd;
	for (size_t i = 0; i <= n; i++)
		f[i] = -INFINITY;
	f[0] = 0;
	for (size_t i = 0; i < ne; i++)
		f[ed[i].end] = log_add(f[ed[i].end], f[ed[i].start] + e->alpha * ed[i].score);
	/* The edges by their end, for walking back. */
	size_t *first = llm_calloc(n + 2, sizeof *first);
	for (size_t i = 0; i < ne; i++)
		first[ed[i].end + 1]++;
	for (size_t i = 1; i <= n + 1; i++)
		first[i] += first[i - 1];
	size_t *by_end = llm_malloc((ne ? ne : 1) * sizeof *by_end), *fill = llm_malloc((n + 1) * sizeof *fill);
	memcpy(fill, first, (n + 1) * sizeof *fill);
	for (size_t i = 0; i < ne; i++)
		by_end[fill[ed[i].end]++] = i;
	double *w = llm_malloc((ne ? ne : 1) * sizeof *w);
	reserve_best(e, n);
	for (size_t pos = n; pos > 0;) {
		size_t a = first[pos], z = first[pos + 1];
		for (size_t k = a; k < z; k++) {
			const edge *x = &ed[by_end[k]];
			w[k - a] = exp(f[x->start] + e->alpha * x->score - f[pos]);
		}
		const edge *x = &ed[by_end[a + draw(rng, w, z - a)]];
		e->best[pos].start = (int32_t)x->start;
		e->best[pos].id = x->id;
		pos = x->start;
	}
	emit_best(e, t, n, out);
	free(w);
	free(fill);
	free(by_end);
	free(first);
	free(ed);
}

/* The k best segmentations (exact k-best over the lattice, a list per position), one of them
 * drawn with probability proportional to exp(alpha * score), as SentencePiece's
 * SampleEncode with nbest_size k draws from its NBest. */
static void sample_nbest(llm_spm_enc *e, const char *t, size_t n, size_t k, llm_rng *rng,
                         llm_ids *out)
{
	size_t ne;
	edge *ed = lattice_edges(e, t, n, &ne);
	size_t need = (n + 1) * k;
	if (need > e->kbcap) {
		e->kbcap = need;
		e->kb = llm_realloc(e->kb, need * sizeof *e->kb);
	}
	uint32_t *cnt = llm_calloc(n + 1, sizeof *cnt);
	e->kb[0] = (struct spm_kbest){ 0, 0, 0, 0 };
	cnt[0] = 1;
	for (size_t i = 0; i < ne; i++) {
		const edge *x = &ed[i];
		struct spm_kbest *src = &e->kb[x->start * k], *dst = &e->kb[x->end * k];
		for (uint32_t r = 0; r < cnt[x->start]; r++) {
			struct spm_kbest c = { src[r].score + x->score, x->id, x->start, r };
			uint32_t *nd = &cnt[x->end];
			if (*nd == k && c.score <= dst[k - 1].score)
				break; /* src is sorted: the rest are worse */
			size_t j = *nd < k ? (*nd)++ : k - 1;
			while (j > 0 && dst[j - 1].score < c.score) {
				dst[j] = dst[j - 1];
				j--;
			}
			dst[j] = c;
		}
	}
	double *w = llm_malloc(k * sizeof *w);
	const struct spm_kbest *fin = &e->kb[n * k];
	for (uint32_t r = 0; r < cnt[n]; r++)
		w[r] = exp(e->alpha * (fin[r].score - fin[0].score));
	uint32_t rank = (uint32_t)draw(rng, w, cnt[n]);
	reserve_best(e, n);
	for (size_t pos = n; pos > 0;) {
		const struct spm_kbest *c = &e->kb[pos * k + rank];
		e->best[pos].start = (int32_t)c->from;
		e->best[pos].id = c->id;
		rank = c->rank;
		pos = c->from;
	}
	emit_best(e, t, n, out);
	free(w);
	free(cnt);
	free(ed);
}

void llm_spm_encode(llm_spm_enc *e, const char *s, size_t n, llm_ids *out)
{
	const char *t;
	size_t tn;
	llm_spm_normalize(e, s, n, &t, &tn);
	llm_spm_encode_piece(e, t, tn, out);
}

void llm_spm_encode_piece(llm_spm_enc *e, const char *t, size_t tn, llm_ids *out)
{
	if (tn == 0)
		return;
	if (!e->m->unigram) {
		encode_bpe(e, t, tn, out);
		return;
	}
	if (!e->sample || e->nbest == 0 || e->nbest == 1) {
		encode_unigram(e, t, tn, out);
		return;
	}
	llm_rng rng;
	llm_rng_seed(&rng, llm_hash64(t, tn, e->seed));
	if (e->nbest < 0)
		sample_all(e, t, tn, &rng, out);
	else
		sample_nbest(e, t, tn, (size_t)e->nbest, &rng, out);
}
