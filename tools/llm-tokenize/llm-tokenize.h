/*
 * llm-tokenize.h — what tools/llm-tokenize.c (options, main) and its subcommands in this
 * folder share: the command line, resolved, the tokenizer it names, and one entry point per
 * subcommand.
 *
 * Each entry point runs to the end and returns the exit status (0, or 1 when an input or an
 * output failed); it dies (tool.h) on usage errors and on errors of the library that end the
 * run.
 */
#ifndef LLM_TOKENIZE_TOOL_H
#define LLM_TOKENIZE_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "../tool.h"
#include "tok/bpe.h"

/* The command line, resolved. */
struct tok_opts {
	struct tool_common co;
	const char *tokenizer, *merges, *encoding, *pattern, *format, *tiktoken, *tmpdir;
	const char *special_tokens;
	const char *special_arg;     /* encode: --special MODE */
	const char *specials[64];    /* train: --special TOKEN ... */
	int nspecials;
	bool eos, bos, keep_special;
	const char *meta_keys[32];   /* NULL-terminated */
	long long vocab_size, min_freq, superbpe;
	size_t memory;
	bool sample;                 /* --sample: subword regularization */
	int nbest;
	double alpha;
	unsigned long long seed;
};

/* The tokenizer of -t and the options that qualify it; dies when it cannot be loaded. */
llm_bpe *tok_load_tokenizer(const struct tok_opts *o);

/* The subcommands (encode.c, decode.c, training.c). */
int tok_encode(struct tok_opts *o, int nfiles, char **files);
int tok_decode(struct tok_opts *o, int nfiles, char **files);
int tok_train(struct tok_opts *o, int nfiles, char **files);

#endif
