/*
 * bpe_train.c — byte-level BPE training (see bpe_train.h).
 *
 * The classic incremental algorithm: pair counts are kept for all distinct pieces ("words")
 * weighted by frequency, each pair remembers the words it occurs in, and a max-heap with lazy
 * entries yields the next merge. A merge rewrites only the words in its list and adjusts the
 * counts of the neighbouring pairs; a heap entry whose count is out of date is pushed again
 * with the current count when popped. Increases are pushed right away, so the heap's top is
 * always the true maximum.
 */
#include "bpe_train.h"

#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "err.h"
#include "hash.h"
#include "json.h"
#include "pretok.h"
#include "utf8.h"

/* A map from byte strings to a uint32 value, the strings kept in one arena. */
typedef struct {
	uint32_t *slot; /* index + 1 into off/len/val; 0 = empty */
	size_t mask, n;
	uint64_t *off;
	uint32_t *len;
	uint64_t *val;
	size_t cap;
	llm_buf arena;
} strmap;

static void strmap_init(strmap *m)
{
	memset(m, 0, sizeof *m);
	m->mask = 1023;
	m->slot = llm_calloc(m->mask + 1, sizeof *m->slot);
}

static void strmap_release(strmap *m)
{
	free(m->slot);
	free(m->off);
	free(m->len);
	free(m->val);
	llm_buf_release(&m->arena);
}

static const char *strmap_key(const strmap *m, size_t i, size_t *len)
{
	*len = m->len[i];
	return m->arena.p + m->off[i];
}

/* Index of s, inserting it with value 0 when absent. */
static size_t strmap_get(strmap *m, const char *s, size_t n)
{
	uint64_t h = llm_hash64(s, n, 0);
	size_t i = h & m->mask;
	for (; m->slot[i]; i = (i + 1) & m->mask) {
		size_t k = m->slot[i] - 1;
		if (m->len[k] == n && memcmp(m->arena.p + m->off[k], s, n) == 0)
			return k;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->off = llm_realloc(m->off, m->cap * sizeof *m->off);
		m->len = llm_realloc(m->len, m->cap * sizeof *m->len);
		m->val = llm_realloc(m->val, m->cap * sizeof *m->val);
	}
	size_t k = m->n++;
	m->off[k] = m->arena.len;
	m->len[k] = (uint32_t)n;
	m->val[k] = 0;
	llm_buf_add(&m->arena, s, n);
	m->slot[i] = (uint32_t)k + 1;
	if (m->n * 2 > m->mask) {
		size_t cap = (m->mask + 1) * 2;
		free(m->slot);
		m->slot = llm_calloc(cap, sizeof *m->slot);
		m->mask = cap - 1;
		for (size_t j = 0; j < m->n; j++) {
			size_t q = llm_hash64(m->arena.p + m->off[j], m->len[j], 0) & m->mask;
			while (m->slot[q])
				q = (q + 1) & m->mask;
			m->slot[q] = (uint32_t)j + 1;
		}
	}
	return k;
}

/* Lookup without inserting; -1 when absent. */
static long strmap_find(const strmap *m, const char *s, size_t n)
{
	uint64_t h = llm_hash64(s, n, 0);
	for (size_t i = h & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
		size_t k = m->slot[i] - 1;
		if (m->len[k] == n && memcmp(m->arena.p + m->off[k], s, n) == 0)
			return (long)k;
	}
	return -1;
}

struct llm_bpe_trainer {
	char *pattern;
	llm_pretok *pt;
	llm_pretok_state *st;
	strmap words; /* piece bytes -> frequency */
	/* the result */
	strmap tokens; /* token bytes -> id */
	uint32_t *merge_l, *merge_r;
	size_t nmerges, cmerges;
	char **specials;
	size_t nspecials;
	bool trained;
};

int llm_bpe_trainer_new(llm_bpe_trainer **out, const char *pattern)
{
	*out = NULL;
	llm_bpe_trainer *tr = llm_calloc(1, sizeof *tr);
	int rc = llm_pretok_new(&tr->pt, pattern, true);
	if (rc) {
		free(tr);
		return rc;
	}
	tr->pattern = llm_strdup(pattern);
	tr->st = llm_pretok_state_new(tr->pt);
	strmap_init(&tr->words);
	strmap_init(&tr->tokens);
	*out = tr;
	return LLM_OK;
}

void llm_bpe_trainer_free(llm_bpe_trainer *tr)
{
	if (!tr)
		return;
	llm_pretok_state_free(tr->st);
	llm_pretok_free(tr->pt);
	free(tr->pattern);
	strmap_release(&tr->words);
	strmap_release(&tr->tokens);
	free(tr->merge_l);
	free(tr->merge_r);
	for (size_t i = 0; i < tr->nspecials; i++)
		free(tr->specials[i]);
	free(tr->specials);
	free(tr);
}

int llm_bpe_trainer_add(llm_bpe_trainer *tr, const char *text, size_t len)
{
	llm_pretok_begin(tr->st, text, len);
	size_t a, z;
	int rc;
	while ((rc = llm_pretok_next(tr->st, &a, &z)) == LLM_OK) {
		size_t k = strmap_get(&tr->words, text + a, z - a); /* may move val */
		tr->words.val[k]++;
	}
	return rc == LLM_EOF ? LLM_OK : rc;
}

/* ---- training state ---- */

typedef struct {
	uint64_t key; /* (l + 1) << 32 | r; 0 = empty */
	uint32_t idx;
} pairslot;

typedef struct {
	uint32_t l, r;
	int64_t count;
	uint32_t *words; /* words it (may) occur in; may hold stale entries */
	uint32_t nw, cw;
	uint32_t dirty;  /* merge number when last pushed for an increase */
} pairinfo;

typedef struct {
	int64_t count;
	uint32_t l, r;
} hitem;

typedef struct {
	pairslot *slot;
	size_t mask;
	pairinfo *p;
	size_t n, cap;
	hitem *heap;
	size_t hn, hcap;
	uint32_t **sym;  /* per word: its symbols */
	uint32_t *nsym;
	uint64_t *freq;
	uint32_t merge_no;
	uint32_t *dirty;  /* pairs whose count rose during this merge */
	size_t ndirty, cdirty;
} trainstate;

static uint64_t mixkey(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 29;
	return x;
}

static pairinfo *pair_get(trainstate *s, uint32_t l, uint32_t r)
{
	uint64_t key = ((uint64_t)l + 1) << 32 | r;
	size_t i = mixkey(key) & s->mask;
	for (; s->slot[i].key; i = (i + 1) & s->mask)
		if (s->slot[i].key == key)
			return &s->p[s->slot[i].idx];
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->p = llm_realloc(s->p, s->cap * sizeof *s->p);
	}
	size_t idx = s->n++;
	s->p[idx] = (pairinfo){ l, r, 0, NULL, 0, 0, UINT32_MAX };
	s->slot[i] = (pairslot){ key, (uint32_t)idx };
	if (s->n * 2 > s->mask) {
		size_t cap = (s->mask + 1) * 2;
		free(s->slot);
		s->slot = llm_calloc(cap, sizeof *s->slot);
		s->mask = cap - 1;
		for (size_t j = 0; j < s->n; j++) {
			uint64_t k = ((uint64_t)s->p[j].l + 1) << 32 | s->p[j].r;
			size_t q = mixkey(k) & s->mask;
			while (s->slot[q].key)
				q = (q + 1) & s->mask;
			s->slot[q] = (pairslot){ k, (uint32_t)j };
		}
	}
	return &s->p[idx];
}

/* Max-heap on count; ties: the lower (l, r) first. */
static bool hbefore(const hitem *a, const hitem *b)
{
	if (a->count != b->count)
		return a->count > b->count;
	if (a->l != b->l)
		return a->l < b->l;
	return a->r < b->r;
}

static void hpush(trainstate *s, hitem x)
{
	if (s->hn == s->hcap) {
		s->hcap = s->hcap ? s->hcap * 2 : 4096;
		s->heap = llm_realloc(s->heap, s->hcap * sizeof *s->heap);
	}
	size_t i = s->hn++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!hbefore(&x, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = x;
}

static hitem hpop(trainstate *s)
{
	hitem top = s->heap[0], x = s->heap[--s->hn];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->hn)
			break;
		if (c + 1 < s->hn && hbefore(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!hbefore(&s->heap[c], &x))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->hn)
		s->heap[i] = x;
	return top;
}

static void add_word(pairinfo *p, uint32_t w)
{
	if (p->nw && p->words[p->nw - 1] == w)
		return;
	if (p->nw == p->cw) {
		p->cw = p->cw ? p->cw * 2 : 4;
		p->words = llm_realloc(p->words, p->cw * sizeof *p->words);
	}
	p->words[p->nw++] = w;
}

static void inc(trainstate *s, uint32_t l, uint32_t r, uint32_t w, int64_t by)
{
	pairinfo *p = pair_get(s, l, r);
	p->count += by;
	add_word(p, w);
	if (p->dirty != s->merge_no) {
		p->dirty = s->merge_no;
		if (s->ndirty == s->cdirty) {
			s->cdirty = s->cdirty ? s->cdirty * 2 : 1024;
			s->dirty = llm_realloc(s->dirty, s->cdirty * sizeof *s->dirty);
		}
		s->dirty[s->ndirty++] = (uint32_t)(p - s->p);
	}
}

/* Push the pairs whose count rose, with their final counts. */
static void push_dirty(trainstate *s)
{
	for (size_t i = 0; i < s->ndirty; i++) {
		pairinfo *p = &s->p[s->dirty[i]];
		if (p->count > 0)
			hpush(s, (hitem){ p->count, p->l, p->r });
	}
	s->ndirty = 0;
}

static void dec(trainstate *s, uint32_t l, uint32_t r, int64_t by)
{
	pair_get(s, l, r)->count -= by;
}

int llm_bpe_trainer_train(llm_bpe_trainer *tr, size_t vocab_size, uint64_t min_freq,
                          const char *const *specials, size_t nspecials)
{
	if (tr->trained)
		return llm_fail(LLM_EINVAL, "the trainer has already trained");
	if (vocab_size < 256 + nspecials)
		return llm_fail(LLM_EINVAL, "vocabulary size %zu is below 256 bytes + %zu special tokens",
		                vocab_size, nspecials);
	for (size_t i = 0; i < nspecials; i++) {
		if (!*specials[i])
			return llm_fail(LLM_EINVAL, "empty special token");
		for (size_t j = 0; j < i; j++)
			if (strcmp(specials[i], specials[j]) == 0)
				return llm_fail(LLM_EINVAL, "special token '%s' given twice", specials[i]);
	}
	if (min_freq < 1)
		min_freq = 1;
	tr->trained = true;
	for (int c = 0; c < 256; c++) {
		char ch = (char)c;
		size_t k = strmap_get(&tr->tokens, &ch, 1);
		tr->tokens.val[k] = (uint64_t)c;
	}
	trainstate s;
	memset(&s, 0, sizeof s);
	s.mask = 4095;
	s.slot = llm_calloc(s.mask + 1, sizeof *s.slot);
	size_t nw = tr->words.n;
	s.sym = llm_malloc((nw + 1) * sizeof *s.sym);
	s.nsym = llm_malloc((nw + 1) * sizeof *s.nsym);
	s.freq = tr->words.val;
	for (size_t w = 0; w < nw; w++) {
		size_t n;
		const unsigned char *p = (const unsigned char *)strmap_key(&tr->words, w, &n);
		s.sym[w] = llm_malloc((n ? n : 1) * sizeof **s.sym);
		s.nsym[w] = (uint32_t)n;
		for (size_t i = 0; i < n; i++)
			s.sym[w][i] = p[i];
	}
	for (size_t w = 0; w < nw; w++)
		for (uint32_t i = 0; i + 1 < s.nsym[w]; i++)
			inc(&s, s.sym[w][i], s.sym[w][i + 1], (uint32_t)w, (int64_t)s.freq[w]);
	push_dirty(&s);
	llm_buf bytes = LLM_BUF_INIT;
	/* Token ids equal their index in tr->tokens: bytes first, then each new token in turn. */
	uint32_t next_id = 256;
	while (next_id + nspecials < vocab_size && s.hn) {
		hitem top = hpop(&s);
		pairinfo *p = pair_get(&s, top.l, top.r);
		if (p->count != top.count) {
			/* Out of date: a decrease (increases were pushed when they happened). */
			if (p->count > 0)
				hpush(&s, (hitem){ p->count, p->l, p->r });
			continue;
		}
		if ((uint64_t)p->count < min_freq)
			break;
		uint32_t a = top.l, b = top.r;
		llm_buf_reset(&bytes);
		for (int side = 0; side < 2; side++) {
			size_t n;
			const char *t = strmap_key(&tr->tokens, side ? b : a, &n);
			llm_buf_add(&bytes, t, n);
		}
		long existing = strmap_find(&tr->tokens, bytes.p, bytes.len);
		uint32_t nid;
		if (existing >= 0) {
			nid = (uint32_t)tr->tokens.val[existing];
		} else {
			nid = next_id++;
			size_t k = strmap_get(&tr->tokens, bytes.p, bytes.len);
			tr->tokens.val[k] = nid;
		}
		if (tr->nmerges == tr->cmerges) {
			tr->cmerges = tr->cmerges ? tr->cmerges * 2 : 1024;
			tr->merge_l = llm_realloc(tr->merge_l, tr->cmerges * sizeof *tr->merge_l);
			tr->merge_r = llm_realloc(tr->merge_r, tr->cmerges * sizeof *tr->merge_r);
		}
		tr->merge_l[tr->nmerges] = a;
		tr->merge_r[tr->nmerges] = b;
		tr->nmerges++;
		s.merge_no++;
		uint32_t *wl = p->words, nwl = p->nw;
		p->words = NULL;
		p->nw = p->cw = 0;
		for (uint32_t q = 0; q < nwl; q++) {
			uint32_t w = wl[q];
			uint32_t *sy = s.sym[w], n = s.nsym[w], j = 0;
			int64_t f = (int64_t)s.freq[w];
			/* Left to right, non-overlapping, as encoding applies the merge. */
			for (uint32_t i = 0; i < n;) {
				if (i + 1 < n && sy[i] == a && sy[i + 1] == b) {
					if (j > 0) {
						dec(&s, sy[j - 1], a, f);
						inc(&s, sy[j - 1], nid, w, f);
					}
					dec(&s, a, b, f);
					if (i + 2 < n) {
						dec(&s, b, sy[i + 2], f);
						inc(&s, nid, sy[i + 2], w, f);
					}
					sy[j++] = nid;
					i += 2;
				} else {
					sy[j++] = sy[i++];
				}
			}
			s.nsym[w] = j;
		}
		free(wl);
		push_dirty(&s);
	}
	llm_buf_release(&bytes);
	free(s.dirty);
	for (size_t i = 0; i < s.n; i++)
		free(s.p[i].words);
	free(s.p);
	free(s.slot);
	free(s.heap);
	for (size_t w = 0; w < nw; w++)
		free(s.sym[w]);
	free(s.sym);
	free(s.nsym);
	tr->specials = llm_malloc((nspecials + 1) * sizeof *tr->specials);
	for (size_t i = 0; i < nspecials; i++)
		tr->specials[i] = llm_strdup(specials[i]);
	tr->nspecials = nspecials;
	return LLM_OK;
}

size_t llm_bpe_trainer_vocab_size(const llm_bpe_trainer *tr)
{
	return tr->tokens.n + tr->nspecials;
}

/* A token's bytes in GPT-2's byte-level characters, as a JSON string. */
static void put_bytelevel(llm_buf *out, const char *s, size_t n, llm_buf *tmp)
{
	llm_buf_reset(tmp);
	for (size_t i = 0; i < n; i++) {
		char u[4];
		size_t k = llm_utf8_encode(llm_bpe_byte_to_cp((unsigned char)s[i]), u);
		llm_buf_add(tmp, u, k);
	}
	llm_json_put_str(out, tmp->p, tmp->len);
}

void llm_bpe_trainer_write_hf(const llm_bpe_trainer *tr, llm_buf *out)
{
	llm_buf tmp = LLM_BUF_INIT;
	size_t ntok = tr->tokens.n;
	llm_buf_adds(out, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n"
	                  "  \"added_tokens\": [");
	for (size_t i = 0; i < tr->nspecials; i++) {
		llm_buf_addf(out, "%s\n    {\"id\": %zu, \"content\": ", i ? "," : "", ntok + i);
		llm_json_put_str(out, tr->specials[i], strlen(tr->specials[i]));
		llm_buf_adds(out, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
		                  "\"normalized\": false, \"special\": true}");
	}
	llm_buf_adds(out, "\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": ");
	if (strcmp(tr->pattern, llm_pretok_named("gpt2")) == 0) {
		llm_buf_adds(out, "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
		                  "\"trim_offsets\": true, \"use_regex\": true}");
	} else {
		llm_buf_adds(out, "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", "
		                  "\"pattern\": {\"Regex\": ");
		llm_json_put_str(out, tr->pattern, strlen(tr->pattern));
		llm_buf_adds(out, "}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
		                  "\"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
		                  "\"use_regex\": false}]}");
	}
	llm_buf_adds(out, ",\n  \"post_processor\": null,\n  \"decoder\": {\"type\": \"ByteLevel\", "
	                  "\"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},\n"
	                  "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n"
	                  "    \"unk_token\": null,\n    \"continuing_subword_prefix\": null,\n"
	                  "    \"end_of_word_suffix\": null,\n    \"fuse_unk\": false,\n"
	                  "    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n"
	                  "    \"vocab\": {");
	for (size_t i = 0; i < ntok; i++) {
		size_t n;
		const char *s = strmap_key(&tr->tokens, i, &n);
		llm_buf_adds(out, i ? ",\n      " : "\n      ");
		put_bytelevel(out, s, n, &tmp);
		llm_buf_addf(out, ": %llu", (unsigned long long)tr->tokens.val[i]);
	}
	llm_buf_adds(out, "\n    },\n    \"merges\": [");
	llm_buf pair = LLM_BUF_INIT;
	for (size_t m = 0; m < tr->nmerges; m++) {
		llm_buf_reset(&pair);
		for (int side = 0; side < 2; side++) {
			uint32_t id = side ? tr->merge_r[m] : tr->merge_l[m];
			size_t n;
			const char *s = strmap_key(&tr->tokens, id, &n);
			if (side)
				llm_buf_addc(&pair, ' ');
			for (size_t i = 0; i < n; i++) {
				char u[4];
				size_t k = llm_utf8_encode(llm_bpe_byte_to_cp((unsigned char)s[i]), u);
				llm_buf_add(&pair, u, k);
			}
		}
		llm_buf_adds(out, m ? ",\n      " : "\n      ");
		llm_json_put_str(out, pair.p, pair.len);
	}
	llm_buf_adds(out, "\n    ]\n  }\n}\n");
	llm_buf_release(&pair);
	llm_buf_release(&tmp);
}

void llm_bpe_trainer_write_tiktoken(const llm_bpe_trainer *tr, llm_buf *out)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < tr->tokens.n; i++) {
		size_t n;
		const unsigned char *s = (const unsigned char *)strmap_key(&tr->tokens, i, &n);
		for (size_t k = 0; k < n; k += 3) {
			uint32_t x = (uint32_t)s[k] << 16 | (k + 1 < n ? (uint32_t)s[k + 1] << 8 : 0) |
			             (k + 2 < n ? s[k + 2] : 0);
			char q[4] = { b64[x >> 18], b64[(x >> 12) & 63], k + 1 < n ? b64[(x >> 6) & 63] : '=',
				      k + 2 < n ? b64[x & 63] : '=' };
			llm_buf_add(out, q, 4);
		}
		llm_buf_addf(out, " %llu\n", (unsigned long long)tr->tokens.val[i]);
	}
}
