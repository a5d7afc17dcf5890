/*
 * err.h — status codes, messages and the out-of-memory policy shared by all of llmkit.
 *
 * Status convention: every fallible library function returns int, LLM_OK (0) on success and a
 * negative LLM_E* code on failure. The failing function also records a human-readable detail
 * ("data.jsonl: No such file or directory") retrievable with llm_last_error(); the detail is
 * per thread and valid until the next failing call on that thread.
 *
 * Messages: lib/ never prints except through this module. Everything goes to stderr in the
 * shape "PROG: [FILE:LINE: ]what went wrong". Warnings are capped (50, then one notice) so
 * that a corpus of bad records cannot flood the terminal; the rejects file holds every one.
 *
 * Allocation: llm_malloc/llm_calloc/llm_realloc/llm_strdup never return NULL. On failure they
 * call the out-of-memory handler (set by the program; the default prints and aborts). The
 * library itself never calls exit().
 *
 * Thread safety: message functions may be called from any thread (each message is one write).
 */
#ifndef LLM_ERR_H
#define LLM_ERR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" { /* the CUDA kernels (C++) report through these */
#endif

enum {
	LLM_OK = 0,
	LLM_EOF = -1,          /* end of input; not an error for iteration */
	LLM_ENOMEM = -2,
	LLM_EIO = -3,          /* read/write/open failure; detail has the system reason */
	LLM_EFORMAT = -4,      /* malformed input data (bad JSON, corrupt file, truncated stream) */
	LLM_EINVAL = -5,       /* bad argument or value */
	LLM_ETOOLONG = -6,     /* a line or record over its configured limit */
	LLM_ENOTFOUND = -7,    /* a key, field or file that does not exist */
	LLM_EUNSUPPORTED = -8, /* valid input this build cannot handle */
	LLM_EINTERNAL = -9     /* a broken invariant: a bug */
};

/* Short static description of a status code ("malformed input"). */
const char *llm_strerror(int status);

/* Record a detail message for the calling thread and return status (for "return llm_fail(...)"). */
int llm_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The detail of the last failure on this thread, or llm_strerror of it when none was given. */
const char *llm_last_error(void);

/* Program name used as message prefix; set once at start-up. */
void llm_msg_init(const char *prog);
const char *llm_prog(void);

/* Verbosity: 0 quiet (warnings and errors only), 1 normal (default), 2 verbose. */
void llm_set_verbosity(int level);
int llm_verbosity(void);

void llm_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROG: FILE:LINE: msg"; line 0 omits the line, file NULL omits both. */
void llm_error_at(const char *file, unsigned long long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void llm_warn_at(const char *file, unsigned long long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void llm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void llm_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* verbosity >= 1 */
void llm_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* verbosity >= 2 */

/* Allocation that never returns NULL (see above). */
typedef void (*llm_oom_fn)(size_t bytes);
void llm_set_oom_handler(llm_oom_fn fn);
void *llm_malloc(size_t n);
void *llm_calloc(size_t count, size_t size);
/* n bytes at an address that is a multiple of 64 (a cache line), freed with free(). */
void *llm_malloc_lines(size_t n);
void *llm_realloc(void *p, size_t n);
char *llm_strdup(const char *s);
char *llm_strndup(const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif
