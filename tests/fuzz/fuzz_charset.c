/* fuzz_charset.c — decoding arbitrary bytes: auto (BOM, <meta>, detection) or forced as one
 * of the stateful and multi-byte encodings; the output is always valid UTF-8. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "text/charset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const forced[] = { NULL, "gb18030", "big5", "shift_jis", "euc-jp",
	                                      "iso-2022-jp", "euc-kr", "utf-16le", "utf-16be",
	                                      "windows-1258", "koi8-u", "iso-2022-kr", "utf-8" };
	static llm_charset *c;
	if (!c)
		c = llm_charset_new();
	if (size < 2)
		return 0;
	const char *f = forced[data[0] % (sizeof forced / sizeof forced[0])];
	bool html = data[1] & 1;
	size_t hl = (data[1] >> 1) & 15; /* the first hl bytes after the header are an HTTP label */
	size_t n = size - 2;
	if (hl > n)
		hl = n;
	char *s = malloc(n ? n : 1); /* a copy, so that reads past the end are caught */
	memcpy(s, data + 2, n);
	llm_buf out = LLM_BUF_INIT;
	llm_charset_result r;
	llm_charset_decode(c, s + hl, n - hl, f, hl ? s : NULL, hl, html, &out, &r);
	if (!r.encoding || !llm_utf8_valid(out.p ? out.p : "", out.len))
		abort();
	size_t ml;
	llm_charset_meta(s, n, &ml);
	llm_buf_release(&out);
	free(s);
	return 0;
}
