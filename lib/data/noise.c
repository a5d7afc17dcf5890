/*
 * noise.c — input noise for robustness training (see noise.h).
 *
 * The confusion table is keyed by the first token of each "from" sequence (open addressing),
 * so the scan costs one probe per position however many pairs are loaded; the candidates at
 * one key are few (homophones of one word), so they are a short list. Most positions start
 * no pair: a bitmap of the first tokens' low 16 bits turns them away before any probe, and
 * the probe itself uses a multiplicative hash (with XXH3 per position, the lookups were
 * 43% of llm-noise's time with every document noised).
 */
#include "noise.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"

typedef struct {
	size_t off;   /* from at seq[off], to at seq[off + n] */
	size_t n;
	size_t next;  /* next entry with the same first token, or SIZE_MAX */
} entry;

struct llm_confusions {
	uint32_t *seq;
	size_t nseq, capseq;
	entry *e;
	size_t n, cap;
	/* first token -> first entry index; slot empty when head == SIZE_MAX */
	uint32_t *keys;
	size_t *heads;
	size_t nslots, used;
	uint32_t max_id;
	uint64_t starts[1024]; /* bit (t & 0xffff): some "from" may start with token t */
};

static int may_start(const llm_confusions *c, uint32_t tok)
{
	return (int)(c->starts[(tok >> 6) & 1023] >> (tok & 63) & 1);
}

static size_t slot_of(const llm_confusions *c, uint32_t tok)
{
	size_t mask = c->nslots - 1;
	size_t i = (size_t)(((uint64_t)tok * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
	while (c->heads[i] != SIZE_MAX && c->keys[i] != tok)
		i = (i + 1) & mask;
	return i;
}

static void rehash(llm_confusions *c, size_t nslots)
{
	uint32_t *ok = c->keys;
	size_t *oh = c->heads, on = c->nslots;
	c->nslots = nslots;
	c->keys = llm_malloc(nslots * sizeof *c->keys);
	c->heads = llm_malloc(nslots * sizeof *c->heads);
	for (size_t i = 0; i < nslots; i++)
		c->heads[i] = SIZE_MAX;
	for (size_t i = 0; i < on; i++)
		if (oh[i] != SIZE_MAX) {
			size_t s = slot_of(c, ok[i]);
			c->keys[s] = ok[i];
			c->heads[s] = oh[i];
		}
	free(ok);
	free(oh);
}

llm_confusions *llm_confusions_new(void)
{
	llm_confusions *c = llm_calloc(1, sizeof *c);
	rehash(c, 64);
	return c;
}

void llm_confusions_free(llm_confusions *c)
{
	if (!c)
		return;
	free(c->seq);
	free(c->e);
	free(c->keys);
	free(c->heads);
	free(c);
}

int llm_confusions_add(llm_confusions *c, const uint32_t *from, size_t from_n,
                       const uint32_t *to, size_t to_n)
{
	if (from_n == 0 || from_n != to_n)
		return llm_fail(LLM_EINVAL, "confusion pair of %zu and %zu tokens: lengths must be equal",
		                from_n, to_n);
	if (c->nseq + 2 * from_n > c->capseq) {
		c->capseq = (c->nseq + 2 * from_n) * 2;
		c->seq = llm_realloc(c->seq, c->capseq * sizeof *c->seq);
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->e = llm_realloc(c->e, c->cap * sizeof *c->e);
	}
	memcpy(c->seq + c->nseq, from, from_n * 4);
	memcpy(c->seq + c->nseq + from_n, to, from_n * 4);
	for (size_t i = 0; i < from_n; i++) {
		c->max_id = from[i] > c->max_id ? from[i] : c->max_id;
		c->max_id = to[i] > c->max_id ? to[i] : c->max_id;
	}
	entry *e = &c->e[c->n];
	e->off = c->nseq;
	e->n = from_n;
	e->next = SIZE_MAX;
	c->nseq += 2 * from_n;
	if (2 * (c->used + 1) > c->nslots)
		rehash(c, 2 * c->nslots);
	c->starts[(from[0] >> 6) & 1023] |= (uint64_t)1 << (from[0] & 63);
	size_t s = slot_of(c, from[0]);
	if (c->heads[s] == SIZE_MAX) {
		c->keys[s] = from[0];
		c->heads[s] = c->n;
		c->used++;
	} else { /* append: "first loaded wins" among equal lengths */
		size_t i = c->heads[s];
		while (c->e[i].next != SIZE_MAX)
			i = c->e[i].next;
		c->e[i].next = c->n;
	}
	c->n++;
	return LLM_OK;
}

size_t llm_confusions_count(const llm_confusions *c) { return c->n; }

/* Space-separated decimal ids; 0 when s holds anything else. */
static int parse_ids(const char *s, size_t n, llm_ids *out)
{
	size_t i = 0;
	while (i < n) {
		while (i < n && s[i] == ' ')
			i++;
		if (i == n)
			break;
		uint64_t v = 0;
		size_t start = i;
		while (i < n && s[i] >= '0' && s[i] <= '9' && v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(s[i++] - '0');
		if (i == start || v > UINT32_MAX || (i < n && s[i] != ' '))
			return 0;
		llm_ids_push(out, (uint32_t)v);
	}
	return out->n > 0;
}

int llm_confusions_load(llm_confusions *c, const char *path, const llm_bpe *bpe,
                        uint64_t *skipped)
{
	llm_reader *r;
	int st = llm_reader_open(&r, path);
	if (st != LLM_OK)
		return st;
	llm_bpe_enc *enc = bpe ? llm_bpe_enc_new(bpe) : NULL;
	llm_ids a, b;
	llm_ids_init(&a);
	llm_ids_init(&b);
	char *line;
	size_t len;
	while ((st = llm_reader_line(r, &line, &len)) == LLM_OK) {
		unsigned long long ln = (unsigned long long)llm_reader_lineno(r);
		if (len == 0 || line[0] == '#')
			continue;
		char *tab = memchr(line, '\t', len);
		if (!tab) {
			st = llm_fail(LLM_EFORMAT, "%s:%llu: no tab between the two sides", path, ln);
			break;
		}
		size_t la = (size_t)(tab - line), lb = len - la - 1;
		a.n = b.n = 0;
		if (enc) {
			if ((st = llm_bpe_encode(enc, line, la, LLM_BPE_SPECIAL_IGNORE, &a)) != LLM_OK ||
			    (st = llm_bpe_encode(enc, tab + 1, lb, LLM_BPE_SPECIAL_IGNORE, &b)) != LLM_OK) {
				st = llm_fail(st, "%s:%llu: cannot tokenize", path, ln);
				break;
			}
		} else if (!parse_ids(line, la, &a) || !parse_ids(tab + 1, lb, &b)) {
			st = llm_fail(LLM_EFORMAT, "%s:%llu: not token ids (a tokenizer reads strings)", path, ln);
			break;
		}
		if (a.n == 0 || a.n != b.n)
			++*skipped;
		else
			llm_confusions_add(c, a.v, a.n, b.v, b.n);
	}
	if (st == LLM_ETOOLONG)
		st = llm_fail(LLM_EFORMAT, "%s:%llu: line too long", path,
		              (unsigned long long)llm_reader_lineno(r));
	llm_ids_release(&a);
	llm_ids_release(&b);
	llm_bpe_enc_free(enc);
	llm_reader_free(r);
	return st == LLM_EOF ? LLM_OK : st;
}
uint32_t llm_confusions_max_id(const llm_confusions *c) { return c->max_id; }

/* The longest entry whose "from" matches at in[0..avail), or NULL. */
static const entry *match(const llm_confusions *c, const uint32_t *in, size_t avail)
{
	if (!may_start(c, in[0]))
		return NULL;
	size_t s = slot_of(c, in[0]);
	const entry *best = NULL;
	for (size_t i = c->heads[s]; i != SIZE_MAX; i = c->e[i].next) {
		const entry *e = &c->e[i];
		if (e->n <= avail && (!best || e->n > best->n) &&
		    memcmp(c->seq + e->off, in, e->n * 4) == 0)
			best = e;
	}
	return best;
}

void llm_noise_opts_init(llm_noise_opts *o)
{
	memset(o, 0, sizeof *o);
	o->docs = 0.05;
	o->mask = 0.03;
	o->swap = 0.15;
	o->confuse = 0.01;
}

uint64_t llm_noise_doc_key(const char *id, size_t id_len, const uint32_t *labels, size_t n)
{
	/* Different seeds keep an id from colliding with a token sequence of the same bytes. */
	return id ? llm_hash64(id, id_len, 1) : llm_hash64(labels, n * sizeof *labels, 2);
}

int llm_noise_select(const llm_noise_opts *o, uint64_t key, size_t n, llm_noise_counts *k)
{
	llm_rng r;
	llm_rng_seed2(&r, o->seed, key);
	if (llm_rng_uniform(&r) < o->docs) /* the draw llm_noise_apply starts with */
		return 1;
	k->docs++;
	k->tokens += n;
	return 0;
}

/*
 * The per-token loops below draw once or twice per token; through llm_rng_uniform, a call
 * with the state in memory, the draws were a third of llm-noise's time with every document
 * noised. This is the same xoshiro256** step as llm_rng_next (hash.c), draw for draw, with the
 * state in a local the compiler keeps in registers; test_noise checks the two agree.
 */
typedef struct {
	uint64_t s0, s1, s2, s3;
} xoshiro;

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline double draw(xoshiro *g)
{
	uint64_t result = rotl(g->s1 * 5, 7) * 9, t = g->s1 << 17;
	g->s2 ^= g->s0;
	g->s3 ^= g->s1;
	g->s1 ^= g->s2;
	g->s0 ^= g->s3;
	g->s2 ^= t;
	g->s3 = rotl(g->s3, 45);
	return (result >> 11) * 0x1.0p-53; /* as llm_rng_uniform */
}

int llm_noise_apply(const llm_noise_opts *o, uint64_t key, const uint32_t *labels,
                    uint32_t *inputs, size_t n, llm_noise_counts *k)
{
	llm_rng r;
	llm_rng_seed2(&r, o->seed, key);
	k->docs++;
	k->tokens += n;
	if (!(llm_rng_uniform(&r) < o->docs))
		return 0;
	k->docs_noised++;
	k->tokens_noised += n;
	xoshiro g = { r.s[0], r.s[1], r.s[2], r.s[3] };
	const llm_confusions *c = o->confusions;
	if (c && c->n && o->confuse > 0) {
		for (size_t i = 0; i < n;) {
			const entry *e = match(c, inputs + i, n - i);
			if (e && draw(&g) < o->confuse) {
				memcpy(inputs + i, c->seq + e->off + e->n, e->n * 4);
				k->confused++;
				i += e->n;
			} else {
				i++;
			}
		}
	}
	uint64_t swapped = 0, masked = 0, changed = 0;
	if (o->swap > 0)
		for (size_t i = 0; i + 1 < n;) {
			if (draw(&g) < o->swap) {
				uint32_t t = inputs[i];
				inputs[i] = inputs[i + 1];
				inputs[i + 1] = t;
				swapped++;
				i += 2;
			} else {
				i++;
			}
		}
	if (o->mask > 0)
		for (size_t i = 0; i < n; i++)
			if (draw(&g) < o->mask) {
				inputs[i] = o->mask_id;
				masked++;
			}
	for (size_t i = 0; i < n; i++)
		changed += inputs[i] != labels[i];
	k->swapped += swapped;
	k->masked += masked;
	k->changed += changed;
	return 1;
}
