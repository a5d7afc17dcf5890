/*
 * export.c — shards' tokens in the formats other trainers read: Megatron-LM's indexed
 * dataset, llm.c's .bin, raw tokens (see shard.h).
 */
#include "shard_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "tok/tokstream.h"

/* ---- exports ---- */

struct llm_export {
	int format;
	uint32_t vocab, width;   /* width: bytes per token in the output */
	afile bin;
	obuf lens;               /* Megatron: int32 sequence lengths, spooled */
	uint64_t tokens, docs;
	char *idx_path;
};

int llm_export_open(llm_export **out, int format, const char *path, uint32_t vocab)
{
	*out = NULL;
	if (vocab == 0)
		return llm_fail(LLM_EINVAL, "%s: vocab size 0", path);
	llm_export *e = llm_calloc(1, sizeof *e);
	e->format = format;
	e->vocab = vocab;
	e->lens.fd = -1;
	e->width = format == LLM_EXPORT_MEGATRON ? (vocab < 65500 ? 2 : 4) : (vocab <= 65536 ? 2 : 4);
	llm_buf name = LLM_BUF_INIT;
	llm_buf_addf(&name, "%s%s", path, format == LLM_EXPORT_MEGATRON ? ".bin" : "");
	int st = llm_shard_afile_open(&e->bin, name.p);
	llm_buf_release(&name);
	if (st == LLM_OK && format == LLM_EXPORT_MEGATRON) {
		llm_buf_addf(&name, "%s.idx", path);
		e->idx_path = llm_buf_detach(&name, NULL);
		char *dir = llm_tmpfile_dir(path);
		int fd = llm_tmpfd(dir);
		free(dir);
		if (fd < 0)
			st = LLM_EIO;
		else
			llm_shard_obuf_init(&e->lens, fd, (size_t)1 << 16);
	}
	if (st == LLM_OK && format == LLM_EXPORT_LLMC) {
		/* The header's token count is patched in at close. */
		int32_t h[256] = { 0 };
		st = llm_shard_obuf_put(&e->bin.out, h, sizeof h, path);
	}
	if (st != LLM_OK) {
		llm_export_abort(e);
		return st;
	}
	*out = e;
	return LLM_OK;
}

/* The limits of a document of n tokens, before anything of it is written. */
static int export_check(const llm_export *e, size_t n)
{
	if (e->format == LLM_EXPORT_LLMC && e->tokens + n > LLM_EXPORT_LLMC_MAX_TOKENS)
		return llm_fail(LLM_EINVAL, "%s: llm.c files hold fewer than 2^31 tokens", e->bin.path);
	if (e->format == LLM_EXPORT_MEGATRON && n > INT32_MAX)
		return llm_fail(LLM_EINVAL, "%s: document of %zu tokens is too long for Megatron",
		                e->bin.path, n);
	return LLM_OK;
}

/* Count a document of n tokens whose tokens are written. */
static int export_done(llm_export *e, size_t n)
{
	int st = LLM_OK;
	if (e->format == LLM_EXPORT_MEGATRON) {
		int32_t len = (int32_t)n;
		st = llm_shard_obuf_put(&e->lens, &len, 4, e->bin.path);
	}
	if (st == LLM_OK) {
		e->tokens += n;
		e->docs++;
	}
	return st;
}

static int export_bad_token(const llm_export *e)
{
	return llm_fail(LLM_EINVAL, "%s: a token is not below vocab size %u", e->bin.path, e->vocab);
}

int llm_export_add(llm_export *e, const uint32_t *t, size_t n)
{
	if (n && llm_tok_max(t, n) >= e->vocab)
		return export_bad_token(e);
	int st = export_check(e, n);
	if (st == LLM_OK)
		st = llm_shard_obuf_put_tokens(&e->bin.out, t, n, e->width, e->bin.path);
	return st == LLM_OK ? export_done(e, n) : st;
}

int llm_export_add_raw(llm_export *e, const void *raw, uint32_t width, size_t n, uint32_t eos)
{
	if ((width != 2 && width != 4) || width > e->width)
		return llm_fail(LLM_EINVAL, "%s: %u-byte tokens do not fit a %u-byte export", e->bin.path,
		                width, e->width);
	size_t m = n + (eos != LLM_SHARD_NO_EOS);
	if ((n && (width == 2 ? llm_tok_max16(raw, n) : llm_tok_max(raw, n)) >= e->vocab) ||
	    (eos != LLM_SHARD_NO_EOS && eos >= e->vocab))
		return export_bad_token(e);
	int st = export_check(e, m);
	if (st != LLM_OK)
		return st;
	obuf *o = &e->bin.out;
	if (width == e->width) {
		st = llm_shard_obuf_put(o, raw, n * width, e->bin.path);
	} else { /* 2 to 4: Megatron's int32 for vocabularies of 65500 to 65536 */
		const unsigned char *p = raw;
		uint32_t wide[1024];
		for (size_t i = 0; i < n && st == LLM_OK; i += 1024) {
			size_t k = n - i < 1024 ? n - i : 1024;
			llm_tok_widen16(p + 2 * i, wide, k);
			st = llm_shard_obuf_put(o, wide, 4 * k, e->bin.path);
		}
	}
	if (st == LLM_OK && eos != LLM_SHARD_NO_EOS)
		st = llm_shard_obuf_put_tokens(o, &eos, 1, e->width, e->bin.path);
	return st == LLM_OK ? export_done(e, m) : st;
}

uint64_t llm_export_tokens(const llm_export *e) { return e->tokens; }
/* llm.c's 256 int32 header is part of the file, so it counts against the shard size. */
uint64_t llm_export_bytes(const llm_export *e)
{
	return e->tokens * e->width + (e->format == LLM_EXPORT_LLMC ? 256 * sizeof(int32_t) : 0);
}

/* Megatron's .idx: header, lengths (from the spool), pointers and document indices computed
 * on the fly, so the index needs no memory per document. */
static int write_idx(llm_export *e)
{
	afile idx;
	int st = llm_shard_afile_open(&idx, e->idx_path);
	if (st != LLM_OK)
		return st;
	unsigned char h[9 + 8 + 1 + 8 + 8];
	memcpy(h, "MMIDIDX\0\0", 9);
	put64(h + 9, 1);
	h[17] = e->width == 2 ? 8 : 4;
	put64(h + 18, e->docs);
	put64(h + 26, e->docs + 1);
	st = llm_shard_obuf_put(&idx.out, h, sizeof h, idx.path);
	if (st == LLM_OK)
		st = llm_shard_obuf_flush(&e->lens, idx.path);
	/* lengths, then pointers: two passes over the spool */
	for (int pass = 0; pass < 2 && st == LLM_OK; pass++) {
		int64_t ptr = 0;
		int32_t buf[4096];
		for (uint64_t i = 0; i < e->docs && st == LLM_OK;) {
			size_t k = e->docs - i < 4096 ? (size_t)(e->docs - i) : 4096;
			ssize_t r = pread(e->lens.fd, buf, k * 4, (off_t)(i * 4));
			if (r != (ssize_t)(k * 4)) {
				st = llm_fail(LLM_EIO, "%s: reading back lengths: %s", idx.path,
				              r < 0 ? strerror(errno) : "short file");
				break;
			}
			if (pass == 0) {
				st = llm_shard_obuf_put(&idx.out, buf, k * 4, idx.path);
			} else {
				for (size_t j = 0; j < k && st == LLM_OK; j++) {
					st = llm_shard_obuf_put(&idx.out, &ptr, 8, idx.path);
					ptr += (int64_t)buf[j] * e->width;
				}
			}
			i += k;
		}
	}
	for (uint64_t i = 0; i <= e->docs && st == LLM_OK; i++) {
		int64_t d = (int64_t)i;
		st = llm_shard_obuf_put(&idx.out, &d, 8, idx.path);
	}
	if (st == LLM_OK)
		st = llm_shard_afile_publish(&idx, 0);
	llm_shard_afile_release(&idx);
	return st;
}

int llm_export_close(llm_export *e)
{
	int st = llm_shard_obuf_flush(&e->bin.out, e->bin.path);
	if (st == LLM_OK && e->format == LLM_EXPORT_LLMC) {
		int32_t h[3] = { e->width == 2 ? 20240520 : 20240801, e->width == 2 ? 1 : 7,
			         (int32_t)e->tokens };
		if (pwrite(e->bin.out.fd, h, sizeof h, 0) != (ssize_t)sizeof h)
			st = llm_fail(LLM_EIO, "%s: %s", e->bin.path, strerror(errno));
	}
	/* The index goes first: a .bin under its final name always has its .idx. */
	if (st == LLM_OK && e->format == LLM_EXPORT_MEGATRON)
		st = write_idx(e);
	if (st == LLM_OK)
		st = llm_shard_afile_publish(&e->bin, 0);
	llm_export_abort(e);
	return st;
}

void llm_export_abort(llm_export *e)
{
	if (!e)
		return;
	llm_shard_afile_release(&e->bin);
	llm_shard_obuf_release(&e->lens);
	free(e->idx_path);
	free(e);
}

