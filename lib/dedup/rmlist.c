/*
 * rmlist.c — removal lists (see rmlist.h): little-endian with a magic, a version and a
 * trailing XXH3-64 of all bytes before it, checked when the list is loaded.
 */
#include "rmlist.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"

#define RM_MAGIC "LLMDRMV1"
#define FILE_VERSION 2u
#define MAX_ID (1u << 20)

static void put32(llm_buf *b, uint32_t x) { llm_buf_add(b, &x, 4); }
static void put64(llm_buf *b, uint64_t x) { llm_buf_add(b, &x, 8); }
static uint32_t get32(const void *p) { uint32_t x; memcpy(&x, p, 4); return x; }
static uint64_t get64(const void *p) { uint64_t x; memcpy(&x, p, 8); return x; }


#define RM_HEADER (8 + 4 + 4 + 8 + 8 + 8)
#define ENTRY_FIXED (8 + 1 + 8 + 4) /* record, kind, cluster size, id length */

void llm_rmlist_writer_init(llm_rmlist_writer *w)
{
	llm_buf_init(&w->b);
	w->n = 0;
	w->last = UINT64_MAX;
	llm_buf_add(&w->b, RM_MAGIC, 8);
	put32(&w->b, FILE_VERSION);
	put32(&w->b, 0);
	put64(&w->b, 0);
	put64(&w->b, 0);
	put64(&w->b, 0);
}

void llm_rmlist_add(llm_rmlist_writer *w, uint64_t rec, int kind, uint64_t count, const char *id,
                    size_t idlen)
{
	if (idlen > MAX_ID)
		idlen = MAX_ID;
	put64(&w->b, rec);
	llm_buf_addc(&w->b, (char)kind);
	put64(&w->b, count);
	put32(&w->b, (uint32_t)idlen);
	llm_buf_add(&w->b, id, idlen);
	w->n++;
	w->last = rec;
}

int llm_rmlist_write(llm_rmlist_writer *w, const char *path, uint64_t nrecords,
                     uint64_t sig_checksum)
{
	memcpy(w->b.p + 16, &nrecords, 8);
	memcpy(w->b.p + 24, &sig_checksum, 8);
	memcpy(w->b.p + 32, &w->n, 8);
	size_t body = w->b.len;
	put64(&w->b, llm_hash64(w->b.p, body, 0));
	int rc = llm_write_file(path, w->b.p, w->b.len);
	llm_buf_truncate(&w->b, body);
	return rc;
}

void llm_rmlist_writer_release(llm_rmlist_writer *w) { llm_buf_release(&w->b); }

char *llm_rmlist_path(const char *sigfile, const char *dir)
{
	llm_buf b = LLM_BUF_INIT;
	const char *base = strrchr(sigfile, '/');
	if (dir)
		llm_buf_addf(&b, "%s/%s", dir, base ? base + 1 : sigfile);
	else
		llm_buf_adds(&b, sigfile);
	if (b.len > 4 && !strcmp(b.p + b.len - 4, ".zst"))
		llm_buf_truncate(&b, b.len - 4);
	if (b.len > 4 && !strcmp(b.p + b.len - 4, ".sig"))
		llm_buf_truncate(&b, b.len - 4);
	llm_buf_adds(&b, ".rm");
	return llm_buf_detach(&b, NULL);
}

int llm_rmlist_load(llm_rmlist_reader *l, const char *path)
{
	memset(l, 0, sizeof *l);
	l->path = path;
	int rc = llm_read_file(path, &l->data, &l->len);
	if (rc)
		return rc;
	if (l->len < RM_HEADER + 8 || memcmp(l->data, RM_MAGIC, 8) != 0)
		return llm_fail(LLM_EFORMAT, "%s: not a removal list (bad magic or too short)", path);
	if (get32(l->data + 8) != FILE_VERSION)
		return llm_fail(LLM_EFORMAT, "%s: removal list version %u not supported", path,
		                get32(l->data + 8));
	if (llm_hash64(l->data, l->len - 8, 0) != get64(l->data + l->len - 8))
		return llm_fail(LLM_EFORMAT, "%s: removal list checksum mismatch", path);
	l->nrecords = get64(l->data + 16);
	l->sig_checksum = get64(l->data + 24);
	l->nentries = get64(l->data + 32);
	l->pos = RM_HEADER;
	l->len -= 8;
	return LLM_OK;
}

int llm_rmlist_next(llm_rmlist_reader *l, llm_rmlist_entry *e)
{
	if (l->next == l->nentries) {
		if (l->pos != l->len)
			return llm_fail(LLM_EFORMAT, "%s: bytes after the last entry", l->path);
		return LLM_EOF;
	}
	if (l->len - l->pos < ENTRY_FIXED ||
	    l->len - l->pos - ENTRY_FIXED < get32(l->data + l->pos + 17))
		return llm_fail(LLM_EFORMAT, "%s: entry %llu runs past the end", l->path,
		                (unsigned long long)l->next);
	const char *p = l->data + l->pos;
	uint64_t rec = get64(p);
	int kind = (unsigned char)p[8];
	uint64_t count = get64(p + 9);
	if ((kind != LLM_RMLIST_SURVIVOR && kind != LLM_RMLIST_DUPLICATE) || rec >= l->nrecords ||
	    (l->next && rec <= l->last) || count < 2)
		return llm_fail(LLM_EFORMAT, "%s: bad entry %llu (record %llu, kind %d)", l->path,
		                (unsigned long long)l->next, (unsigned long long)rec, kind);
	e->rec = l->last = rec;
	e->kind = kind;
	e->count = count;
	e->idlen = get32(p + 17);
	e->id = p + ENTRY_FIXED;
	l->pos += ENTRY_FIXED + e->idlen;
	l->next++;
	return LLM_OK;
}

void llm_rmlist_reader_release(llm_rmlist_reader *l)
{
	free(l->data);
	memset(l, 0, sizeof *l);
}
