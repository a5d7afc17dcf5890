/* fuzz_html.c — HTML to text and entity decoding on arbitrary bytes: no crash, no read past
 * the input, and the output of a conversion never grows beyond a bound of the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/html.h"
#include "text/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* copy so that reads past the end are caught by the sanitizers */
	char *s = malloc(size ? size : 1);
	memcpy(s, data, size);
	static llm_html *h;
	if (!h)
		h = llm_html_new();
	llm_buf out = LLM_BUF_INIT, dec = LLM_BUF_INIT, norm = LLM_BUF_INIT, again = LLM_BUF_INIT;
	llm_html_opts o = LLM_HTML_OPTS_DEFAULT;
	o.boilerplate = size > 0 && (data[0] & 1);
	llm_html_to_text(h, s, size, &o, &out);
	llm_html_decode_entities(s, size, &dec);
	/* the longest reference expansion is 3 bytes of name for 6 bytes of output and
	 * "&#0;" -> U+FFFD: never more than twice the input, plus separators */
	if (dec.len > 2 * size + 4 || out.len > 3 * size + 4)
		abort();
	llm_norm_opts no = LLM_NORM_OPTS_DEFAULT;
	llm_normalize(out.p, out.len, &no, &norm);
	llm_normalize(norm.p, norm.len, &no, &again);
	if (again.len != norm.len || memcmp(again.p, norm.p, norm.len) != 0)
		abort(); /* normalisation is idempotent */
	llm_buf_release(&out);
	llm_buf_release(&dec);
	llm_buf_release(&norm);
	llm_buf_release(&again);
	free(s);
	return 0;
}
