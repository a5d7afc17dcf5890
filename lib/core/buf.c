/* buf.c — growable byte buffer (see buf.h). */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"

void llm_buf_init(llm_buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

void llm_buf_release(llm_buf *b)
{
	free(b->p);
	llm_buf_init(b);
}

void llm_buf_grow(llm_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap < ((size_t)1 << 62) ? cap * 2 : need;
	b->p = llm_realloc(b->p, cap);
	b->p[b->len] = 0; /* a fresh buffer is an empty string, not garbage */
	b->cap = cap;
}

void llm_buf_add(llm_buf *b, const void *data, size_t n)
{
	llm_buf_grow(b, n);
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void llm_buf_addf(llm_buf *b, const char *fmt, ...)
{
	va_list ap;
	llm_buf_grow(b, 64);
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		llm_buf_grow(b, n);
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += n;
}

void llm_buf_truncate(llm_buf *b, size_t n)
{
	if (n < b->len) {
		b->len = n;
		b->p[n] = 0;
	}
}

char *llm_buf_detach(llm_buf *b, size_t *len)
{
	if (!b->p)
		llm_buf_grow(b, 0);
	char *p = b->p;
	if (len)
		*len = b->len;
	llm_buf_init(b);
	return p;
}
