/*
 * sigfile.c — signature files (see sigfile.h).
 *
 * Little-endian with a magic, a version and a trailing XXH3-64 of all bytes before it. The
 * file is streamed both ways, so its checksum is computed on the fly and checked when the
 * trailer is reached: a reader only trusts a file completely at LLM_EOF.
 */
#include "sigfile.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"

#define SIG_MAGIC "LLMDSIG1"
#define FILE_VERSION 1u
#define MAX_ID (1u << 20)
#define MAX_SET (1u << 28)
#define TAG_NONE 0
#define TAG_SIG 1
#define TAG_END 0xff

static void put32(llm_buf *b, uint32_t x) { llm_buf_add(b, &x, 4); }
static void put64(llm_buf *b, uint64_t x) { llm_buf_add(b, &x, 8); }
static uint32_t get32(const void *p) { uint32_t x; memcpy(&x, p, 4); return x; }
static uint64_t get64(const void *p) { uint64_t x; memcpy(&x, p, 8); return x; }

/* Header after the magic: version, method, the parameters (norm, units, ngram, num_perm,
 * bands, rows, hash_bits, hamming, blocks, 0, seed), verification threshold as f64. */
static void put_header(llm_buf *b, const llm_dedup_params *p)
{
	llm_buf_add(b, SIG_MAGIC, 8);
	put32(b, FILE_VERSION);
	put32(b, (uint32_t)p->method);
	uint32_t v[10] = { p->sh.norm, p->sh.units, p->sh.ngram, p->num_perm, p->bands, p->rows,
		           p->hash_bits, p->hamming, p->blocks, 0 };
	for (int i = 0; i < 10; i++)
		put32(b, v[i]);
	put64(b, p->sh.seed);
	llm_buf_add(b, &p->verify, 8);
}
#define SIG_HEADER (8 + 4 + 4 + 40 + 8 + 8)

struct llm_sigfile_writer {
	llm_writer *w;
	llm_hasher *h;
	llm_dedup_params p;
	llm_buf b;
	uint64_t n;
};

static int sigw_flush(llm_sigfile_writer *w)
{
	llm_hasher_add(w->h, w->b.p, w->b.len);
	int rc = llm_writer_write(w->w, w->b.p, w->b.len);
	llm_buf_reset(&w->b);
	return rc;
}

int llm_sigfile_create(llm_sigfile_writer **out, const char *path, const llm_dedup_params *p)
{
	*out = NULL;
	llm_writer *lw;
	int rc = llm_writer_open(&lw, path);
	if (rc)
		return rc;
	llm_sigfile_writer *w = llm_calloc(1, sizeof *w);
	w->w = lw;
	w->h = llm_hasher_new(0);
	w->p = *p;
	llm_buf_init(&w->b);
	put_header(&w->b, p);
	*out = w;
	return LLM_OK;
}

int llm_sigfile_add(llm_sigfile_writer *w, const llm_dedup_sig *sig, const char *id, size_t idlen)
{
	if (idlen > MAX_ID)
		idlen = MAX_ID;
	int has = sig && sig->has;
	llm_buf_addc(&w->b, has ? TAG_SIG : TAG_NONE);
	put32(&w->b, (uint32_t)idlen);
	llm_buf_add(&w->b, id, idlen);
	if (has) {
		switch (w->p.method) {
		case LLM_DEDUP_EXACT:
			put64(&w->b, sig->keys[0]);
			put64(&w->b, sig->key_hi);
			break;
		case LLM_DEDUP_MINHASH:
			llm_buf_add(&w->b, sig->keys, (size_t)w->p.bands * 8);
			if (w->p.verify > 0) {
				put32(&w->b, sig->nset);
				llm_buf_add(&w->b, sig->set, (size_t)sig->nset * 4);
			}
			break;
		case LLM_DEDUP_SIMHASH:
			put64(&w->b, sig->fp);
			break;
		}
	}
	w->n++;
	return w->b.len >= 1 << 16 ? sigw_flush(w) : LLM_OK;
}

void llm_sigfile_abort(llm_sigfile_writer *w)
{
	if (!w)
		return;
	llm_writer_abort(w->w);
	llm_hasher_free(w->h);
	llm_buf_release(&w->b);
	free(w);
}

int llm_sigfile_close(llm_sigfile_writer *w)
{
	llm_buf_addc(&w->b, (char)TAG_END);
	put64(&w->b, w->n);
	int rc = sigw_flush(w);
	if (rc) {
		llm_sigfile_abort(w);
		return rc;
	}
	put64(&w->b, llm_hasher_digest(w->h));
	rc = llm_writer_write(w->w, w->b.p, w->b.len);
	if (rc) {
		llm_sigfile_abort(w);
		return rc;
	}
	rc = llm_writer_close(w->w);
	llm_hasher_free(w->h);
	llm_buf_release(&w->b);
	free(w);
	return rc;
}

struct llm_sigfile_reader {
	llm_reader *r;
	llm_hasher *h;
	llm_dedup_params p;
	char *path;
	uint64_t n, checksum;
	llm_buf id;
	uint64_t *keys;
	uint32_t *set;
	size_t setcap;
	int done;
};

/* Read exactly n bytes into buf, hashing them; a short read is a truncated file. */
static int rd(llm_sigfile_reader *r, void *buf, size_t n, int hash)
{
	int rc = llm_reader_read_exact(r->r, buf, n);
	if (rc == LLM_EOF || rc == LLM_EFORMAT)
		return llm_fail(LLM_EFORMAT, "%s: signature file is truncated (record %llu)", r->path,
		                (unsigned long long)r->n);
	if (rc)
		return rc;
	if (hash)
		llm_hasher_add(r->h, buf, n);
	return LLM_OK;
}

void llm_sigfile_free(llm_sigfile_reader *r)
{
	if (!r)
		return;
	llm_reader_free(r->r);
	llm_hasher_free(r->h);
	free(r->path);
	llm_buf_release(&r->id);
	free(r->keys);
	free(r->set);
	free(r);
}

int llm_sigfile_open(llm_sigfile_reader **out, const char *path, llm_dedup_params *p)
{
	*out = NULL;
	llm_reader *lr;
	int rc = llm_reader_open(&lr, path);
	if (rc)
		return rc;
	llm_sigfile_reader *r = llm_calloc(1, sizeof *r);
	r->r = lr;
	r->h = llm_hasher_new(0);
	r->path = llm_strdup(path);
	llm_buf_init(&r->id);
	unsigned char hd[SIG_HEADER];
	rc = rd(r, hd, sizeof hd, 1);
	if (rc)
		goto fail;
	if (memcmp(hd, SIG_MAGIC, 8) != 0) {
		rc = llm_fail(LLM_EFORMAT, "%s: not a signature file (bad magic)", path);
		goto fail;
	}
	if (get32(hd + 8) != FILE_VERSION) {
		rc = llm_fail(LLM_EFORMAT, "%s: signature file version %u not supported", path,
		              get32(hd + 8));
		goto fail;
	}
	llm_dedup_params_default(&r->p, LLM_DEDUP_MINHASH);
	uint32_t m = get32(hd + 12);
	const unsigned char *v = hd + 16;
	r->p.method = (llm_dedup_method)m;
	r->p.sh.norm = (llm_norm_level)get32(v);
	r->p.sh.units = (llm_units)get32(v + 4);
	r->p.sh.ngram = get32(v + 8);
	r->p.num_perm = get32(v + 12);
	r->p.bands = get32(v + 16);
	r->p.rows = get32(v + 20);
	r->p.hash_bits = get32(v + 24);
	r->p.hamming = get32(v + 28);
	r->p.blocks = get32(v + 32);
	r->p.sh.seed = get64(v + 40);
	memcpy(&r->p.verify, v + 48, 8);
	if (m > LLM_DEDUP_SIMHASH || r->p.sh.norm > LLM_NORM_FULL || r->p.sh.units > LLM_UNITS_CHAR ||
	    !(r->p.verify >= 0 && r->p.verify <= 1) || llm_dedup_params_check(&r->p) != LLM_OK) {
		rc = llm_fail(LLM_EFORMAT, "%s: signature file has invalid parameters", path);
		goto fail;
	}
	/* bands is only checked (<= num_perm <= LLM_MINHASH_MAX_PERM) for minhash */
	r->keys = llm_malloc((r->p.method == LLM_DEDUP_MINHASH ? r->p.bands : 1) * sizeof *r->keys);
	*p = r->p;
	*out = r;
	return LLM_OK;
fail:
	llm_sigfile_free(r);
	return rc;
}

int llm_sigfile_next(llm_sigfile_reader *r, llm_dedup_sig *sig, const char **id, size_t *idlen)
{
	memset(sig, 0, sizeof *sig);
	if (r->done)
		return LLM_EOF;
	unsigned char tag;
	int rc = rd(r, &tag, 1, 1);
	if (rc)
		return rc;
	if (tag == TAG_END) {
		unsigned char t[16];
		if ((rc = rd(r, t, 8, 1)) || (rc = rd(r, t + 8, 8, 0)))
			return rc;
		if (get64(t) != r->n)
			return llm_fail(LLM_EFORMAT, "%s: trailer says %llu records, file has %llu",
			                r->path, (unsigned long long)get64(t), (unsigned long long)r->n);
		r->checksum = llm_hasher_digest(r->h);
		if (get64(t + 8) != r->checksum)
			return llm_fail(LLM_EFORMAT, "%s: signature file checksum mismatch", r->path);
		char extra;
		if (llm_reader_read(r->r, &extra, 1) != 0)
			return llm_fail(LLM_EFORMAT, "%s: bytes after the trailer", r->path);
		r->done = 1;
		return LLM_EOF;
	}
	if (tag != TAG_NONE && tag != TAG_SIG)
		return llm_fail(LLM_EFORMAT, "%s: bad record tag %u at record %llu", r->path, tag,
		                (unsigned long long)r->n);
	unsigned char l4[4];
	if ((rc = rd(r, l4, 4, 1)))
		return rc;
	uint32_t l = get32(l4);
	if (l > MAX_ID)
		return llm_fail(LLM_EFORMAT, "%s: id of %u bytes at record %llu", r->path, l,
		                (unsigned long long)r->n);
	llm_buf_reset(&r->id);
	llm_buf_grow(&r->id, l);
	if ((rc = rd(r, r->id.p, l, 1)))
		return rc;
	r->id.len = l;
	r->id.p[l] = 0;
	*id = r->id.p;
	*idlen = l;
	if (tag == TAG_SIG) {
		sig->has = 1;
		switch (r->p.method) {
		case LLM_DEDUP_EXACT:
			if ((rc = rd(r, r->keys, 8, 1)) || (rc = rd(r, &sig->key_hi, 8, 1)))
				return rc;
			sig->nkeys = 1;
			sig->keys = r->keys;
			break;
		case LLM_DEDUP_MINHASH:
			if ((rc = rd(r, r->keys, (size_t)r->p.bands * 8, 1)))
				return rc;
			sig->nkeys = r->p.bands;
			sig->keys = r->keys;
			if (r->p.verify > 0) {
				if ((rc = rd(r, l4, 4, 1)))
					return rc;
				uint32_t ns = get32(l4);
				if (ns > MAX_SET)
					return llm_fail(LLM_EFORMAT, "%s: shingle set of %u at record %llu",
					                r->path, ns, (unsigned long long)r->n);
				if (ns > r->setcap) {
					r->setcap = ns;
					r->set = llm_realloc(r->set, ns * sizeof *r->set);
				}
				if ((rc = rd(r, r->set, (size_t)ns * 4, 1)))
					return rc;
				for (uint32_t i = 1; i < ns; i++)
					if (r->set[i] <= r->set[i - 1])
						return llm_fail(LLM_EFORMAT, "%s: unsorted shingle set at record %llu",
						                r->path, (unsigned long long)r->n);
				sig->set = r->set;
				sig->nset = ns;
			}
			break;
		case LLM_DEDUP_SIMHASH:
			if ((rc = rd(r, &sig->fp, 8, 1)))
				return rc;
			break;
		}
	}
	r->n++;
	return LLM_OK;
}

uint64_t llm_sigfile_checksum(const llm_sigfile_reader *r) { return r->checksum; }
