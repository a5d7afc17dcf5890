/* ftopt.c — fastText's training options (ftopt.h). */
#include "ftopt.h"

#include <stdint.h>

#include "tool.h"

_Static_assert((int)TOOL_FTOPT_END <= (int)TOOL_OPT_FIRST_PRIVATE, "fastText option ids overlap the tools'");

int tool_ftopt_parse(llm_fasttext_train_args *ft, int id, const char *arg)
{
	static const int loss[] = { LLM_FASTTEXT_SOFTMAX, LLM_FASTTEXT_OVA, LLM_FASTTEXT_HS };
	switch (id) {
	case TOOL_FTOPT_DIM: ft->dim = (int)tool_int("--dim", arg, 1, 1000); return 1;
	case TOOL_FTOPT_EPOCH: ft->epoch = (int)tool_int("--epoch", arg, 1, 10000); return 1;
	case TOOL_FTOPT_LR: ft->lr = tool_double("--lr", arg, 1e-6, 10); return 1;
	case TOOL_FTOPT_WORD_NGRAMS:
		ft->word_ngrams = (int)tool_int("--word-ngrams", arg, 1, 10);
		return 1;
	case TOOL_FTOPT_MINN: ft->minn = (int)tool_int("--minn", arg, 0, 20); return 1;
	case TOOL_FTOPT_MAXN: ft->maxn = (int)tool_int("--maxn", arg, 0, 20); return 1;
	case TOOL_FTOPT_BUCKET: ft->bucket = (int)tool_int("--bucket", arg, 0, 100000000); return 1;
	case TOOL_FTOPT_MIN_COUNT:
		ft->min_count = (int)tool_int("--min-count", arg, 1, 1000000);
		return 1;
	case TOOL_FTOPT_LOSS: ft->loss = loss[tool_choice("--loss", arg, "softmax\0ova\0hs\0")]; return 1;
	case TOOL_FTOPT_SEED: ft->seed = (uint64_t)tool_int("--seed", arg, 0, INT64_MAX); return 1;
	}
	return 0;
}
