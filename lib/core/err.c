/*
 * err.c — status strings, per-thread error details, stderr messages, allocation policy.
 *
 * Each message is formatted into one buffer and written with a single write(2) so that lines
 * from threads (or from the tools of a pipeline sharing one terminal) never interleave.
 */
#include "err.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "llmkit";
static int verbosity = 1;
static atomic_ulong warnings;
static const unsigned long warn_cap = 50;
static _Thread_local char detail[1024];
static _Thread_local int detail_status;

const char *llm_strerror(int status)
{
	switch (status) {
	case LLM_OK: return "success";
	case LLM_EOF: return "end of input";
	case LLM_ENOMEM: return "out of memory";
	case LLM_EIO: return "input/output error";
	case LLM_EFORMAT: return "malformed input";
	case LLM_EINVAL: return "invalid argument";
	case LLM_ETOOLONG: return "record too long";
	case LLM_ENOTFOUND: return "not found";
	case LLM_EUNSUPPORTED: return "unsupported";
	case LLM_EINTERNAL: return "internal error";
	}
	return "unknown error";
}

/*
 * Callers add context to a callee's failure with llm_fail(rc, "%s: %s", name, llm_last_error()):
 * the detail is then an argument of its own format. Formatting straight into it would let
 * vsnprintf read what it is overwriting (undefined behaviour, garbled messages), so the new
 * detail is formatted aside and copied in.
 */
int llm_fail(int status, const char *fmt, ...)
{
	char msg[sizeof detail];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	memcpy(detail, msg, strlen(msg) + 1);
	detail_status = status;
	return status;
}

const char *llm_last_error(void)
{
	return detail[0] ? detail : llm_strerror(detail_status);
}

void llm_msg_init(const char *name)
{
	const char *slash = strrchr(name, '/');
	prog = slash ? slash + 1 : name;
}

const char *llm_prog(void) { return prog; }
void llm_set_verbosity(int level) { verbosity = level; }
int llm_verbosity(void) { return verbosity; }

static void emit(const char *file, unsigned long long line, const char *fmt, va_list ap)
{
	char buf[4096];
	int n = snprintf(buf, sizeof buf, "%s: ", prog);
	if (file && line)
		n += snprintf(buf + n, sizeof buf - n, "%s:%llu: ", file, line);
	else if (file)
		n += snprintf(buf + n, sizeof buf - n, "%s: ", file);
	if (n < (int)sizeof buf)
		n += vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	if (n > (int)sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, n);
	(void)w;
}

void llm_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(NULL, 0, fmt, ap);
	va_end(ap);
}

void llm_error_at(const char *file, unsigned long long line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(file, line, fmt, ap);
	va_end(ap);
}

static int warn_allowed(void)
{
	unsigned long n = atomic_fetch_add(&warnings, 1) + 1;
	if (n <= warn_cap)
		return 1;
	if (n == warn_cap + 1) {
		char msg[256];
		int len = snprintf(msg, sizeof msg, "%s: more than %lu warnings; further ones are suppressed\n",
		                   prog, warn_cap);
		ssize_t w = write(2, msg, len);
		(void)w;
	}
	return 0;
}

void llm_warn_at(const char *file, unsigned long long line, const char *fmt, ...)
{
	if (!warn_allowed())
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(file, line, fmt, ap);
	va_end(ap);
}

void llm_warn(const char *fmt, ...)
{
	if (!warn_allowed())
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(NULL, 0, fmt, ap);
	va_end(ap);
}

void llm_info(const char *fmt, ...)
{
	if (verbosity < 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(NULL, 0, fmt, ap);
	va_end(ap);
}

void llm_debug(const char *fmt, ...)
{
	if (verbosity < 2)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(NULL, 0, fmt, ap);
	va_end(ap);
}

static void default_oom(size_t bytes)
{
	char msg[128];
	int n = snprintf(msg, sizeof msg, "%s: out of memory (allocating %zu bytes)\n", prog, bytes);
	ssize_t w = write(2, msg, n);
	(void)w;
	abort();
}

static llm_oom_fn oom = default_oom;

void llm_set_oom_handler(llm_oom_fn fn) { oom = fn ? fn : default_oom; }

void *llm_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *llm_malloc_lines(size_t n)
{
	void *p = aligned_alloc(64, ((n ? n : 1) + 63) & ~(size_t)63);
	if (!p)
		oom(n);
	return p;
}

void *llm_calloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		oom(count * size);
	return p;
}

void *llm_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *llm_strdup(const char *s)
{
	return llm_strndup(s, strlen(s));
}

char *llm_strndup(const char *s, size_t n)
{
	char *p = llm_malloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}
