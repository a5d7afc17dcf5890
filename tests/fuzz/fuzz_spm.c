/*
 * fuzz_spm.c — SentencePiece model files on arbitrary bytes: the input is the model. One that
 * loads encodes a few texts (with each model type's sampling too) and decodes every id it
 * gave back. Must never crash, read out of bounds or loop (spm.h).
 */
#include <stdint.h>
#include <string.h>

#include "tok/spm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const texts[] = {
		"", " ", "Hello  world", "  a\tb\nc  ", "\xef\xbc\xa1\xe2\x91\xa0 caf\xc3\xa9",
		"\xff\xfe bad \xc3", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e <s> </s> <unk>",
	};
	llm_spm *m;
	if (llm_spm_load(&m, data, size, "fuzz") != 0)
		return 0;
	llm_spm_enc *e = llm_spm_enc_new(m);
	llm_ids ids;
	llm_ids_init(&ids);
	llm_buf out = LLM_BUF_INIT;
	for (int pass = 0; pass < 3; pass++) {
		if (pass)
			llm_spm_enc_sample(e, pass == 1 ? -1 : 3, 0.5, 1);
		for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
			ids.n = 0;
			llm_spm_encode(e, texts[i], strlen(texts[i]), &ids);
			llm_buf_reset(&out);
			llm_spm_decode(m, ids.v, ids.n, &out);
		}
	}
	uint32_t all[3] = { 0, llm_spm_size(m) - 1, llm_spm_size(m) };
	llm_spm_decode(m, all, 3, &out);
	llm_buf_release(&out);
	llm_ids_release(&ids);
	llm_spm_enc_free(e);
	llm_spm_free(m);
	return 0;
}
