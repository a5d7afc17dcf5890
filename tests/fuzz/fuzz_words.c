/*
 * Fuzz target: the word splitter (text/words.h) against its reference (words_ref.h, the
 * splitter as it was before its table-driven scanner). Whatever the bytes, both must give the
 * same words with the same byte spans, code point counts, flags and hashes:
 *   - with spaCy's rules, on the whole input and on a range inside it (offsets relative to
 *     the text, appended after the words already there);
 *   - with a segmenter that cuts each run at arbitrary byte lengths (taken from the input, so
 *     a cut may fall inside a UTF-8 sequence): llm_words_make on any span;
 *   - with the Chinese segmenter, on a small dictionary of its own (jieba's takes seconds to
 *     load under the sanitizers, longer than libFuzzer waits for one input; test_quality's
 *     FineWeb-2 agreement splits the Chinese samples with jieba's).
 * The corpus is written for this target, except specials-*: spaCy's English special cases
 * (lib/text/en_exceptions.h, MIT, with spaCy's copyright there), each with affixes around it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/err.h"
#include "text/words.h"
#include "text/zhseg.h"
#include "words_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const llm_words *a, const llm_words *b)
{
	if (a->n != b->n)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		const llm_word *x = &a->w[i], *y = &b->w[i];
		if (x->off != y->off || x->len != y->len || x->nchars != y->nchars ||
		    x->flags != y->flags || x->h != y->h || x->pw != y->pw)
			abort();
	}
}

/* Cuts at lengths 1..7 drawn from the text itself. */
static size_t odd_cut(void *self, const char *s, size_t n, uint32_t *lens)
{
	(void)self;
	size_t k = 0;
	for (size_t i = 0; i < n; k++) {
		size_t l = 1 + ((unsigned char)s[i] * 7u + (unsigned)i) % 7;
		lens[k] = (uint32_t)(l < n - i ? l : n - i);
		i += lens[k];
	}
	return k;
}

/* A dictionary from memory, read through a memfd's /proc path. */
static int load_mem(llm_zhseg_dict **d, const void *p, size_t n)
{
	int fd = memfd_create("words-dict", 0);
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

static void compare(const char *t, size_t size, const llm_segmenter *seg)
{
	llm_words a, b;
	llm_words_init(&a);
	llm_words_init(&b);
	llm_words_split(&a, t, 0, size, seg);
	ref_words_split(&b, t, 0, size, seg);
	same(&a, &b);
	size_t from = size / 3, to = size - size / 5;
	llm_words_split(&a, t, from, to, seg);
	ref_words_split(&b, t, from, to, seg);
	same(&a, &b);
	for (size_t i = 0; i < a.n; i++) {
		const llm_word *w = &a.w[i];
		if (w->len == 0 || w->off + w->len > size)
			abort();
	}
	llm_words_release(&a);
	llm_words_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static llm_zhseg *z; /* one for the whole run, as in a worker thread */
	llm_set_verbosity(0);
	/* a copy of its own size, so that a read past the end is caught */
	char *t = malloc(size ? size : 1);
	if (!t)
		abort();
	memcpy(t, data, size);
	compare(t, size, NULL);
	llm_segmenter odd = { odd_cut, NULL };
	compare(t, size, &odd);
	if (!z) {
		static llm_zhseg_dict *d;
		static const char dict[] = "中国 10\n中国人 5 nz\n人 3\n国人 4\n世界 8\n你好 6\n测试 5\n"
		                           "北京 9\n北京大学 4\n大学 7\nAT&T 3\nc# 2\n3.5 1\n";
		if (load_mem(&d, dict, sizeof dict - 1) != LLM_OK)
			abort();
		z = llm_zhseg_new(d);
	}
	llm_segmenter zh = llm_zhseg_segmenter(z);
	compare(t, size, &zh);
	free(t);
	return 0;
}
