/*
 * Fuzz target: the Chinese segmenter (text/zhseg.h) and its dictionary reader. An input
 * starting with 'd' is a dictionary file, a NUL byte, then a text segmented with that
 * dictionary when it loads; any other input is a text segmented with the default dictionary
 * (Debian's jieba dict.txt, or a small built-in one where that is missing). Whatever the
 * bytes, the tokens must cover the text exactly, in order, with kinds that match their bytes,
 * and the token-by-token iterator must give what llm_zhseg_cut gives.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/err.h"
#include "core/utf8.h"
#include "text/zhseg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A dictionary from memory, read through a memfd's /proc path. */
static int load_mem(llm_zhseg_dict **d, const void *p, size_t n)
{
	int fd = memfd_create("zhseg-dict", 0);
	if (fd < 0)
		abort();
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int rc = llm_zhseg_dict_load(d, path);
	close(fd);
	return rc;
}

static void check(const llm_zhseg_dict *d, const char *s, size_t n)
{
	llm_zhseg *z = llm_zhseg_new(d);
	const llm_zhseg_span *t;
	size_t k = llm_zhseg_cut(z, s, n, &t), at = 0;
	for (size_t i = 0; i < k; i++) {
		if (t[i].off != at || t[i].len == 0 || t[i].len > n - at)
			abort();
		const char *w = s + t[i].off;
		uint32_t cp;
		size_t len = llm_utf8_decode(w, t[i].len, &cp);
		switch (t[i].kind) {
		case LLM_ZHSEG_WORD:
			if (!llm_utf8_valid(w, t[i].len) || t[i].len > 3 * LLM_ZHSEG_MAX_RUN)
				abort();
			llm_zhseg_dict_freq(d, w, t[i].len);
			break;
		case LLM_ZHSEG_SPACE:
			if (!(len == t[i].len || (t[i].len == 2 && w[0] == '\r' && w[1] == '\n')))
				abort();
			break;
		case LLM_ZHSEG_OTHER:
			if (len != t[i].len || !llm_utf8_valid(w, len))
				abort();
			break;
		case LLM_ZHSEG_INVALID:
			if (len != t[i].len || llm_utf8_valid(w, len))
				abort();
			break;
		default:
			abort();
		}
		at += t[i].len;
	}
	if (at != n)
		abort();
	llm_zhseg_span *copy = malloc((k ? k : 1) * sizeof *copy);
	if (!copy)
		abort();
	memcpy(copy, t, k * sizeof *copy);
	llm_zhseg_span one;
	size_t j = 0;
	llm_zhseg_start(z, s, n);
	while (llm_zhseg_next(z, &one)) {
		if (j >= k || one.off != copy[j].off || one.len != copy[j].len || one.kind != copy[j].kind)
			abort();
		j++;
	}
	if (j != k)
		abort();
	free(copy);
	llm_zhseg_free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const llm_zhseg_dict *dflt;
	static llm_zhseg_dict *builtin;
	llm_set_verbosity(0);
	if (size && data[0] == 'd') {
		const uint8_t *nul = memchr(data + 1, 0, size - 1);
		size_t dl = nul ? (size_t)(nul - data - 1) : size - 1;
		llm_zhseg_dict *d;
		if (load_mem(&d, data + 1, dl) == LLM_OK) {
			const char *text = nul ? (const char *)nul + 1 : "";
			check(d, text, nul ? size - dl - 2 : 0);
			llm_zhseg_dict_free(d);
		}
		return 0;
	}
	if (!dflt && !builtin && llm_zhseg_dict_default(&dflt) != LLM_OK) {
		static const char small[] = "中国 10\n中国人 5 nz\n人 3\n国人 4\nAT&T 3\nc# 2\n3.5 1\n";
		if (load_mem(&builtin, small, sizeof small - 1) != LLM_OK)
			abort();
	}
	check(dflt ? dflt : builtin, (const char *)data, size);
	return 0;
}
