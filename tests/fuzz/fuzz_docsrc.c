/* Fuzz target: format detection, WARC/ARC/HTTP parsing, archives and text splitting in llm-cat's
 * document source, over arbitrary (possibly compressed) bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "text/docsrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int formats[] = { LLM_DOCSRC_AUTO, LLM_DOCSRC_WARC, LLM_DOCSRC_ARC, LLM_DOCSRC_TEXT };
	for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
		llm_docsrc_opts o = { 0 };
		o.format = formats[f];
		o.split = LLM_DOCSRC_PARAGRAPHS;
		o.max_line = 1 << 16;
		llm_docsrc *s;
		if (llm_docsrc_open_mem(&s, data, size, "fuzz", &o) != LLM_OK)
			continue;
		llm_doc d;
		llm_doc_init(&d);
		int rc, n = 0;
		while ((rc = llm_docsrc_next(s, &d)) == LLM_OK || (rc == LLM_EFORMAT && d.reason))
			if (++n > 10000)
				break;
		llm_doc_release(&d);
		llm_docsrc_free(s);
	}
	return 0;
}
