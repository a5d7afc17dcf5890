/*
 * toxcmd.c — llm-tox's subcommands other than the filter: train, eval, predict, normalize.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "text/fasttext.h"
#include "llm-tox.h"

/* ---- train ---- */

/* The segmenter of --zh-words, or NULL without it. */
static llm_zhseg *zh_segmenter(const struct cfg *c)
{
	const llm_zhseg_dict *d;
	if (!c->zh_words)
		return NULL;
	if (llm_zhseg_dict_default(&d) != LLM_OK)
		die("--zh-words: %s", llm_last_error());
	return llm_zhseg_new(d);
}

struct train {
	const struct cfg *c;
	llm_zhseg *seg; /* --zh-words */
	llm_buf data, tmp;
	uint64_t examples, skipped;
};

static int train_one(void *ctx, record *r)
{
	struct train *t = ctx;
	if (r->reason) {
		tox_skip_record(t->c, r, r->msg);
		t->skipped++;
		return 0;
	}
	int label = tox_record_label(t->c, r, &t->tmp);
	if (label < 0) {
		tox_skip_record(t->c, r, "no usable label");
		t->skipped++;
		return 0;
	}
	llm_buf_adds(&t->data, label ? "__label__toxic " : "__label__clean ");
	llm_tox_normalize(r->text.p, r->text.len, t->seg, &t->data);
	llm_buf_addc(&t->data, '\n');
	t->examples++;
	return 0;
}

static void train_progress(double done, double loss, void *ctx)
{
	(void)ctx;
	llm_debug("training: %.0f%% done, average loss %.4f", done * 100, loss);
}

int tox_cmd_train(const struct cfg *c, char **files, int nfiles)
{
	if (!c->co.output)
		usage_error("train needs -o MODEL");
	struct train t = { .c = c, .seg = zh_segmenter(c) };
	int failed = tox_each_record(c, files, nfiles, train_one, &t);
	llm_zhseg_free(t.seg);
	if (failed)
		return 1;
	if (t.examples == 0)
		die("no labelled example in the input");
	llm_fasttext_train_args a = c->ft;
	a.threads = c->co.threads;
	llm_fasttext *m;
	if (llm_fasttext_train(&m, &a, t.data.p, t.data.len, train_progress, NULL) != LLM_OK)
		die_lib();
	if (llm_fasttext_save(m, c->co.output) != LLM_OK)
		die_lib();
	llm_info("%llu examples (%llu skipped): %d words, labels %s/%s, dim %d -> %s",
	         (unsigned long long)t.examples, (unsigned long long)t.skipped,
	         llm_fasttext_nwords(m), llm_fasttext_label_name(m, 0),
	         llm_fasttext_nlabels(m) > 1 ? llm_fasttext_label_name(m, 1) : "-",
	         llm_fasttext_dim(m), c->co.output);
	llm_fasttext_free(m);
	llm_buf_release(&t.data);
	llm_buf_release(&t.tmp);
	return 0;
}

/* ---- eval ---- */

struct eval {
	const struct cfg *c;
	const llm_tox *tox;
	llm_tox_scratch *s;
	llm_toxeval *table;
	llm_buf tmp, lang, domain;
};

static int eval_one(void *ctx, record *r)
{
	struct eval *e = ctx;
	if (r->reason) {
		tox_skip_record(e->c, r, r->msg);
		llm_toxeval_skip(e->table);
		return 0;
	}
	int label = tox_record_label(e->c, r, &e->tmp);
	if (label < 0) {
		tox_skip_record(e->c, r, "no usable label");
		llm_toxeval_skip(e->table);
		return 0;
	}
	const char *lang;
	size_t lang_len;
	tox_lang_of(r, &lang, &lang_len, &e->lang);
	llm_tox_policy pol;
	tox_policy_for(e->c, lang, lang_len, tox_domain_of(r, &e->domain), &pol);
	llm_tox_result res;
	llm_tox_score(e->tox, e->s, r->text.p, r->text.len, lang, lang_len, &pol, &res);
	llm_toxeval_add(e->table, lang, lang_len, &res, &pol, label);
	return 0;
}

int tox_cmd_eval(const struct cfg *c, char **files, int nfiles)
{
	struct eval e = { .c = c, .table = llm_toxeval_new() };
	e.tox = tox_make(c);
	if (!llm_tox_has_words(e.tox) && !llm_tox_has_model(e.tox))
		usage_error("--no-words and --no-model leave nothing to evaluate");
	if (c->ntargets && !llm_tox_has_model(e.tox))
		usage_error("--max-fpr and --min-recall choose model thresholds: they need the model");
	if (!(e.s = llm_tox_scratch_new(e.tox)))
		die("out of memory for the word-list matcher");
	int failed = tox_each_record(c, files, nfiles, eval_one, &e);
	llm_toxeval_opts op = {
		.thresholds = c->thresholds, .nthresholds = c->nthresholds, .targets = c->targets,
		.ntargets = c->ntargets, .default_threshold = c->threshold.dflt,
		.words_per_1k = c->per_1k.dflt, .words = llm_tox_has_words(e.tox),
		.model = llm_tox_has_model(e.tox), .json = c->json
	};
	llm_buf o = LLM_BUF_INIT;
	llm_toxeval_report(e.table, &op, &o);
	llm_writer *out;
	if (llm_writer_open(&out, c->co.output) != LLM_OK)
		die_lib();
	if (llm_writer_write(out, o.p, o.len) != LLM_OK || llm_writer_close(out) != LLM_OK)
		die_lib();
	llm_buf_release(&o);
	llm_buf_release(&e.tmp);
	llm_buf_release(&e.lang);
	llm_buf_release(&e.domain);
	llm_toxeval_free(e.table);
	llm_tox_scratch_free(e.s);
	llm_tox_free((llm_tox *)e.tox);
	return failed;
}

/* ---- predict: fastText's predict-prob on raw lines ---- */

int tox_cmd_predict(const struct cfg *c, char **args, int nargs)
{
	if (nargs < 1 || nargs > 2)
		usage_error("predict needs a model and at most one input file");
	llm_fasttext *m;
	if (llm_fasttext_load(&m, args[0]) != LLM_OK)
		die_lib();
	tool_lines in;
	if (tool_lines_open(&in, nargs == 2 ? args[1] : "-", &c->co, NULL) != LLM_OK)
		die_lib();
	llm_writer *out;
	if (llm_writer_open(&out, c->co.output) != LLM_OK)
		die_lib();
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_fasttext_pred *p = llm_calloc((size_t)llm_fasttext_nlabels(m) + 1, sizeof *p);
	llm_buf o = LLM_BUF_INIT;
	while (tool_lines_next(&in)) {
		if (in.too_long)
			die("%s:%llu: line of %zu bytes is longer than --max-line", in.name,
			    (unsigned long long)in.lineno, in.full_len);
		int n = llm_fasttext_predict(m, s, in.line, in.len, c->k, (float)c->threshold.dflt, p);
		llm_buf_reset(&o);
		/* %g of a float is what C++ streams print for fastText's float probabilities. */
		for (int i = 0; i < n; i++)
			llm_buf_addf(&o, "%s%s %g", i ? " " : "", llm_fasttext_label(m, p[i].label),
			             (double)p[i].prob);
		llm_buf_addc(&o, '\n');
		if (llm_writer_write(out, o.p, o.len) != LLM_OK)
			die_lib();
	}
	if (tool_lines_close(&in) != LLM_OK)
		die_lib();
	if (llm_writer_close(out) != LLM_OK)
		die_lib();
	llm_buf_release(&o);
	free(p);
	llm_fasttext_scratch_free(s);
	llm_fasttext_free(m);
	return 0;
}

/* ---- normalize ---- */

struct norm {
	const struct cfg *c;
	llm_zhseg *seg; /* --zh-words */
	llm_writer *out;
	llm_buf buf;
};

static int normalize_one(void *ctx, record *r)
{
	struct norm *n = ctx;
	if (r->reason) {
		tox_skip_record(n->c, r, r->msg);
		return 0;
	}
	llm_buf_reset(&n->buf);
	llm_tox_normalize(r->text.p, r->text.len, n->seg, &n->buf);
	llm_buf_addc(&n->buf, '\n');
	if (llm_writer_write(n->out, n->buf.p, n->buf.len) != LLM_OK)
		die_lib();
	return 0;
}

int tox_cmd_normalize(const struct cfg *c, char **files, int nfiles)
{
	struct norm n = { .c = c, .seg = zh_segmenter(c) };
	if (llm_writer_open(&n.out, c->co.output) != LLM_OK)
		die_lib();
	int failed = tox_each_record(c, files, nfiles, normalize_one, &n);
	llm_zhseg_free(n.seg);
	if (llm_writer_close(n.out) != LLM_OK)
		die_lib();
	llm_buf_release(&n.buf);
	return failed;
}
