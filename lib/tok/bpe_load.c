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

/* ---- tiktoken rank files ---- */

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decode standard base64 with padding; returns the length or -1. */
static long b64decode(const char *s, size_t n, llm_buf *out)
{
	if (n == 0 || n % 4)
		return -1;
	llm_buf_reset(out);
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else {
				if (pad)
					return -1;
				v[k] = b64val((unsigned char)s[i + k]);
				if (v[k] < 0)
					return -1;
			}
		}
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		char o[3] = { (char)(x >> 16), (char)(x >> 8), (char)x };
		llm_buf_add(out, o, 3 - (size_t)pad);
	}
	return (long)out->len;
}

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

static const encoding encodings[] = {
	{ "gpt2", "gpt2", "<|endoftext|>", 50256, sp_gpt2, 1, NULL, 0, 0 },
	{ "r50k", "r50k", "<|endoftext|>", 50256, sp_gpt2, 1, NULL, 0, 0 },
	{ "p50k", "p50k", "<|endoftext|>", 50256, sp_gpt2, 1, NULL, 0, 0 },
	{ "cl100k", "cl100k", "<|endoftext|>", 100257, sp_cl100k, 4, NULL, 0, 0 },
	{ "o200k", "o200k", "<|endoftext|>", 199999, sp_o200k, 1, NULL, 0, 0 },
	{ "llama3", "llama3", "<|end_of_text|>", 128000, sp_llama3, 10,
	  "<|reserved_special_token_%u|>", 246, 5 },
	{ "qwen", "qwen", "<|endoftext|>", 151643, sp_qwen, 3, "<|extra_%u|>", 205, 0 },
};

static const encoding *find_encoding(const char *name)
{
	size_t n = strlen(name);
	if (n > 5 && strcmp(name + n - 5, "_base") == 0)
		n -= 5;
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
		rc = bpe_add_special(b, e->specials[i], strlen(e->specials[i]), id++, ntokens);
	for (uint32_t k = 0; k < e->nreserved && !rc; k++) {
		char t[64];
		snprintf(t, sizeof t, e->reserved, e->reserved_from + k);
		rc = bpe_add_special(b, t, strlen(t), id++, ntokens);
	}
	/* o200k and cl100k have one more special after a gap. */
	if (!rc && strcmp(e->name, "cl100k") == 0)
		rc = bpe_add_special(b, "<|endofprompt|>", 15, 100276, ntokens);
	if (!rc && strcmp(e->name, "o200k") == 0)
		rc = bpe_add_special(b, "<|endofprompt|>", 15, 200018, ntokens);
	return rc;
}

int llm_bpe_load_tiktoken(llm_bpe **out, const char *data, size_t len, const char *name,
                          const char *encname, const char *pattern)
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
			                "llama3, qwen)", encname);
		}
	} else {
		enc = encoding_from_path(b->name);
	}
	if (!enc && !pattern) {
		llm_bpe_free(b);
		return llm_fail(LLM_EINVAL, "%s: cannot tell the encoding from the file name; "
		                "name it (--encoding) or give a pattern", name);
	}
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	lines++;
	llm_buf tok = LLM_BUF_INIT;
	int rc = LLM_OK;
	size_t lineno = 0, ntokens = 0;
	for (size_t i = 0; i < len && !rc;) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - data) : len;
		const char *line = data + i;
		size_t ll = e - i;
		i = nl ? e + 1 : len;
		lineno++;
		if (ll && line[ll - 1] == '\r')
			ll--;
		if (ll == 0)
			continue;
		const char *sp = memchr(line, ' ', ll);
		if (!sp) {
			rc = llm_fail(LLM_EFORMAT, "%s:%zu: expected 'base64 rank'", b->name, lineno);
			break;
		}
		size_t bl = (size_t)(sp - line);
		uint64_t rank = 0;
		const char *r = sp + 1, *rend = line + ll;
		if (r == rend)
			rc = llm_fail(LLM_EFORMAT, "%s:%zu: missing rank", b->name, lineno);
		for (; r < rend && !rc; r++) {
			if (*r < '0' || *r > '9' || rank > lines + MAX_HOLES)
				rc = llm_fail(LLM_EFORMAT, "%s:%zu: bad rank", b->name, lineno);
			rank = rank * 10 + (uint64_t)(*r - '0');
		}
		if (rc)
			break;
		if (b64decode(line, bl, &tok) <= 0) {
			rc = llm_fail(LLM_EFORMAT, "%s:%zu: bad base64 '%.*s'", b->name, lineno,
			              (int)(bl > 64 ? 64 : bl), line);
			break;
		}
		ntokens++;
		if (rank < b->ntok && b->len[rank] != NO_TOKEN) {
			rc = llm_fail(LLM_EFORMAT, "%s:%zu: rank %llu appears twice", b->name, lineno,
			              (unsigned long long)rank);
			break;
		}
		rc = bpe_set_token(b, (uint32_t)rank, tok.p, tok.len, false, lines);
		if (rc)
			rc = llm_fail(rc, "%s:%zu: %s", b->name, lineno, llm_last_error());
	}
	llm_buf_release(&tok);
	if (!rc && enc)
		rc = add_encoding_specials(b, enc, lines + 1024);
	if (!rc)
		rc = bpe_finish(b, pattern ? pattern : llm_pretok_named(enc->pattern), false);
	if (!rc)
		bpe_build_pairs_from_ranks(b);
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	if (enc)
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

/* Read a vocab object {"token": id, ...} into b. */
static int load_vocab(llm_bpe *b, const llm_json_val *vocab)
{
	if (vocab->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: the vocabulary is not an object", b->name);
	size_t n = 0, it = 0;
	llm_json_val k, v;
	while (llm_json_next(vocab, &it, &k, &v) == LLM_OK)
		n++;
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
		if (bytelevel_decode(key.p, key.len, &bytes)) {
			rc = llm_fail(LLM_EFORMAT, "%s: vocabulary entry %.*s is not byte-level", b->name,
			              (int)(k.len > 64 ? 64 : k.len), k.p);
			break;
		}
		rc = bpe_set_token(b, (uint32_t)id, bytes.p, bytes.len, false, n);
	}
	if (rc == LLM_EOF)
		rc = LLM_OK;
	llm_buf_release(&key);
	llm_buf_release(&bytes);
	return rc;
}

/* One merge "a b" (or its two parts): its pair gets rank `rank`. */
static int add_merge(llm_bpe *b, const char *l, size_t ln, const char *r, size_t rn, uint32_t rank,
                     llm_buf *tmp)
{
	if (bytelevel_decode(l, ln, tmp))
		goto bad;
	int64_t a = bpe_bytes_id(b, tmp->p, tmp->len);
	size_t split = tmp->len;
	if (bytelevel_decode(r, rn, tmp))
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
		return llm_fail(LLM_EFORMAT, "merge %u '%.*s %.*s' is not in the vocabulary", rank + 1, (int)(ln > 64 ? 64 : ln), l, (int)(rn > 64 ? 64 : rn), r);
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
	llm_json_val t = llm_json_member(obj, "type");
	return t.type == LLM_JSON_STRING && llm_json_str_eq(&t, type);
}

/* Quote a literal string as a PCRE2 pattern. */
static void quote_regex(const char *s, size_t n, llm_buf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (strchr("\\^$.|?*+()[]{}", s[i]) && s[i])
			llm_buf_addc(out, '\\');
		llm_buf_addc(out, s[i]);
	}
}

static int split_pattern(llm_bpe *b, const llm_json_val *split, llm_buf *pat)
{
	llm_json_val p = llm_json_member(split, "pattern");
	llm_json_val beh = llm_json_member(split, "behavior");
	llm_json_val inv = llm_json_member(split, "invert");
	if (beh.type != LLM_JSON_STRING || !llm_json_str_eq(&beh, "Isolated") || !off(&inv))
		return llm_fail(LLM_EUNSUPPORTED, "%s: only Split pre-tokenizers with behavior "
		                "\"Isolated\" are supported", b->name);
	llm_json_val re = llm_json_member(&p, "Regex"), lit = llm_json_member(&p, "String");
	llm_buf_reset(pat);
	if (re.type == LLM_JSON_STRING)
		return llm_json_str(&re, pat) ? llm_fail(LLM_EFORMAT, "%s: bad Split pattern", b->name) : LLM_OK;
	if (lit.type == LLM_JSON_STRING) {
		llm_buf tmp = LLM_BUF_INIT;
		llm_json_str(&lit, &tmp);
		quote_regex(tmp.p, tmp.len, pat);
		llm_buf_release(&tmp);
		return LLM_OK;
	}
	return llm_fail(LLM_EFORMAT, "%s: Split has no pattern", b->name);
}

/* ByteLevel pre-tokenizer options; sets *use_regex. */
static int bytelevel_opts(llm_bpe *b, const llm_json_val *bl, bool *use_regex)
{
	llm_json_val ur = llm_json_member(bl, "use_regex"), aps = llm_json_member(bl, "add_prefix_space");
	*use_regex = ur.type != LLM_JSON_FALSE;
	b->prefix_space = aps.type == LLM_JSON_TRUE;
	return LLM_OK;
}

/* The pre-tokenizer of a tokenizer.json as one pattern (NULL in *pat->p when none). */
static int hf_pretokenizer(llm_bpe *b, const llm_json_val *pre, llm_buf *pat, bool *have)
{
	*have = false;
	if (off(pre))
		return LLM_OK;
	bool use_regex;
	if (is_type(pre, "ByteLevel")) {
		bytelevel_opts(b, pre, &use_regex);
		if (use_regex) {
			llm_buf_reset(pat);
			llm_buf_adds(pat, llm_pretok_named("gpt2"));
			*have = true;
		}
		return LLM_OK;
	}
	if (is_type(pre, "Split")) {
		*have = true;
		return split_pattern(b, pre, pat);
	}
	if (is_type(pre, "Sequence")) {
		llm_json_val list = llm_json_member(pre, "pretokenizers");
		size_t it = 0, n = 0;
		llm_json_val k, v;
		int rc = LLM_OK;
		while (!rc && list.type == LLM_JSON_ARRAY && llm_json_next(&list, &it, &k, &v) == LLM_OK) {
			n++;
			if (is_type(&v, "Split") && !*have) {
				*have = true;
				rc = split_pattern(b, &v, pat);
			} else if (is_type(&v, "ByteLevel")) {
				bytelevel_opts(b, &v, &use_regex);
				if (use_regex && *have)
					rc = llm_fail(LLM_EUNSUPPORTED, "%s: a Split followed by a regex "
					              "ByteLevel is not supported", b->name);
				else if (use_regex) {
					llm_buf_reset(pat);
					llm_buf_adds(pat, llm_pretok_named("gpt2"));
					*have = true;
				}
			} else {
				rc = llm_fail(LLM_EUNSUPPORTED, "%s: unsupported pre-tokenizer in Sequence", b->name);
			}
		}
		return rc;
	}
	return llm_fail(LLM_EUNSUPPORTED, "%s: unsupported pre-tokenizer (ByteLevel, Split and "
	                "Sequence of them are supported)", b->name);
}

int llm_bpe_load_hf(llm_bpe **out, const char *data, size_t len, const char *name,
                         const char *pattern)
{
	*out = NULL;
	llm_bpe *b = bpe_new(name);
	b->file_id = llm_hash64(data, len, 0);
	llm_json_val root;
	size_t epos = 0;
	const char *emsg = NULL;
	llm_buf pat = LLM_BUF_INIT, tmp = LLM_BUF_INIT;
	int rc = LLM_OK;
	if (llm_json_parse_value(data, len, &root, &epos, &emsg) != LLM_OK) {
		rc = llm_fail(LLM_EFORMAT, "%s: byte %zu: %s", b->name, epos + 1, emsg);
		goto done;
	}
	if (root.type != LLM_JSON_OBJECT) {
		rc = llm_fail(LLM_EFORMAT, "%s: not a JSON object", b->name);
		goto done;
	}
	llm_json_val model = llm_json_member(&root, "model");
	if (model.type != LLM_JSON_OBJECT) {
		rc = llm_fail(LLM_EFORMAT, "%s: no \"model\" object", b->name);
		goto done;
	}
	llm_json_val type = llm_json_member(&model, "type");
	if (type.type != LLM_JSON_INVALID && !(type.type == LLM_JSON_STRING && llm_json_str_eq(&type, "BPE"))) {
		rc = llm_fail(LLM_EUNSUPPORTED, "%s: model type %.*s is not BPE", b->name,
		              (int)(type.len > 32 ? 32 : type.len), type.p);
		goto done;
	}
	static const char *const unsupported[] = { "dropout", "continuing_subword_prefix",
		                                   "end_of_word_suffix", "byte_fallback" };
	for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++) {
		llm_json_val v = llm_json_member(&model, unsupported[i]);
		if (!off(&v) && !(v.type == LLM_JSON_STRING && v.len == 2)) {
			rc = llm_fail(LLM_EUNSUPPORTED, "%s: model option '%s' is not supported", b->name,
			              unsupported[i]);
			goto done;
		}
	}
	llm_json_val norm = llm_json_member(&root, "normalizer");
	if (!off(&norm)) {
		rc = llm_fail(LLM_EUNSUPPORTED, "%s: normalizers are not supported", b->name);
		goto done;
	}
	llm_json_val vocab = llm_json_member(&model, "vocab");
	if ((rc = load_vocab(b, &vocab)))
		goto done;
	/* Added tokens: split off before pre-tokenization, like special tokens. */
	llm_json_val added = llm_json_member(&root, "added_tokens");
	size_t it = 0;
	llm_json_val k, v;
	while (added.type == LLM_JSON_ARRAY && llm_json_next(&added, &it, &k, &v) == LLM_OK) {
		llm_json_val content = llm_json_member(&v, "content"), idv = llm_json_member(&v, "id");
		int64_t id;
		llm_buf_reset(&tmp);
		if (llm_json_str(&content, &tmp) || tmp.len == 0 || llm_json_i64(&idv, &id) || id < 0 ||
		    id >= (int64_t)NO_TOKEN) {
			rc = llm_fail(LLM_EFORMAT, "%s: bad added token", b->name);
			goto done;
		}
		if ((rc = bpe_add_special(b, tmp.p, tmp.len, (uint32_t)id, b->ntok + 65536)))
			goto done;
	}
	bool have;
	llm_json_val pre = llm_json_member(&root, "pre_tokenizer");
	if ((rc = hf_pretokenizer(b, &pre, &pat, &have)))
		goto done;
	llm_json_val ig = llm_json_member(&model, "ignore_merges");
	b->whole_first = ig.type == LLM_JSON_TRUE;
	if ((rc = bpe_build_bmap(b)))
		goto done;
	llm_json_val merges = llm_json_member(&model, "merges");
	if (merges.type == LLM_JSON_INVALID)
		bpe_pmap_init(b, 16);
	else if ((rc = load_merges_json(b, &merges)))
		goto done;
	free(b->bmap); /* bpe_finish() indexes again, with the specials settled */
	b->bmap = NULL;
	rc = bpe_finish(b, pattern ? pattern : have ? pat.p : NULL, true);
	if (!rc)
		bpe_build_csr(b);
done:
	llm_buf_release(&pat);
	llm_buf_release(&tmp);
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	*out = b;
	return LLM_OK;
}

int llm_bpe_load_gpt2(llm_bpe **out, const char *vocab, size_t vlen, const char *merges,
                      size_t mlen, const char *name, const char *merges_name, const char *pattern)
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
	if ((rc = load_vocab(b, &root)))
		goto done;
	/* GPT-2 ships its end-of-text token inside vocab.json. */
	int64_t eot = -1;
	if ((rc = bpe_build_bmap(b)))
		goto done;
	eot = bpe_bytes_id(b, "<|endoftext|>", 13);
	bpe_pmap_init(b, 65536);
	llm_buf tmp = LLM_BUF_INIT;
	uint32_t rank = 0;
	size_t lineno = 0;
	for (size_t i = 0; i < mlen && !rc;) {
		const char *nl = memchr(merges + i, '\n', mlen - i);
		size_t e = nl ? (size_t)(nl - merges) : mlen;
		const char *line = merges + i;
		size_t ll = e - i;
		i = nl ? e + 1 : mlen;
		lineno++;
		if (ll && line[ll - 1] == '\r')
			ll--;
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
	if (eot >= 0 && (rc = bpe_add_special(b, "<|endoftext|>", 13, (uint32_t)eot, b->ntok)))
		goto done;
	rc = bpe_finish(b, pattern ? pattern : llm_pretok_named("gpt2"), true);
	if (!rc)
		bpe_build_csr(b);
done:
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	*out = b;
	return LLM_OK;
}

/* First non-space byte of a file: '{' means JSON. */
static int first_byte(const char *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] != ' ' && d[i] != '\n' && d[i] != '\r' && d[i] != '\t')
			return (unsigned char)d[i];
	return -1;
}

int llm_bpe_load(llm_bpe **out, const char *path, const char *merges, const char *encname,
                 const char *pattern)
{
	*out = NULL;
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc)
		return rc;
	if (first_byte(data, len) != '{') {
		rc = llm_bpe_load_tiktoken(out, data, len, path, encname, pattern);
	} else if (merges) {
		char *m;
		size_t ml;
		rc = llm_read_file(merges, &m, &ml);
		if (!rc) {
			rc = llm_bpe_load_gpt2(out, data, len, m, ml, path, merges, pattern);
			free(m);
		}
	} else {
		/* A vocab.json has no "model": say what is missing rather than fail on it. */
		llm_json_val root;
		size_t ep;
		const char *em;
		if (llm_json_parse_value(data, len, &root, &ep, &em) == LLM_OK &&
		    llm_json_member(&root, "model").type == LLM_JSON_INVALID)
			rc = llm_fail(LLM_EINVAL, "%s: looks like a GPT-2 vocab.json; give its merges.txt too",
			              path);
		else
			rc = llm_bpe_load_hf(out, data, len, path, pattern);
	}
	free(data);
	return rc;
}
