/*
 * tox_pcre2.c — the peer of llm-tox's word lists in bench/tox_lists.sh: one PCRE2 alternation
 * of every entry of a list (each quoted with \Q...\E; UTF, caseless, JIT), counting the
 * non-overlapping matches in each line of a text file. Prints compile and scan CPU seconds,
 * or the error PCRE2 gives when it cannot compile the list.
 *
 *   tox_pcre2 LIST TEXT
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	size_t cap = 1 << 20, n = 0;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0)
		if ((n += r) == cap)
			b = realloc(b, cap *= 2);
	fclose(f);
	if (!b)
		exit(2);
	*len = n;
	return b;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tox_pcre2 LIST TEXT\n");
		return 2;
	}
	size_t ll, tl;
	char *list = slurp(argv[1], &ll), *text = slurp(argv[2], &tl);
	size_t cap = ll + 64, n = 0, entries = 0;
	char *pat = malloc(cap);
	if (!pat)
		return 2;
	for (size_t i = 0; i < ll;) {
		char *nl = memchr(list + i, '\n', ll - i);
		size_t e = nl ? (size_t)(nl - list) : ll;
		while (cap - n < e - i + 16)
			if (!(pat = realloc(pat, cap *= 2)))
				return 2;
		if (e > i) {
			n += (size_t)snprintf(pat + n, cap - n, "%s\\Q%.*s\\E", entries ? "|" : "",
			                      (int)(e - i), list + i);
			entries++;
		}
		i = e + 1;
	}
	double t0 = cpu();
	int err;
	PCRE2_SIZE at;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, n,
	                               PCRE2_UTF | PCRE2_CASELESS | PCRE2_MATCH_INVALID_UTF, &err, &at,
	                               NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		printf("pcre2: %zu entries: cannot compile: %s\n", entries, (char *)msg);
		return 0;
	}
	int jit = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
	double t1 = cpu();
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	size_t hits = 0;
	for (size_t i = 0; i < tl;) {
		char *nl = memchr(text + i, '\n', tl - i);
		size_t e = nl ? (size_t)(nl - text) : tl, off = i;
		while (off < e) {
			int rc = jit ? pcre2_jit_match(re, (PCRE2_SPTR)text, e, off, 0, md, NULL)
			             : pcre2_match(re, (PCRE2_SPTR)text, e, off, 0, md, NULL);
			if (rc < 0)
				break;
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			hits++;
			off = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
		}
		i = e + 1;
	}
	double t2 = cpu();
	printf("pcre2: %zu entries: compile %.2f s, scan %.2f s CPU (%.1f MB/s), %zu matches%s\n",
	       entries, t1 - t0, t2 - t1, (double)tl / 1e6 / (t2 - t1), hits, jit ? "" : " (no JIT)");
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	free(pat);
	free(list);
	free(text);
	return 0;
}
