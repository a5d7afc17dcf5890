/*
 * codec.c — zstd, gzip, xz and bzip2 streams over libzstd, zlib, liblzma and libbz2 (codec.h).
 *
 * Each library keeps its own notion of "the stream ended"; the decoders here turn them into one
 * contract: LLM_EOF only after a complete stream (all members or frames, every trailer checked),
 * LLM_EFORMAT for anything else the file ends with. zlib and libbz2 stop at the end of one
 * member or stream, so the decoder restarts them for the next one itself; liblzma does it with
 * LZMA_CONCATENATED and libzstd always does.
 *
 * The libraries count input in 32-bit units (zlib's uInt, libbz2's unsigned): inputs are fed
 * in chunks of at most CHUNK bytes.
 */
#include "codec.h"

#include <bzlib.h>
#include <limits.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "err.h"

#define CHUNK ((size_t)1 << 30)
#define XZ_MEMLIMIT ((uint64_t)1 << 30)
#define OUT_SIZE ((size_t)1 << 17)

struct llm_codec {
	int kind, encode;
	char *name;
	int between;   /* gzip, bzip2: a member ended; the next may start */
	int padding;   /* gzip: NUL bytes seen after a member */
	int done;      /* xz: LZMA_STREAM_END seen */
	size_t zret;   /* zstd: last ZSTD_decompressStream result, 0 at a frame boundary */
	ZSTD_DCtx *zd;
	ZSTD_CCtx *zc;
	z_stream z;
	lzma_stream x;
	bz_stream b;
	unsigned char *obuf; /* encoders: compressed output before emit */
};

static const char *const names[] = { "none", "zstd", "gzip", "xz", "bzip2" };

const char *llm_codec_name(int kind)
{
	return kind >= 0 && kind <= LLM_CODEC_BZIP2 ? names[kind] : "none";
}

int llm_codec_detect(const void *p, size_t n)
{
	const unsigned char *m = p;
	if (n >= 4 && m[0] == 0x28 && m[1] == 0xB5 && m[2] == 0x2F && m[3] == 0xFD)
		return LLM_CODEC_ZSTD;
	/* Skippable frames (magic 0x184D2A5?): pzstd starts its files with one. */
	if (n >= 4 && (m[0] & 0xF0) == 0x50 && m[1] == 0x2A && m[2] == 0x4D && m[3] == 0x18)
		return LLM_CODEC_ZSTD;
	if (n >= 3 && m[0] == 0x1F && m[1] == 0x8B && m[2] == 8)
		return LLM_CODEC_GZIP;
	if (n >= 6 && memcmp(m, "\xFD" "7zXZ\0", 6) == 0)
		return LLM_CODEC_XZ;
	if (n >= 4 && memcmp(m, "BZh", 3) == 0 && m[3] >= '1' && m[3] <= '9')
		return LLM_CODEC_BZIP2;
	return LLM_CODEC_NONE;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

int llm_codec_from_suffix(const char *path)
{
	if (ends_with(path, ".zst"))
		return LLM_CODEC_ZSTD;
	if (ends_with(path, ".gz"))
		return LLM_CODEC_GZIP;
	if (ends_with(path, ".xz"))
		return LLM_CODEC_XZ;
	if (ends_with(path, ".bz2"))
		return LLM_CODEC_BZIP2;
	return LLM_CODEC_NONE;
}

static int corrupt(const llm_codec *c, const char *why)
{
	return llm_fail(LLM_EFORMAT, "%s: corrupt %s stream: %s", c->name, names[c->kind], why);
}

static int truncated(const llm_codec *c)
{
	return llm_fail(LLM_EFORMAT, "%s: truncated %s stream", c->name, names[c->kind]);
}

static int bz_init(llm_codec *c)
{
	memset(&c->b, 0, sizeof c->b);
	int rc = c->encode ? BZ2_bzCompressInit(&c->b, 9, 0, 0) : BZ2_bzDecompressInit(&c->b, 0, 0);
	return rc == BZ_OK ? LLM_OK : LLM_ENOMEM;
}

static llm_codec *codec_new(int kind, const char *name, int encode)
{
	llm_codec *c = llm_calloc(1, sizeof *c);
	c->kind = kind;
	c->encode = encode;
	c->name = llm_strdup(name);
	int rc = LLM_OK;
	switch (kind) {
	case LLM_CODEC_ZSTD:
		if (encode) {
			if (!(c->zc = ZSTD_createCCtx()))
				rc = LLM_ENOMEM;
			else {
				ZSTD_CCtx_setParameter(c->zc, ZSTD_c_compressionLevel, 3);
				ZSTD_CCtx_setParameter(c->zc, ZSTD_c_checksumFlag, 1);
			}
		} else if (!(c->zd = ZSTD_createDCtx())) {
			rc = LLM_ENOMEM;
		}
		c->zret = 1;
		break;
	case LLM_CODEC_GZIP:
		/* 16 + 15: a gzip wrapper around a 32 KiB window. */
		if ((encode ? deflateInit2(&c->z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY)
		            : inflateInit2(&c->z, 16 + 15)) != Z_OK)
			rc = LLM_ENOMEM;
		break;
	case LLM_CODEC_XZ: {
		lzma_stream init = LZMA_STREAM_INIT;
		c->x = init;
		if ((encode ? lzma_easy_encoder(&c->x, 6, LZMA_CHECK_CRC64)
		            : lzma_stream_decoder(&c->x, XZ_MEMLIMIT, LZMA_CONCATENATED)) != LZMA_OK)
			rc = LLM_ENOMEM;
		break;
	}
	case LLM_CODEC_BZIP2:
		rc = bz_init(c);
		break;
	default:
		rc = LLM_EINVAL;
	}
	if (rc != LLM_OK) {
		llm_fail(rc, "%s: cannot start a %s %s", name, llm_codec_name(kind),
		         encode ? "encoder" : "decoder");
		llm_codec_free(c);
		return NULL;
	}
	if (encode)
		c->obuf = llm_malloc(OUT_SIZE);
	return c;
}

llm_codec *llm_codec_decoder_new(int kind, const char *name) { return codec_new(kind, name, 0); }
llm_codec *llm_codec_encoder_new(int kind, const char *name) { return codec_new(kind, name, 1); }

void llm_codec_free(llm_codec *c)
{
	if (!c)
		return;
	switch (c->kind) {
	case LLM_CODEC_ZSTD:
		ZSTD_freeDCtx(c->zd);
		ZSTD_freeCCtx(c->zc);
		break;
	case LLM_CODEC_GZIP:
		if (c->encode)
			deflateEnd(&c->z);
		else
			inflateEnd(&c->z);
		break;
	case LLM_CODEC_XZ:
		lzma_end(&c->x);
		break;
	case LLM_CODEC_BZIP2:
		if (c->encode)
			BZ2_bzCompressEnd(&c->b);
		else
			BZ2_bzDecompressEnd(&c->b);
		break;
	}
	free(c->obuf);
	free(c->name);
	free(c);
}

/* ---- decoding ---- */

static size_t clamp(size_t n) { return n < CHUNK ? n : CHUNK; }

static int zstd_decode(llm_codec *c, const unsigned char *in, size_t n, size_t *ip,
                       unsigned char *out, size_t cap, size_t *op, int at_end)
{
	for (;;) {
		ZSTD_inBuffer ib = { in, n, *ip };
		ZSTD_outBuffer ob = { out, cap, *op };
		size_t ret = ZSTD_decompressStream(c->zd, &ob, &ib);
		if (ZSTD_isError(ret))
			return corrupt(c, ZSTD_getErrorName(ret));
		/* A call that moved nothing says what a next frame would need, not whether the
		 * last one ended. */
		if (ib.pos != *ip || ob.pos != *op)
			c->zret = ret;
		*ip = ib.pos;
		*op = ob.pos;
		if (*op)
			return LLM_OK;
		if (*ip == n)
			return !at_end ? LLM_OK : c->zret == 0 ? LLM_EOF : truncated(c);
	}
}

static int gzip_decode(llm_codec *c, const unsigned char *in, size_t n, size_t *ip,
                       unsigned char *out, size_t cap, size_t *op, int at_end)
{
	for (;;) {
		if (c->between) {
			while (*ip < n && in[*ip] == 0) {
				(*ip)++;
				c->padding = 1;
			}
			if (*ip == n)
				return *op ? LLM_OK : at_end ? LLM_EOF : LLM_OK;
			if (c->padding || in[*ip] != 0x1F)
				return corrupt(c, "data after the last member");
			if (*op)
				return LLM_OK;
			inflateReset(&c->z);
			c->between = 0;
		}
		c->z.next_in = (unsigned char *)in + *ip;
		c->z.avail_in = (uInt)clamp(n - *ip);
		c->z.next_out = out + *op;
		c->z.avail_out = (uInt)clamp(cap - *op);
		size_t in0 = c->z.avail_in, out0 = c->z.avail_out;
		int ret = inflate(&c->z, Z_NO_FLUSH);
		*ip += in0 - c->z.avail_in;
		*op += out0 - c->z.avail_out;
		if (ret == Z_STREAM_END) {
			c->between = 1; /* the CRC-32 and length matched */
			continue;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			return corrupt(c, c->z.msg ? c->z.msg : "bad data");
		if (*op)
			return LLM_OK;
		if (*ip == n)
			return at_end ? truncated(c) : LLM_OK;
	}
}

static int xz_decode(llm_codec *c, const unsigned char *in, size_t n, size_t *ip,
                     unsigned char *out, size_t cap, size_t *op, int at_end)
{
	if (c->done)
		return *ip < n ? corrupt(c, "data after the end") : LLM_EOF;
	for (;;) {
		c->x.next_in = in + *ip;
		c->x.avail_in = n - *ip;
		c->x.next_out = out + *op;
		c->x.avail_out = cap - *op;
		size_t in0 = c->x.avail_in, out0 = c->x.avail_out;
		lzma_ret ret = lzma_code(&c->x, at_end ? LZMA_FINISH : LZMA_RUN);
		*ip += in0 - c->x.avail_in;
		*op += out0 - c->x.avail_out;
		switch (ret) {
		case LZMA_STREAM_END:
			c->done = 1;
			return *op ? LLM_OK : LLM_EOF;
		case LZMA_OK:
			if (*op || (*ip == n && !at_end))
				return LLM_OK;
			continue;
		case LZMA_BUF_ERROR:
			if (*op)
				return LLM_OK;
			return at_end ? truncated(c) : LLM_OK;
		case LZMA_DATA_ERROR: return corrupt(c, "damaged data or failed integrity check");
		case LZMA_FORMAT_ERROR: return corrupt(c, "not in the xz format");
		case LZMA_OPTIONS_ERROR: return corrupt(c, "unsupported options");
		case LZMA_MEMLIMIT_ERROR: return corrupt(c, "needs more than 1 GiB of decoder memory");
		case LZMA_MEM_ERROR: return llm_fail(LLM_ENOMEM, "%s: out of memory decoding xz", c->name);
		default: return corrupt(c, "decoder error");
		}
	}
}

static int bzip2_decode(llm_codec *c, const unsigned char *in, size_t n, size_t *ip,
                        unsigned char *out, size_t cap, size_t *op, int at_end)
{
	for (;;) {
		if (c->between) {
			if (*ip == n)
				return *op ? LLM_OK : at_end ? LLM_EOF : LLM_OK;
			if (*op)
				return LLM_OK;
			BZ2_bzDecompressEnd(&c->b);
			if (bz_init(c) != LLM_OK)
				return llm_fail(LLM_ENOMEM, "%s: out of memory decoding bzip2", c->name);
			c->between = 0;
		}
		c->b.next_in = (char *)in + *ip;
		c->b.avail_in = (unsigned)clamp(n - *ip);
		c->b.next_out = (char *)out + *op;
		c->b.avail_out = (unsigned)clamp(cap - *op);
		size_t in0 = c->b.avail_in, out0 = c->b.avail_out;
		int ret = BZ2_bzDecompress(&c->b);
		*ip += in0 - c->b.avail_in;
		*op += out0 - c->b.avail_out;
		if (ret == BZ_STREAM_END) {
			c->between = 1; /* block and stream CRCs matched */
			continue;
		}
		if (ret == BZ_DATA_ERROR)
			return corrupt(c, "data integrity (CRC) error");
		if (ret == BZ_DATA_ERROR_MAGIC)
			return corrupt(c, "data that is not bzip2");
		if (ret == BZ_MEM_ERROR)
			return llm_fail(LLM_ENOMEM, "%s: out of memory decoding bzip2", c->name);
		if (ret != BZ_OK)
			return corrupt(c, "decoder error");
		if (*op)
			return LLM_OK;
		if (*ip == n)
			return at_end ? truncated(c) : LLM_OK;
	}
}

int llm_codec_decode(llm_codec *c, const void *in, size_t in_len, size_t *in_pos, void *out,
                     size_t cap, size_t *out_len, int at_end)
{
	*out_len = 0;
	switch (c->kind) {
	case LLM_CODEC_ZSTD: return zstd_decode(c, in, in_len, in_pos, out, cap, out_len, at_end);
	case LLM_CODEC_GZIP: return gzip_decode(c, in, in_len, in_pos, out, cap, out_len, at_end);
	case LLM_CODEC_XZ: return xz_decode(c, in, in_len, in_pos, out, cap, out_len, at_end);
	case LLM_CODEC_BZIP2: return bzip2_decode(c, in, in_len, in_pos, out, cap, out_len, at_end);
	}
	return llm_fail(LLM_EINTERNAL, "%s: not a decoder", c->name);
}

/* ---- encoding ---- */

static int encoder_error(const llm_codec *c, const char *why)
{
	return llm_fail(LLM_EIO, "%s: %s: %s", c->name, names[c->kind], why);
}

/* One call of the library's compressor over in[*ip, n) into obuf; *done when the stream ended. */
static int encode_step(llm_codec *c, const unsigned char *in, size_t n, size_t *ip, int finish,
                       size_t *produced, int *done)
{
	*done = 0;
	switch (c->kind) {
	case LLM_CODEC_ZSTD: {
		ZSTD_inBuffer ib = { in, n, *ip };
		ZSTD_outBuffer ob = { c->obuf, OUT_SIZE, 0 };
		size_t rem = ZSTD_compressStream2(c->zc, &ob, &ib, finish ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(rem))
			return encoder_error(c, ZSTD_getErrorName(rem));
		*ip = ib.pos;
		*produced = ob.pos;
		*done = finish ? rem == 0 : ib.pos == n;
		return LLM_OK;
	}
	case LLM_CODEC_GZIP: {
		size_t k = clamp(n - *ip);
		c->z.next_in = (unsigned char *)in + *ip;
		c->z.avail_in = (uInt)k;
		c->z.next_out = c->obuf;
		c->z.avail_out = (uInt)OUT_SIZE;
		int last = finish && k == n - *ip;
		int ret = deflate(&c->z, last ? Z_FINISH : Z_NO_FLUSH);
		if (ret == Z_STREAM_ERROR)
			return encoder_error(c, "deflate failed");
		*ip += k - c->z.avail_in;
		*produced = OUT_SIZE - c->z.avail_out;
		*done = last ? ret == Z_STREAM_END : *ip == n && c->z.avail_out != 0;
		return LLM_OK;
	}
	case LLM_CODEC_XZ: {
		c->x.next_in = in + *ip;
		c->x.avail_in = n - *ip;
		c->x.next_out = c->obuf;
		c->x.avail_out = OUT_SIZE;
		lzma_ret ret = lzma_code(&c->x, finish ? LZMA_FINISH : LZMA_RUN);
		if (ret != LZMA_OK && ret != LZMA_STREAM_END)
			return encoder_error(c, ret == LZMA_MEM_ERROR ? "out of memory" : "encoder error");
		*ip = n - c->x.avail_in;
		*produced = OUT_SIZE - c->x.avail_out;
		*done = finish ? ret == LZMA_STREAM_END : *ip == n && c->x.avail_out != 0;
		return LLM_OK;
	}
	case LLM_CODEC_BZIP2: {
		size_t k = clamp(n - *ip);
		c->b.next_in = (char *)in + *ip;
		c->b.avail_in = (unsigned)k;
		c->b.next_out = (char *)c->obuf;
		c->b.avail_out = (unsigned)OUT_SIZE;
		int last = finish && k == n - *ip;
		int ret = BZ2_bzCompress(&c->b, last ? BZ_FINISH : BZ_RUN);
		if (ret != BZ_RUN_OK && ret != BZ_FINISH_OK && ret != BZ_STREAM_END)
			return encoder_error(c, "encoder error");
		*ip += k - c->b.avail_in;
		*produced = OUT_SIZE - c->b.avail_out;
		*done = last ? ret == BZ_STREAM_END : *ip == n;
		return LLM_OK;
	}
	}
	return llm_fail(LLM_EINTERNAL, "%s: not an encoder", c->name);
}

int llm_codec_push(llm_codec *c, const void *p, size_t n, int finish, llm_codec_emit emit,
                   void *ctx)
{
	if (n == 0 && !finish)
		return LLM_OK; /* libbz2 calls a call without progress a parameter error */
	size_t ip = 0;
	for (;;) {
		size_t produced = 0;
		int done, rc = encode_step(c, p, n, &ip, finish, &produced, &done);
		if (rc != LLM_OK)
			return rc;
		if (produced && (rc = emit(ctx, c->obuf, produced)) != LLM_OK)
			return rc;
		if (done)
			return LLM_OK;
	}
}
