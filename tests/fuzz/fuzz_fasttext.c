/*
 * Fuzz target: the fastText model loader (.bin and .ftz layouts), then prediction and
 * feature extraction with whatever model loaded, on a few texts (ASCII, CJK, invalid UTF-8).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "text/fasttext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_fasttext *m;
	if (llm_fasttext_load_mem(&m, data, size, "fuzz") != LLM_OK)
		return 0;
	static const char *const texts[] = { "hello world foo bar", "你好 世界", "\xff\xfe x \xc3",
	                                     "", "a b c d e f g h i j k l m n o p" };
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_fasttext_pred p[8];
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		size_t n = strlen(texts[i]);
		llm_fasttext_predict(m, s, texts[i], n, 8, 0.0f, p);
		llm_fasttext_predict(m, s, texts[i], n, 1, 0.5f, p);
		const int32_t *ids;
		llm_fasttext_features(m, s, texts[i], n, &ids);
	}
	for (int i = 0; i < llm_fasttext_nlabels(m) && i < 4; i++)
		llm_fasttext_label_id(m, llm_fasttext_label_name(m, i));
	llm_fasttext_scratch_free(s);
	llm_fasttext_free(m);
	return 0;
}
