/*
 * killat.c — a preload library for the fault-injection tests: it ends its process with
 * SIGKILL at a chosen point of its work, as `kill -9` at that moment would, with no timing.
 *
 *   LLM_KILL_AT=rename:NAME[@K]    just before the K-th rename(2) (default the first) whose
 *                                  new name contains NAME: what was written is not published
 *   LLM_KILL_AT=write:NAME:BYTES   once BYTES bytes in all went to files whose path contains
 *                                  NAME: a file cut mid-write
 *   LLM_KILL_AT=pause:NAME[@K]     not a kill: just before that rename(2), wait on the FIFO
 *                                  $LLM_PAUSE_FIFO until its writer closes it. The test's
 *                                  open of the FIFO for writing returns when the process is
 *                                  there; closing it lets the process go on.
 *
 * Built by the tests that use it:
 *   cc -shared -fPIC -o killat.so "$TOP/tests/killat.c" -ldl
 *   LD_PRELOAD=./killat.so LLM_KILL_AT=rename:latest@2 llm-train ...
 * (under SAN=1 with ASAN_OPTIONS=verify_asan_link_order=0: ASan wants to be loaded first).
 * Why this and LLMKIT_FAULT (lib/core/fault.h) are two mechanisms: see fault.h.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char kind[16], name[256];
static long long limit, seen;
static int parsed;

static void parse(void)
{
	parsed = 1;
	const char *v = getenv("LLM_KILL_AT");
	if (!v)
		return;
	const char *c1 = strchr(v, ':');
	if (!c1 || (size_t)(c1 - v) >= sizeof kind)
		return;
	memcpy(kind, v, (size_t)(c1 - v));
	const char *end = c1 + 1 + strcspn(c1 + 1, strcmp(kind, "write") ? "@" : ":");
	snprintf(name, sizeof name, "%.*s", (int)(end - c1 - 1), c1 + 1);
	limit = *end ? atoll(end + 1) : 1;
}

static void die_now(void)
{
	raise(SIGKILL);
}

static void pause_here(void)
{
	const char *fifo = getenv("LLM_PAUSE_FIFO");
	int fd = fifo ? open(fifo, O_RDONLY) : -1;
	char c;
	while (fd >= 0 && read(fd, &c, 1) > 0)
		;
	if (fd >= 0)
		close(fd);
}

int rename(const char *from, const char *to)
{
	static int (*real)(const char *, const char *);
	if (!real)
		real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	if (!parsed)
		parse();
	if (strcmp(kind, "rename") == 0 && strstr(to, name) && ++seen == limit)
		die_now();
	if (strcmp(kind, "pause") == 0 && strstr(to, name) && ++seen == limit)
		pause_here();
	return real(from, to);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (!parsed)
		parse();
	if (strcmp(kind, "write") != 0 || fd < 3)
		return real(fd, buf, n);
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t k = readlink(link, path, sizeof path - 1);
	path[k > 0 ? k : 0] = 0;
	if (k <= 0 || !strstr(path, name))
		return real(fd, buf, n);
	if (seen + (long long)n < limit) {
		ssize_t w = real(fd, buf, n);
		seen += w > 0 ? w : 0;
		return w;
	}
	if (limit > seen)
		real(fd, buf, (size_t)(limit - seen));
	die_now();
	return -1;
}
