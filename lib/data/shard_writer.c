/*
 * shard_writer.c — the shard writer (see shard.h).
 *
 * The writer produces the file in one sequential pass: a zeroed header, the tokens section
 * streamed from the 1 MiB buffer, then at close the per-document arrays from memory and the
 * inputs and metadata from their spools (hashed as they were spooled, copied in by the
 * kernel), each section hashed as its bytes go out; finally the header is written at offset
 * 0. The disk writes the file while it is being produced (llm_writeback_step), so the fsync
 * before it is named waits for little more than the last chunk.
 */
#include "shard_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"
#include "tok/tokstream.h"

/* ---- header encoding ---- */

static void header_encode(const llm_shard_info *in, unsigned char h[LLM_SHARD_HEADER_SIZE])
{
	memset(h, 0, LLM_SHARD_HEADER_SIZE);
	memcpy(h, LLM_SHARD_MAGIC, 8);
	put32(h + 8, in->version);
	put32(h + 12, in->width);
	put32(h + 16, in->vocab_size);
	put32(h + 20, in->flags);
	put64(h + 24, in->tokenizer_id);
	put64(h + 32, in->docs);
	put64(h + 40, in->tokens);
	put32(h + 48, in->eos_id);
	put32(h + 52, LLM_SHARD_NSECTIONS);
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++) {
		unsigned char *e = h + SEC_TABLE + (k - 1) * SEC_ENTRY;
		put32(e, (uint32_t)k);
		put64(e + 8, in->sec[k].offset);
		put64(e + 16, in->sec[k].length);
		put64(e + 24, in->sec[k].checksum);
	}
	put64(h + HDR_CHECKSUM_AT, llm_hash64(h, HDR_CHECKSUM_AT, 0));
}

/* ---- writer ---- */


struct llm_shard_writer {
	afile f;
	char *path;
	llm_shard_params p;
	obuf inputs, meta;
	uint64_t *doc_off, *meta_off;
	unsigned char *info;
	size_t docs, cap;
	uint64_t tokens, meta_bytes;
	char **domains;
	size_t ndomains, last_dom;
	int failed;
};


int llm_shard_writer_open(llm_shard_writer **out, const char *path, const llm_shard_params *p)
{
	*out = NULL;
	if ((p->width != 2 && p->width != 4) || p->vocab_size == 0 ||
	    (p->width == 2 && p->vocab_size > 65536) ||
	    (p->eos_id != LLM_SHARD_NO_EOS && p->eos_id >= p->vocab_size))
		return llm_fail(LLM_EINVAL, "%s: bad shard parameters (width %u, vocab %u, eos %u)",
		                path, p->width, p->vocab_size, p->eos_id);
	llm_shard_writer *w = llm_calloc(1, sizeof *w);
	w->path = llm_strdup(path);
	w->p = *p;
	w->f.out.fd = w->inputs.fd = w->meta.fd = -1;
	char *dir = llm_tmpfile_dir(path);
	int fd;
	if (llm_shard_afile_open(&w->f, path) != LLM_OK)
		goto fail;
	if ((fd = llm_tmpfd(dir)) < 0)
		goto fail;
	llm_shard_obuf_init(&w->meta, fd, (size_t)1 << 16);
	w->meta.h = llm_hasher_new(0);
	if (p->noised) {
		if ((fd = llm_tmpfd(dir)) < 0)
			goto fail;
		llm_shard_obuf_init(&w->inputs, fd, WBUF_SIZE);
		w->inputs.h = llm_hasher_new(0);
	}
	/* The header is written last; keep its place with zeros. */
	static const unsigned char zero[LLM_SHARD_HEADER_SIZE];
	if (llm_shard_obuf_put(&w->f.out, zero, sizeof zero, path) != LLM_OK ||
	    llm_shard_obuf_flush(&w->f.out, path) != LLM_OK)
		goto fail;
	w->f.out.h = llm_hasher_new(0);
	w->cap = 1024;
	w->doc_off = llm_malloc((w->cap + 1) * sizeof *w->doc_off);
	w->meta_off = llm_malloc((w->cap + 1) * sizeof *w->meta_off);
	w->info = llm_malloc(w->cap * 8);
	w->doc_off[0] = w->meta_off[0] = 0;
	free(dir);
	*out = w;
	return LLM_OK;
fail:
	free(dir);
	llm_shard_writer_abort(w); /* the detail of the failure stays set */
	return LLM_EIO;
}

static int domain_id(llm_shard_writer *w, const char *name, uint16_t *id)
{
	if (!name || !*name)
		name = "unknown";
	if (w->ndomains && strcmp(w->domains[w->last_dom], name) == 0) {
		*id = (uint16_t)w->last_dom;
		return LLM_OK;
	}
	for (size_t i = 0; i < w->ndomains; i++)
		if (strcmp(w->domains[i], name) == 0) {
			w->last_dom = i;
			*id = (uint16_t)i;
			return LLM_OK;
		}
	if (w->ndomains == 65536)
		return llm_fail(LLM_EINVAL, "%s: more than 65536 domains", w->path);
	w->domains = llm_realloc(w->domains, (w->ndomains + 1) * sizeof *w->domains);
	w->domains[w->ndomains] = llm_strdup(name);
	w->last_dom = w->ndomains++;
	*id = (uint16_t)w->last_dom;
	return LLM_OK;
}

/* The largest token and the last one of a sequence given either way (see llm_shard_doc_in). */
static uint32_t seq_max(const uint32_t *t, const void *raw, size_t n, uint32_t width)
{
	if (t)
		return llm_tok_max(t, n);
	return width == 2 ? llm_tok_max16(raw, n) : llm_tok_max(raw, n);
}

static uint32_t seq_last(const uint32_t *t, const void *raw, size_t n, uint32_t width)
{
	if (t)
		return t[n - 1];
	const unsigned char *p = raw;
	return width == 2 ? get16(p + 2 * (n - 1)) : get32(p + 4 * (n - 1));
}

static int put_seq(obuf *o, const uint32_t *t, const void *raw, size_t n, uint32_t width,
                   const char *name)
{
	return t ? llm_shard_obuf_put_tokens(o, t, n, width, name) : llm_shard_obuf_put(o, raw, n * width, name);
}

int llm_shard_writer_add(llm_shard_writer *w, const llm_shard_doc_in *d)
{
	if (w->failed)
		return w->failed;
	uint32_t width = w->p.width;
	const uint32_t *in = d->tokens ? d->inputs : NULL;
	const void *rin = d->tokens ? NULL : d->raw_inputs;
	if (d->n && (seq_max(d->tokens, d->raw_tokens, d->n, width) >= w->p.vocab_size ||
	              (w->p.noised && seq_max(in, rin, d->n, width) >= w->p.vocab_size)))
		return llm_fail(LLM_EINVAL, "%s: a token is not below vocab size %u", w->path,
		                w->p.vocab_size);
	uint16_t dom = 0;
	int st = domain_id(w, d->domain, &dom);
	if (st != LLM_OK)
		return st;
	uint16_t flags = d->flags & ~LLM_SHARD_DOC_EOS_ADDED;
	int add_eos = w->p.eos_id != LLM_SHARD_NO_EOS &&
	              (d->n == 0 || seq_last(d->tokens, d->raw_tokens, d->n, width) != w->p.eos_id);
	if (add_eos)
		flags |= LLM_SHARD_DOC_EOS_ADDED;
	if (w->docs == w->cap) {
		w->cap *= 2;
		w->doc_off = llm_realloc(w->doc_off, (w->cap + 1) * sizeof *w->doc_off);
		w->meta_off = llm_realloc(w->meta_off, (w->cap + 1) * sizeof *w->meta_off);
		w->info = llm_realloc(w->info, w->cap * 8);
	}
	st = put_seq(&w->f.out, d->tokens, d->raw_tokens, d->n, width, w->path);
	if (st == LLM_OK && add_eos)
		st = llm_shard_obuf_put_tokens(&w->f.out, &w->p.eos_id, 1, width, w->path);
	if (st == LLM_OK && w->p.noised) {
		st = put_seq(&w->inputs, in, rin, d->n, width, w->path);
		if (st == LLM_OK && add_eos)
			st = llm_shard_obuf_put_tokens(&w->inputs, &w->p.eos_id, 1, width, w->path);
	}
	if (st == LLM_OK)
		st = llm_shard_obuf_put(&w->meta, d->meta, d->meta_len, w->path);
	if (st != LLM_OK)
		return w->failed = st;
	w->tokens += d->n + (size_t)add_eos;
	w->meta_bytes += d->meta_len;
	unsigned char *inf = w->info + 8 * w->docs;
	put16(inf, dom);
	put16(inf + 2, flags);
	memcpy(inf + 4, &d->weight, 4);
	w->docs++;
	w->doc_off[w->docs] = w->tokens;
	w->meta_off[w->docs] = w->meta_bytes;
	return LLM_OK;
}

uint64_t llm_shard_writer_bytes(const llm_shard_writer *w)
{
	uint64_t tb = w->tokens * w->p.width;
	return LLM_SHARD_HEADER_SIZE + align_up(tb) * (w->p.noised ? 2 : 1) +
	       align_up(w->docs * 24 + 16) + align_up(w->meta_bytes) + 3 * LLM_SHARD_ALIGN;
}

uint64_t llm_shard_writer_docs(const llm_shard_writer *w) { return w->docs; }

/* Close the current section (kind) that started at start: digest, pad to alignment. */
static int end_section(llm_shard_writer *w, llm_shard_info *in, int kind, uint64_t start)
{
	int st = llm_shard_obuf_flush(&w->f.out, w->path);
	in->sec[kind].offset = start;
	in->sec[kind].length = llm_shard_obuf_tell(&w->f.out) - start;
	in->sec[kind].checksum = llm_hasher_digest(w->f.out.h);
	llm_hasher_free(w->f.out.h);
	w->f.out.h = NULL;
	static const unsigned char zero[LLM_SHARD_ALIGN];
	uint64_t pad = align_up(llm_shard_obuf_tell(&w->f.out)) - llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK && kind < LLM_SHARD_NSECTIONS &&
	    (st = llm_shard_obuf_put(&w->f.out, zero, pad, w->path)) == LLM_OK)
		st = llm_shard_obuf_flush(&w->f.out, w->path); /* padding belongs to no section's checksum */
	w->f.out.h = llm_hasher_new(0);
	return st;
}

/*
 * Append a spool's content to the output as the next section's bytes. The spool hashed them
 * as they were added, so its hasher becomes the section's; the bytes themselves are copied
 * inside the kernel (copy_file_range: no round trip through this process, and a reflink
 * where the file system shares blocks), with read and write as the fallback.
 */
static int copy_spool(llm_shard_writer *w, obuf *sp)
{
	obuf *o = &w->f.out;
	int st = llm_shard_obuf_flush(sp, w->path);
	if (st == LLM_OK)
		st = llm_shard_obuf_flush(o, w->path);
	if (st != LLM_OK)
		return st;
	llm_hasher_free(o->h);
	o->h = sp->h;
	sp->h = NULL;
	off_t in_off = 0, out_off = (off_t)o->pos;
#ifdef __linux__
	int in_kernel = 1;
#endif
	while ((uint64_t)in_off < sp->pos) {
		size_t want = (size_t)(sp->pos - (uint64_t)in_off);
		ssize_t k;
#ifdef __linux__
		if (in_kernel) {
			k = copy_file_range(sp->fd, &in_off, o->fd, &out_off, want, 0);
			if (k > 0 || (k < 0 && errno == EINTR))
				continue;
			in_kernel = 0; /* not supported here (or an error the plain path will report) */
		}
#endif
		if (want > o->cap)
			want = o->cap;
		k = pread(sp->fd, o->buf, want, in_off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return llm_fail(LLM_EIO, "%s: reading back a spool: %s", w->path,
			                k < 0 ? strerror(errno) : "short file");
		ssize_t put;
		do
			put = pwrite(o->fd, o->buf, (size_t)k, out_off);
		while (put < 0 && errno == EINTR);
		if (put < 0)
			return llm_fail(LLM_EIO, "%s: %s", w->path, strerror(errno));
		in_off += put;
		out_off += put;
	}
	o->pos = (uint64_t)out_off;
	if (lseek(o->fd, out_off, SEEK_SET) < 0)
		return llm_fail(LLM_EIO, "%s: %s", w->path, strerror(errno));
	llm_writeback_step(&o->wb, o->fd, o->pos);
	return LLM_OK;
}

static void writer_free(llm_shard_writer *w)
{
	llm_shard_afile_release(&w->f);
	llm_shard_obuf_release(&w->inputs);
	llm_shard_obuf_release(&w->meta);
	for (size_t i = 0; i < w->ndomains; i++)
		free(w->domains[i]);
	free(w->domains);
	free(w->doc_off);
	free(w->meta_off);
	free(w->info);
	free(w->path);
	free(w);
}

int llm_shard_writer_close(llm_shard_writer *w, llm_shard_info *info)
{
	llm_shard_info in;
	memset(&in, 0, sizeof in);
	in.version = LLM_SHARD_VERSION;
	in.width = w->p.width;
	in.vocab_size = w->p.vocab_size;
	in.flags = w->p.noised ? LLM_SHARD_NOISED : 0;
	in.eos_id = w->p.eos_id;
	in.tokenizer_id = w->p.tokenizer_id;
	in.docs = w->docs;
	in.tokens = w->tokens;
	int st = w->failed;
	uint64_t start = LLM_SHARD_HEADER_SIZE;
	if (st == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_TOKENS, start);
	start = llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = llm_shard_obuf_put(&w->f.out, w->doc_off, (w->docs + 1) * 8, w->path)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_DOC_OFFSETS, start);
	start = llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = llm_shard_obuf_put(&w->f.out, w->info, w->docs * 8, w->path)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_DOC_INFO, start);
	start = llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK && (!w->p.noised || (st = copy_spool(w, &w->inputs)) == LLM_OK))
		st = end_section(w, &in, LLM_SHARD_SEC_INPUTS, start);
	start = llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = llm_shard_obuf_put(&w->f.out, w->meta_off, (w->docs + 1) * 8, w->path)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_META_OFFSETS, start);
	start = llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = copy_spool(w, &w->meta)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_META, start);
	start = llm_shard_obuf_tell(&w->f.out);
	if (st == LLM_OK) {
		llm_buf j = LLM_BUF_INIT;
		llm_buf_addc(&j, '[');
		for (size_t i = 0; i < w->ndomains; i++) {
			if (i)
				llm_buf_adds(&j, ", ");
			llm_json_put_str(&j, w->domains[i], strlen(w->domains[i]));
		}
		llm_buf_addc(&j, ']');
		if ((st = llm_shard_obuf_put(&w->f.out, j.p, j.len, w->path)) == LLM_OK)
			st = end_section(w, &in, LLM_SHARD_SEC_DOMAINS, start);
		llm_buf_release(&j);
	}
	if (st == LLM_OK) {
		unsigned char h[LLM_SHARD_HEADER_SIZE];
		header_encode(&in, h);
		in.header_checksum = get64(h + HDR_CHECKSUM_AT);
		ssize_t k;
		do
			k = pwrite(w->f.out.fd, h, sizeof h, 0);
		while (k < 0 && errno == EINTR);
		if (k != (ssize_t)sizeof h)
			st = llm_fail(LLM_EIO, "%s: %s", w->path, k < 0 ? strerror(errno) : "short write");
	}
	/* At once: a shard is a part of a dataset that its manifest switches as a whole. */
	if (st == LLM_OK)
		st = llm_shard_afile_publish(&w->f, LLM_PUBLISH_NOW);
	if (st != LLM_OK) {
		llm_shard_writer_abort(w);
		return st;
	}
	if (info)
		*info = in;
	writer_free(w);
	return LLM_OK;
}

void llm_shard_writer_abort(llm_shard_writer *w)
{
	if (!w)
		return;
	writer_free(w);
}

