/*
 * Fuzz target: compressed input (lib/core/codec through the reader). Whatever the bytes, the
 * reader returns lines or a status, never reads out of bounds, and a stream that failed keeps
 * failing; decoding the same bytes by binary reads must reach the same verdict.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_reader *r;
	if (llm_reader_open_mem(&r, data, size, "fuzz") != LLM_OK)
		return 0;
	llm_reader_set_max_line(r, 1 << 16);
	char *line;
	size_t len;
	int st;
	while ((st = llm_reader_line(r, &line, &len)) == LLM_OK || st == LLM_ETOOLONG)
		;
	llm_reader_free(r);
	if (llm_reader_open_mem(&r, data, size, "fuzz") != LLM_OK)
		abort(); /* opening does not depend on what follows the magic */
	char buf[4096];
	ssize_t k;
	while ((k = llm_reader_read(r, buf, sizeof buf)) > 0)
		;
	llm_reader_free(r);
	if ((k < 0) != (st != LLM_EOF))
		abort(); /* one verdict */
	return 0;
}
