/*
 * buf.h — growable byte buffer, the one string builder of llmkit.
 *
 * The caller owns the struct (llm_buf_init / llm_buf_release); the bytes are heap memory owned
 * by the buffer. p is always NUL-terminated after any append (len excludes the NUL), so
 * p can be handed to C string functions when the content has no embedded NUL.
 * Growth is geometric; allocation failure goes to the OOM handler (err.h), never NULL.
 * Not thread safe: one buffer, one thread.
 */
#ifndef LLM_BUF_H
#define LLM_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
	char *p;
	size_t len;
	size_t cap;
} llm_buf;

#define LLM_BUF_INIT { NULL, 0, 0 }

void llm_buf_init(llm_buf *b);
void llm_buf_release(llm_buf *b);
/* Make room for extra more bytes (plus the NUL). */
void llm_buf_grow(llm_buf *b, size_t extra);
void llm_buf_add(llm_buf *b, const void *data, size_t n);
void llm_buf_addf(llm_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Shorten to n bytes (n <= len). */
void llm_buf_truncate(llm_buf *b, size_t n);
/* Hand the bytes to the caller (free() them); the buffer is left empty. */
char *llm_buf_detach(llm_buf *b, size_t *len);

static inline void llm_buf_reset(llm_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

static inline void llm_buf_addc(llm_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		llm_buf_grow(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

static inline void llm_buf_adds(llm_buf *b, const char *s)
{
	llm_buf_add(b, s, strlen(s));
}

#endif
