/*
 * fault.c — LLMKIT_FAULT, parsed once (see fault.h).
 */
#include "fault.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SPECS 8

static struct {
	char point[64];
	unsigned long at;
	atomic_ulong seen;
} kills[MAX_SPECS];
static int nkills, no_tmpfile;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void parse(void)
{
	const char *env = getenv("LLMKIT_FAULT");
	if (!env)
		return;
	char buf[512];
	size_t n = strlen(env) < sizeof buf - 1 ? strlen(env) : sizeof buf - 1;
	memcpy(buf, env, n);
	buf[n] = 0;
	char *save = NULL;
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (strcmp(item, "no-o-tmpfile") == 0) {
			no_tmpfile = 1;
		} else if (strncmp(item, "kill:", 5) == 0 && nkills < MAX_SPECS) {
			char *point = item + 5, *colon = strchr(point, ':');
			unsigned long at = 1;
			if (colon) {
				*colon = 0;
				at = strtoul(colon + 1, NULL, 10);
			}
			size_t k = strlen(point) < sizeof kills[0].point - 1 ? strlen(point)
			                                                      : sizeof kills[0].point - 1;
			memcpy(kills[nkills].point, point, k);
			kills[nkills].point[k] = 0;
			kills[nkills].at = at ? at : 1;
			nkills++;
		}
	}
}

void llm_fault_point(const char *point)
{
	pthread_once(&once, parse);
	for (int i = 0; i < nkills; i++)
		if (strcmp(kills[i].point, point) == 0 &&
		    atomic_fetch_add(&kills[i].seen, 1) + 1 == kills[i].at) {
			kill(getpid(), SIGKILL);
			pause();
		}
}

int llm_fault_knob(const char *knob)
{
	pthread_once(&once, parse);
	return strcmp(knob, "no-o-tmpfile") == 0 && no_tmpfile;
}
