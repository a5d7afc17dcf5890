/*
 * Fuzz target: word lists (lib/text/wordlist.h). The input is a list and a text separated by
 * the first NUL byte: the list's lines become entries (any bytes: invalid UTF-8, "*" ends,
 * white space, CJK), then the text is scanned without word boundaries and with boundaries
 * at every byte whose value is odd, and every hit must lie inside the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/wordlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t nl = nul ? (size_t)(nul - data) : size;
	const char *text = nul ? (const char *)nul + 1 : "";
	size_t tl = nul ? size - nl - 1 : 0;
	llm_wordlist *w = llm_wordlist_new();
	llm_wordlist_set_cjk_min(w, 1 + (size & 1));
	for (size_t i = 0; i < nl;) {
		const uint8_t *e = memchr(data + i, '\n', nl - i);
		size_t n = e ? (size_t)(e - data) - i : nl - i;
		llm_wordlist_add(w, (const char *)data + i, n);
		i += n + 1;
	}
	if (llm_wordlist_compile(w) == 0) {
		llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
		uint8_t *bounds = calloc(tl / 8 + 1, 1);
		for (size_t i = 0; bounds && i <= tl; i++)
			if (i == tl || ((uint8_t)text[i] & 1))
				bounds[i / 8] |= (uint8_t)(1u << (i % 8));
		llm_wordlist_hit hits[16];
		for (int pass = 0; pass < 2; pass++) {
			size_t n = llm_wordlist_scan(w, s, text, tl, pass ? bounds : NULL, hits, 16);
			for (size_t k = 0; k < n && k < 16; k++)
				if (hits[k].off + hits[k].len > tl || hits[k].len == 0 ||
				    (k && hits[k].off < hits[k - 1].off + hits[k - 1].len))
					abort();
		}
		free(bounds);
		llm_wordlist_scratch_free(s);
	}
	llm_wordlist_free(w);
	return 0;
}
