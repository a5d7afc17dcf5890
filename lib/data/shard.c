/*
 * shard.c — the mmap reader of shards and their descriptions (see shard.h).
 *
 * The module is in five files: this one; shard_writer.c, the writer; shard_io.c, the
 * buffered, hashed output files the writer and the exports go through; export.c, the
 * Megatron, llm.c and raw exports; manifest.c, manifest.json. shard_internal.h is what they
 * share.
 */
#include "shard_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "tok/tokstream.h"

static const char *const sec_names[] = { "header", "tokens", "doc_offsets", "doc_info",
	                                 "inputs", "meta_offsets", "meta", "domains" };

const char *llm_shard_section_name(int kind)
{
	return kind >= 1 && kind <= LLM_SHARD_NSECTIONS ? sec_names[kind] : "header";
}

const char *llm_split_name(int split)
{
	return split == LLM_SPLIT_VAL ? "val" : "train";
}

/* ---- reader ---- */

struct llm_shard {
	char *path;
	const unsigned char *map;
	size_t size;
	llm_shard_info info;
	char **domains;
	size_t ndomains;
};

static int bad(const char *path, int kind, const char *what)
{
	return llm_fail(LLM_EFORMAT, "%s: %s%s%s: %s", path, kind ? "section '" : "",
	                llm_shard_section_name(kind), kind ? "'" : "", what);
}

static const unsigned char *sec_ptr(const llm_shard *s, int kind)
{
	return s->map + s->info.sec[kind].offset;
}

/* Check that an offsets section (n + 1 u64) starts at 0, never decreases and ends at end. */
static int check_offsets(const llm_shard *s, int kind, uint64_t n, uint64_t end)
{
	const uint64_t *o = (const uint64_t *)sec_ptr(s, kind);
	if (o[0] != 0)
		return bad(s->path, kind, "does not start at 0");
	for (uint64_t i = 0; i < n; i++)
		if (o[i + 1] < o[i])
			return bad(s->path, kind, "offsets decrease");
	if (o[n] != end)
		return bad(s->path, kind, "last offset does not match the data length");
	return LLM_OK;
}

static int parse_domains(llm_shard *s)
{
	const char *p = (const char *)sec_ptr(s, LLM_SHARD_SEC_DOMAINS);
	size_t n = s->info.sec[LLM_SHARD_SEC_DOMAINS].length, pos;
	llm_json_val arr, key, v;
	const char *msg;
	if (llm_json_parse_value(p, n, &arr, &pos, &msg) != LLM_OK || arr.type != LLM_JSON_ARRAY)
		return bad(s->path, LLM_SHARD_SEC_DOMAINS, "not a JSON array");
	size_t it = 0;
	llm_buf b = LLM_BUF_INIT;
	while (llm_json_next(&arr, &it, &key, &v) == LLM_OK) {
		if (v.type != LLM_JSON_STRING || s->ndomains == 65536) {
			llm_buf_release(&b);
			return bad(s->path, LLM_SHARD_SEC_DOMAINS, "not an array of at most 65536 names");
		}
		llm_buf_reset(&b);
		llm_json_str(&v, &b);
		s->domains = llm_realloc(s->domains, (s->ndomains + 1) * sizeof *s->domains);
		s->domains[s->ndomains++] = llm_strndup(b.p ? b.p : "", b.len);
	}
	llm_buf_release(&b);
	return LLM_OK;
}

static int shard_check(llm_shard *s)
{
	const unsigned char *h = s->map;
	llm_shard_info *in = &s->info;
	if (s->size < LLM_SHARD_HEADER_SIZE || memcmp(h, LLM_SHARD_MAGIC, 8) != 0)
		return bad(s->path, 0, "not a shard (no LLMSHRD1 magic)");
	in->header_checksum = get64(h + HDR_CHECKSUM_AT);
	if (llm_hash64(h, HDR_CHECKSUM_AT, 0) != in->header_checksum)
		return bad(s->path, 0, "checksum mismatch");
	in->version = get32(h + 8);
	in->width = get32(h + 12);
	in->vocab_size = get32(h + 16);
	in->flags = get32(h + 20);
	in->tokenizer_id = get64(h + 24);
	in->docs = get64(h + 32);
	in->tokens = get64(h + 40);
	in->eos_id = get32(h + 48);
	if (in->version != LLM_SHARD_VERSION)
		return bad(s->path, 0, "unsupported version");
	if ((in->width != 2 && in->width != 4) || in->vocab_size == 0 ||
	    (in->width == 2 && in->vocab_size > 65536) || (in->flags & ~LLM_SHARD_NOISED) ||
	    (in->eos_id != LLM_SHARD_NO_EOS && in->eos_id >= in->vocab_size) ||
	    get32(h + 52) != LLM_SHARD_NSECTIONS)
		return bad(s->path, 0, "invalid width, vocab size, flags, eos id or section count");
	/* Counts are bounded by the file size before any product is formed. */
	if (in->tokens > s->size / in->width || in->docs >= s->size / 8)
		return bad(s->path, 0, "counts larger than the file");
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++) {
		const unsigned char *e = h + SEC_TABLE + (k - 1) * SEC_ENTRY;
		in->sec[k].offset = get64(e + 8);
		in->sec[k].length = get64(e + 16);
		in->sec[k].checksum = get64(e + 24);
		if (get32(e) != (uint32_t)k)
			return bad(s->path, 0, "section table out of order");
		if (in->sec[k].offset % LLM_SHARD_ALIGN || in->sec[k].offset < LLM_SHARD_HEADER_SIZE ||
		    in->sec[k].offset > s->size || in->sec[k].length > s->size - in->sec[k].offset)
			return bad(s->path, k, "offset or length outside the file");
	}
	uint64_t tb = in->tokens * in->width, ob = (in->docs + 1) * 8;
	if (in->sec[LLM_SHARD_SEC_TOKENS].length != tb)
		return bad(s->path, LLM_SHARD_SEC_TOKENS, "length does not match the token count");
	if (in->sec[LLM_SHARD_SEC_DOC_OFFSETS].length != ob)
		return bad(s->path, LLM_SHARD_SEC_DOC_OFFSETS, "length does not match the document count");
	if (in->sec[LLM_SHARD_SEC_DOC_INFO].length != in->docs * 8)
		return bad(s->path, LLM_SHARD_SEC_DOC_INFO, "length does not match the document count");
	if (in->sec[LLM_SHARD_SEC_INPUTS].length != ((in->flags & LLM_SHARD_NOISED) ? tb : 0))
		return bad(s->path, LLM_SHARD_SEC_INPUTS, "length does not match the token count");
	if (in->sec[LLM_SHARD_SEC_META_OFFSETS].length != ob)
		return bad(s->path, LLM_SHARD_SEC_META_OFFSETS, "length does not match the document count");
	int st;
	if ((st = check_offsets(s, LLM_SHARD_SEC_DOC_OFFSETS, in->docs, in->tokens)) != LLM_OK ||
	    (st = check_offsets(s, LLM_SHARD_SEC_META_OFFSETS, in->docs,
	                        in->sec[LLM_SHARD_SEC_META].length)) != LLM_OK ||
	    (st = parse_domains(s)) != LLM_OK)
		return st;
	const unsigned char *inf = sec_ptr(s, LLM_SHARD_SEC_DOC_INFO);
	for (uint64_t i = 0; i < in->docs; i++)
		if (get16(inf + 8 * i) >= s->ndomains)
			return bad(s->path, LLM_SHARD_SEC_DOC_INFO, "domain id out of range");
	return LLM_OK;
}

int llm_shard_open(llm_shard **out, const char *path, unsigned flags)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return llm_fail(LLM_EIO, "%s: not a regular file", path);
	}
	llm_shard *s = llm_calloc(1, sizeof *s);
	s->path = llm_strdup(path);
	s->size = (size_t)st.st_size;
	if (s->size >= LLM_SHARD_HEADER_SIZE) {
		void *m = mmap(NULL, s->size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			llm_shard_free(s);
			return llm_fail(LLM_EIO, "%s: mmap: %s", path, strerror(e));
		}
		s->map = m;
	}
	close(fd);
	int rc = s->map ? shard_check(s) : bad(path, 0, "file shorter than the header");
	if (rc == LLM_OK && (flags & LLM_SHARD_VERIFY))
		rc = llm_shard_verify(s);
	if (rc != LLM_OK) {
		llm_shard_free(s);
		return rc;
	}
	*out = s;
	return LLM_OK;
}

void llm_shard_free(llm_shard *s)
{
	if (!s)
		return;
	if (s->map)
		munmap((void *)s->map, s->size);
	for (size_t i = 0; i < s->ndomains; i++)
		free(s->domains[i]);
	free(s->domains);
	free(s->path);
	free(s);
}

/* Every token of a section below vocab size. */
static int check_range(const llm_shard *s, int kind)
{
	const unsigned char *p = sec_ptr(s, kind);
	uint64_t n = s->info.sec[kind].length / s->info.width;
	/* the sections are 4 KiB aligned, so width-4 tokens can be read in place */
	uint32_t hi = s->info.width == 2 ? llm_tok_max16(p, n) : llm_tok_max((const uint32_t *)p, n);
	return n && hi >= s->info.vocab_size ? bad(s->path, kind, "token not below the vocab size")
	                                     : LLM_OK;
}

int llm_shard_verify(const llm_shard *s)
{
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
		if (llm_hash64(sec_ptr(s, k), s->info.sec[k].length, 0) != s->info.sec[k].checksum)
			return bad(s->path, k, "checksum mismatch");
	int st = check_range(s, LLM_SHARD_SEC_TOKENS);
	if (st == LLM_OK)
		st = check_range(s, LLM_SHARD_SEC_INPUTS);
	return st;
}

const llm_shard_info *llm_shard_get_info(const llm_shard *s) { return &s->info; }
const char *llm_shard_path(const llm_shard *s) { return s->path; }

const void *llm_shard_inputs_raw(const llm_shard *s)
{
	return (s->info.flags & LLM_SHARD_NOISED) ? sec_ptr(s, LLM_SHARD_SEC_INPUTS) : NULL;
}

const uint64_t *llm_shard_doc_offsets(const llm_shard *s)
{
	return (const uint64_t *)sec_ptr(s, LLM_SHARD_SEC_DOC_OFFSETS);
}

static void widen(const unsigned char *p, uint32_t width, uint64_t start, size_t n, uint32_t *out)
{
	if (width == 4) {
		memcpy(out, p + 4 * start, n * 4);
		return;
	}
	llm_tok_widen16(p + 2 * start, out, n);
}

uint32_t llm_shard_token(const llm_shard *s, uint64_t i)
{
	const unsigned char *p = sec_ptr(s, LLM_SHARD_SEC_TOKENS);
	return s->info.width == 2 ? get16(p + 2 * i) : get32(p + 4 * i);
}

void llm_shard_read_tokens(const llm_shard *s, uint64_t start, size_t n, uint32_t *out)
{
	widen(sec_ptr(s, LLM_SHARD_SEC_TOKENS), s->info.width, start, n, out);
}

int llm_shard_read_inputs(const llm_shard *s, uint64_t start, size_t n, uint32_t *out)
{
	if (!(s->info.flags & LLM_SHARD_NOISED))
		return 0;
	widen(sec_ptr(s, LLM_SHARD_SEC_INPUTS), s->info.width, start, n, out);
	return 1;
}

void llm_shard_get_doc(const llm_shard *s, uint64_t i, llm_shard_doc *d)
{
	const uint64_t *o = llm_shard_doc_offsets(s);
	const uint64_t *mo = (const uint64_t *)sec_ptr(s, LLM_SHARD_SEC_META_OFFSETS);
	const unsigned char *inf = sec_ptr(s, LLM_SHARD_SEC_DOC_INFO) + 8 * i;
	d->start = o[i];
	d->len = o[i + 1] - o[i];
	d->domain = get16(inf);
	d->flags = get16(inf + 2);
	memcpy(&d->weight, inf + 4, 4);
	d->meta = (const char *)sec_ptr(s, LLM_SHARD_SEC_META) + mo[i];
	d->meta_len = (size_t)(mo[i + 1] - mo[i]);
}

size_t llm_shard_ndomains(const llm_shard *s) { return s->ndomains; }

const char *llm_shard_domain(const llm_shard *s, size_t id)
{
	return id < s->ndomains ? s->domains[id] : "unknown";
}

/* ---- descriptions (llm-shard --info) ---- */

void llm_shard_describe(const llm_shard *s, llm_buf *out)
{
	const llm_shard_info *in = llm_shard_get_info(s);
	llm_buf_addf(out, "%s: shard version %u, %u-byte tokens, vocab %u, tokenizer %016llx, eos ",
	             llm_shard_path(s), in->version, in->width, in->vocab_size,
	             (unsigned long long)in->tokenizer_id);
	if (in->eos_id == LLM_SHARD_NO_EOS)
		llm_buf_adds(out, "none\n");
	else
		llm_buf_addf(out, "%u\n", in->eos_id);
	llm_buf_addf(out, "  documents %llu, tokens %llu, noised inputs %s\n", (unsigned long long)in->docs,
	             (unsigned long long)in->tokens, (in->flags & LLM_SHARD_NOISED) ? "yes" : "no");
	size_t nd = llm_shard_ndomains(s);
	uint64_t *docs = llm_calloc(nd + 1, 8), *toks = llm_calloc(nd + 1, 8), trunc = 0;
	for (uint64_t i = 0; i < in->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		docs[d.domain]++;
		toks[d.domain] += d.len;
		trunc += !!(d.flags & LLM_SHARD_DOC_TRUNCATED);
	}
	for (size_t i = 0; i < nd; i++)
		llm_buf_addf(out, "  domain %s: %llu documents, %llu tokens\n", llm_shard_domain(s, i),
		             (unsigned long long)docs[i], (unsigned long long)toks[i]);
	if (trunc)
		llm_buf_addf(out, "  truncated documents %llu\n", (unsigned long long)trunc);
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
		llm_buf_addf(out, "  section %-12s offset %10llu length %12llu xxh3 %016llx\n",
		             llm_shard_section_name(k), (unsigned long long)in->sec[k].offset,
		             (unsigned long long)in->sec[k].length, (unsigned long long)in->sec[k].checksum);
	free(docs);
	free(toks);
}
