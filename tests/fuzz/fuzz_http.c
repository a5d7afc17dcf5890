/* fuzz_http.c — HTTP responses as web archives hold them: framing, chunks and content codings
 * on arbitrary bytes. The first byte picks the truncated flag; the decoded body never exceeds
 * its cap, whatever a compressed body expands to. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "text/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = size - 1;
	char *s = malloc(n ? n : 1); /* a copy, so that reads past the end are caught */
	memcpy(s, data + 1, n);
	llm_http_response h;
	llm_http_response_init(&h);
	size_t max = 1 << 16;
	int rc = llm_http_parse(&h, s, n, data[0] & 1, max);
	if (rc == LLM_OK && h.body.len > max)
		abort();
	llm_buf cs = LLM_BUF_INIT;
	llm_http_charset(h.content_type.p ? h.content_type.p : "", h.content_type.len, &cs);
	llm_buf_release(&cs);
	llm_http_response_release(&h);
	free(s);
	return 0;
}
