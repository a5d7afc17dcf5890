/*
 * llm-noise — add token-level noise to the model inputs of a token stream, labels untouched.
 *
 * Input: token streams (llm-tokenize). Output: the same records with a noised input sequence
 * beside the labels (header flag bit 0): masks, adjacent swaps and confusions, decided by
 * --seed and each document's id (lib/data/noise.h). A record whose metadata is not a JSON
 * object is rejected (--rejects, with its tokens), or stops the run with --strict.
 * Memory: one record plus the confusion table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "data/noise.h"
#include "data/tokjson.h"
#include "tok/bpe.h"
#include "tok/tokstream.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-noise [options] [file ...]\n"
	"\n"
	"Noise the model inputs of a token stream for robustness training; the labels stay\n"
	"clean. With no file, or when file is -, read standard input.\n"
	"\n";

enum {
	OPT_DOCS = TOOL_OPT_FIRST_PRIVATE, OPT_MASK, OPT_MASK_ID, OPT_SWAP, OPT_CONFUSE,
	OPT_CONFUSIONS, OPT_TOKENIZER, OPT_SEED
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("docs", 0, "F", OPT_DOCS, "fraction of documents noised (default 0.05)"),
	TOOL_OPTION("mask", 0, "P", OPT_MASK,
	            "per-token masking probability (default 0.03; needs --mask-id)"),
	TOOL_OPTION("mask-id", 0, "ID", OPT_MASK_ID, "token id that replaces masked tokens"),
	TOOL_OPTION("swap", 0, "P", OPT_SWAP,
	            "per-pair probability of swapping adjacent tokens (default 0.15)"),
	TOOL_OPTION("confuse", 0, "P", OPT_CONFUSE,
	            "per-occurrence probability of a confusion (default 0.01)"),
	TOOL_OPTION("confusions", 0, "FILE", OPT_CONFUSIONS,
	            "pairs \"FROM<TAB>TO\" of confusable strings (or token ids)"),
	TOOL_OPTION("tokenizer", 0, "FILE", OPT_TOKENIZER,
	            "tokenizer that encodes the confusion strings"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "random seed (default 0)"),
	TOOL_COMMON('o', "write to FILE (.zst, .gz, .xz, .bz2 compress)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, "stop at the first bad record (exit 1)"),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, NULL };

struct state {
	llm_noise_opts o;
	int have_mask_id;
	uint64_t tokenizer_id;     /* of --tokenizer, 0 without */
	llm_tokwriter *out;        /* opened with the first input's header */
	const char *output;
	llm_run *run;
	llm_noise_counts k;
	uint32_t *labels, *inputs; /* a noised document's tokens as uint32_t */
	size_t cap;
	int strict;
	llm_json_rec rec;
	llm_buf id, dom, extra;
};

/* The first input fixes the output header; later inputs must match it. */
static int check_header(struct state *s, const llm_tokreader *r)
{
	const llm_tok_header *h = llm_tokreader_header(r);
	const char *name = llm_tokreader_name(r);
	if (s->tokenizer_id && h->tokenizer_id && h->tokenizer_id != s->tokenizer_id) {
		llm_error("%s: made with another tokenizer than --tokenizer (id %016llx, not %016llx)",
		          name, (unsigned long long)h->tokenizer_id,
		          (unsigned long long)s->tokenizer_id);
		return 1;
	}
	if (s->have_mask_id && s->o.mask_id >= h->vocab_size) {
		llm_error("%s: --mask-id %u is not below the vocab size %u", name, s->o.mask_id,
		          h->vocab_size);
		return 1;
	}
	if (s->o.confusions && llm_confusions_count(s->o.confusions) &&
	    llm_confusions_max_id(s->o.confusions) >= h->vocab_size) {
		llm_error("%s: confusion token id %u is not below the vocab size %u", name,
		          llm_confusions_max_id(s->o.confusions), h->vocab_size);
		return 1;
	}
	if (!s->out) {
		llm_tok_header oh = *h;
		oh.flags |= LLM_TOK_NOISED;
		if (llm_tokwriter_open(&s->out, s->output, &oh) != LLM_OK)
			die_lib();
		return 0;
	}
	const llm_tok_header *oh = llm_tokwriter_header(s->out);
	if (oh->width != h->width || oh->vocab_size != h->vocab_size ||
	    oh->tokenizer_id != h->tokenizer_id) {
		llm_error("%s: token width, vocab size or tokenizer differ from the first input", name);
		return 1;
	}
	return 0;
}

/* A record whose metadata is not a JSON object: with --strict it stops the run (reported,
 * not counted in, so that in = out + rejected holds); else it is warned about and rejected,
 * its tokens kept in the rejects file. Returns 1 to stop. */
static int reject_bad_meta(struct state *s, const char *name, const llm_tok_rec *t, int width,
                           size_t bytes)
{
	const char *why = "metadata is not a JSON object";
	if (s->strict) {
		llm_error_at(name, t->index + 1, "%s", why);
		return 1;
	}
	llm_warn_at(name, t->index + 1, "%s", why);
	int dom = llm_run_in(s->run, bytes, NULL, 0);
	llm_buf_reset(&s->extra);
	llm_tokjson_members(&s->extra, t, (uint32_t)width);
	if (llm_run_reject(s->run, dom, "bad_meta", t->meta, t->meta_len, NULL, s->extra.p, name,
	                   t->index + 1) != LLM_OK)
		die_lib();
	return 0;
}

static int noise_one(struct state *s, const char *path)
{
	llm_tokreader *r;
	if (llm_tokreader_open(&r, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	if (check_header(s, r)) {
		llm_tokreader_free(r);
		return 1;
	}
	llm_tokreader_set_widen(r, 0); /* see below */
	llm_run_begin_input(s->run, llm_tokreader_name(r), llm_tokreader_size(r));
	llm_tok_rec t;
	int st, width = (int)llm_tokreader_header(r)->width, stop = 0;
	while (!stop && (st = llm_tokreader_next(r, &t)) == LLM_OK) {
		size_t bytes = 8 + t.meta_len + t.n * (size_t)width * (t.raw_inputs ? 2 : 1);
		const char *id = NULL, *domain = NULL;
		size_t id_len = 0, dom_len = 0;
		llm_buf_reset(&s->id);
		llm_buf_reset(&s->dom);
		if (llm_json_parse(&s->rec, t.meta, t.meta_len) == LLM_OK) {
			const llm_json_val *v = llm_json_get(&s->rec, "id");
			if (v && v->type == LLM_JSON_STRING && llm_json_str(v, &s->id) == LLM_OK)
				id = s->id.p ? s->id.p : "", id_len = s->id.len;
			else if (v && v->type != LLM_JSON_NULL)
				id = v->p, id_len = v->len; /* a number: its text */
			if (llm_json_get_str(&s->rec, "domain", &s->dom) == LLM_OK)
				domain = s->dom.p, dom_len = s->dom.len;
		} else if (t.meta_len) {
			stop = reject_bad_meta(s, llm_tokreader_name(r), &t, width, bytes);
			continue;
		}
		int dom = llm_run_in(s->run, bytes, domain, dom_len);
		if (s->cap < t.n || !s->labels) {
			free(s->labels);
			free(s->inputs);
			s->cap = t.n ? t.n : 1;
			s->labels = llm_malloc(s->cap * sizeof *s->labels);
			s->inputs = llm_malloc(s->cap * sizeof *s->inputs);
		}
		/* The reader does not widen 2-byte tokens: clean documents, nearly all of them,
		 * are written back as stored, and only a document to noise (or the key of one
		 * without an id, a hash of its tokens) needs them as uint32_t. */
		const uint32_t *labels = t.tokens;
		if (!labels && !id)
			llm_tok_widen16(t.raw_tokens, s->labels, t.n), labels = s->labels;
		uint64_t key = llm_noise_doc_key(id, id_len, labels, t.n);
		int wst;
		if (!llm_noise_select(&s->o, key, t.n, &s->k)) {
			wst = llm_tokwriter_write_raw(s->out, t.meta, t.meta_len, t.raw_tokens,
			                             t.raw_inputs ? t.raw_inputs : t.raw_tokens, t.n);
		} else {
			if (!labels)
				llm_tok_widen16(t.raw_tokens, s->labels, t.n), labels = s->labels;
			if (t.inputs)
				memcpy(s->inputs, t.inputs, t.n * sizeof *s->inputs);
			else if (t.raw_inputs)
				llm_tok_widen16(t.raw_inputs, s->inputs, t.n);
			else if (t.n)
				memcpy(s->inputs, labels, t.n * sizeof *s->inputs);
			llm_noise_apply(&s->o, key, labels, s->inputs, t.n, &s->k);
			llm_run_count_domain(s->run, dom, "noised", 1);
			wst = llm_tokwriter_write(s->out, t.meta, t.meta_len, labels, s->inputs, t.n);
		}
		if (wst != LLM_OK)
			die_lib();
		llm_run_out(s->run, dom, bytes);
		llm_run_progress(s->run, llm_tokreader_raw_bytes(r));
	}
	if (!stop && st != LLM_EOF)
		llm_error("%s", llm_last_error());
	llm_tokreader_free(r);
	return stop || st != LLM_EOF;
}

int main(int argc, char **argv)
{
	tool_init("llm-noise");
	tool_save_cmdline(argc, argv);
	struct tool_common co;
	tool_common_init(&co, &cli);
	struct state s;
	memset(&s, 0, sizeof s);
	llm_noise_opts_init(&s.o);
	const char *confusions = NULL, *tokenizer = NULL;
	int mask_given = 0, c;
	while ((c = tool_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case OPT_DOCS: s.o.docs = tool_double("--docs", optarg, 0, 1); break;
		case OPT_MASK: s.o.mask = tool_double("--mask", optarg, 0, 1); mask_given = 1; break;
		case OPT_MASK_ID:
			s.o.mask_id = (uint32_t)tool_int("--mask-id", optarg, 0, UINT32_MAX - 1);
			s.have_mask_id = 1;
			break;
		case OPT_SWAP: s.o.swap = tool_double("--swap", optarg, 0, 1); break;
		case OPT_CONFUSE: s.o.confuse = tool_double("--confuse", optarg, 0, 1); break;
		case OPT_CONFUSIONS: confusions = optarg; break;
		case OPT_TOKENIZER: tokenizer = optarg; break;
		case OPT_SEED: s.o.seed = (uint64_t)tool_int("--seed", optarg, 0, INT64_MAX); break;
		default: tool_bad_option();
		}
	}
	/* The default mask rate applies only when a mask token is named: a stream has no
	 * universal mask id, and guessing one would corrupt inputs silently. */
	if (!s.have_mask_id) {
		if (mask_given && s.o.mask > 0)
			usage_error("--mask needs --mask-id");
		s.o.mask = 0;
	}
	if (tokenizer && !confusions)
		usage_error("--tokenizer is only used with --confusions");
	tool_binary_output(co.output, "the token stream");
	llm_confusions *conf = NULL;
	if (confusions) {
		llm_bpe *bpe = NULL;
		if (tokenizer && llm_bpe_load(&bpe, tokenizer, NULL, NULL, NULL) != LLM_OK)
			die_lib();
		if (bpe)
			s.tokenizer_id = llm_bpe_file_id(bpe);
		conf = llm_confusions_new();
		uint64_t skipped = 0;
		if (llm_confusions_load(conf, confusions, bpe, &skipped) != LLM_OK)
			die_lib();
		llm_bpe_free(bpe);
		if (skipped)
			llm_warn("%s: %llu pairs skipped: their sides have different token lengths",
			         confusions, (unsigned long long)skipped);
		s.o.confusions = conf;
	}
	s.output = co.output;
	s.strict = co.strict;
	s.run = tool_run_new(&co);
	llm_json_rec_init(&s.rec);
	int failed = 0;
	if (optind == argc)
		failed |= noise_one(&s, "-");
	for (int i = optind; i < argc && !(failed && s.strict); i++)
		failed |= noise_one(&s, argv[i]);
	if (!s.out && !failed)
		die("no input");
	if (s.out && llm_tokwriter_close(s.out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_run_count(s.run, "docs_noised", s.k.docs_noised);
	llm_run_count(s.run, "masked", s.k.masked);
	llm_run_count(s.run, "swapped", s.k.swapped);
	llm_run_count(s.run, "confused", s.k.confused);
	llm_run_count(s.run, "tokens_changed", s.k.changed);
	llm_run_count(s.run, "tokens", s.k.tokens);
	llm_run_count(s.run, "tokens_in_noised_docs", s.k.tokens_noised);
	llm_json_rec_release(&s.rec);
	llm_buf_release(&s.id);
	llm_buf_release(&s.dom);
	llm_buf_release(&s.extra);
	free(s.labels);
	free(s.inputs);
	llm_confusions_free(conf);
	return tool_run_finish(s.run, failed);
}
