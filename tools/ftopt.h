/*
 * ftopt.h — fastText's training options, one set of rows and one parser for every tool that
 * trains a fastText classifier (llm-tox train, llm-score train).
 *
 * A tool puts TOOL_FTOPT_ROWS in its option table after a TOOL_TEXT line of its own (the rows
 * have no help line: the defaults the tool starts from are its own), and hands each option id
 * to tool_ftopt_parse before its own switch. The ids lie between the common options' and the
 * tools' private ones (opt.h), so they never meet either.
 */
#ifndef LLM_TOOL_FTOPT_H
#define LLM_TOOL_FTOPT_H

#include "opt.h"
#include "text/fasttext_train.h"

enum {
	TOOL_FTOPT_DIM = 0x1080,
	TOOL_FTOPT_EPOCH,
	TOOL_FTOPT_LR,
	TOOL_FTOPT_WORD_NGRAMS,
	TOOL_FTOPT_MINN,
	TOOL_FTOPT_MAXN,
	TOOL_FTOPT_BUCKET,
	TOOL_FTOPT_MIN_COUNT,
	TOOL_FTOPT_LOSS,
	TOOL_FTOPT_SEED,
	TOOL_FTOPT_END /* < TOOL_OPT_FIRST_PRIVATE */
};

#define TOOL_FTOPT_ROWS                                                                        \
	TOOL_OPTION_F("dim", 0, "N", TOOL_FTOPT_DIM, TOOL_OPTF_NOHELP, NULL),                   \
	TOOL_OPTION_F("epoch", 0, "N", TOOL_FTOPT_EPOCH, TOOL_OPTF_NOHELP, NULL),               \
	TOOL_OPTION_F("lr", 0, "X", TOOL_FTOPT_LR, TOOL_OPTF_NOHELP, NULL),                     \
	TOOL_OPTION_F("word-ngrams", 0, "N", TOOL_FTOPT_WORD_NGRAMS, TOOL_OPTF_NOHELP, NULL),   \
	TOOL_OPTION_F("minn", 0, "N", TOOL_FTOPT_MINN, TOOL_OPTF_NOHELP, NULL),                 \
	TOOL_OPTION_F("maxn", 0, "N", TOOL_FTOPT_MAXN, TOOL_OPTF_NOHELP, NULL),                 \
	TOOL_OPTION_F("bucket", 0, "N", TOOL_FTOPT_BUCKET, TOOL_OPTF_NOHELP, NULL),             \
	TOOL_OPTION_F("min-count", 0, "N", TOOL_FTOPT_MIN_COUNT, TOOL_OPTF_NOHELP, NULL),       \
	{ "loss", 0, "L", TOOL_FTOPT_LOSS, NULL, TOOL_OPTF_NOHELP, "softmax\0ova\0hs\0" },      \
	TOOL_OPTION_F("seed", 0, "N", TOOL_FTOPT_SEED, TOOL_OPTF_NOHELP, NULL)

/* Set the field of ft that option id names from arg (exit 2 on a value out of its bounds);
 * 0 when id is not one of these options. */
int tool_ftopt_parse(llm_fasttext_train_args *ft, int id, const char *arg);

#endif
