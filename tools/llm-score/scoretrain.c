/*
 * scoretrain.c — llm-score train: a fastText model from --positive and --negative files
 * (DCLM) or from a --label-field of labelled JSONL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/fasttext.h"
#include "llm-score.h"

/* ---- train ---- */

struct train {
	const struct cfg *c;
	const char *label; /* the files' label; NULL: --label-field */
	llm_buf data, text, lab;
	uint64_t examples, skipped;
	llm_json_rec rec;
};

static void skip_record(struct train *t, const char *file, uint64_t line, const char *why,
                        const char *arg)
{
	char msg[200];
	snprintf(msg, sizeof msg, why, arg);
	if (t->c->co.strict)
		die("%s:%llu: %s", file, (unsigned long long)line, msg);
	llm_warn_at(file, line, "%s", msg);
	t->skipped++;
}

/* The label of a record from --label-field into t->lab: a string, an integer or a boolean. */
static int record_label(struct train *t)
{
	const llm_json_val *v = llm_json_get(&t->rec, t->c->label_field);
	int64_t x;
	llm_buf_reset(&t->lab);
	if (!v)
		return 0;
	if (v->type == LLM_JSON_STRING)
		llm_json_str(v, &t->lab);
	else if (v->type == LLM_JSON_TRUE || v->type == LLM_JSON_FALSE)
		llm_buf_adds(&t->lab, v->type == LLM_JSON_TRUE ? "true" : "false");
	else if (v->type == LLM_JSON_NUMBER && llm_json_i64(v, &x) == LLM_OK)
		llm_buf_addf(&t->lab, "%lld", (long long)x);
	return t->lab.len > 0;
}

static int train_file(struct train *t, const char *path)
{
	tool_lines in;
	if (tool_lines_open(&in, path, &t->c->co, NULL) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	while (tool_lines_next(&in)) {
		if (in.too_long) {
			skip_record(t, in.name, in.lineno, "line is longer than --max-line", NULL);
			continue;
		}
		if (llm_json_parse(&t->rec, in.line, in.len) != LLM_OK) {
			skip_record(t, in.name, in.lineno, "bad JSON: %s", t->rec.err_msg);
			continue;
		}
		const llm_json_val *v = llm_json_get(&t->rec, t->c->co.field);
		if (!v || v->type != LLM_JSON_STRING) {
			skip_record(t, in.name, in.lineno, v ? "field '%s' is not a string" :
			            "missing field '%s'", t->c->co.field);
			continue;
		}
		if (!t->label && !record_label(t)) {
			skip_record(t, in.name, in.lineno, "no label in field '%s'", t->c->label_field);
			continue;
		}
		llm_buf_reset(&t->text);
		llm_json_str(v, &t->text);
		llm_score_train_line(&t->data, t->label ? t->label : t->lab.p, t->text.p ? t->text.p : "",
		                     t->text.len);
		t->examples++;
	}
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

static void train_progress(double done, double loss, void *ctx)
{
	(void)ctx;
	llm_debug("training: %.0f%% done, average loss %.4f", done * 100, loss);
}

int score_cmd_train(const struct cfg *c, char **files, int nfiles)
{
	if (!c->co.output)
		usage_error("train needs -o MODEL");
	int dclm = c->npositive || c->nnegative;
	if (dclm && c->label_field)
		usage_error("train: --positive and --negative, or --label-field, not both");
	if (dclm && (!c->npositive || !c->nnegative))
		usage_error("train: --positive needs --negative and the other way round");
	if (!dclm && !c->label_field)
		usage_error("train needs --positive and --negative files, or --label-field");
	if (dclm && nfiles)
		usage_error("train: with --positive and --negative, no other file ('%s')", files[0]);
	struct train t = { .c = c };
	llm_json_rec_init(&t.rec);
	int failed = 0;
	for (int i = 0; i < c->npositive; i++) {
		t.label = LLM_SCORE_LABEL;
		failed |= train_file(&t, c->positive[i]);
	}
	for (int i = 0; i < c->nnegative; i++) {
		t.label = LLM_SCORE_NEGATIVE_LABEL;
		failed |= train_file(&t, c->negative[i]);
	}
	if (!dclm) {
		t.label = NULL;
		if (!nfiles)
			failed |= train_file(&t, "-");
		for (int i = 0; i < nfiles; i++)
			failed |= train_file(&t, files[i]);
	}
	llm_json_rec_release(&t.rec);
	llm_buf_release(&t.text);
	llm_buf_release(&t.lab);
	if (failed) {
		llm_buf_release(&t.data);
		return 1;
	}
	if (t.examples == 0)
		die("no labelled document in the input");
	llm_fasttext_train_args a = c->ft;
	a.threads = c->co.threads;
	llm_fasttext *m;
	if (llm_fasttext_train(&m, &a, t.data.p, t.data.len, train_progress, NULL) != LLM_OK)
		die_lib();
	llm_buf_release(&t.data);
	if (llm_fasttext_save(m, c->co.output) != LLM_OK)
		die_lib();
	llm_info("%llu documents (%llu skipped): %d words, %d labels (%s%s%s), dim %d -> %s",
	         (unsigned long long)t.examples, (unsigned long long)t.skipped,
	         llm_fasttext_nwords(m), llm_fasttext_nlabels(m), llm_fasttext_label_name(m, 0),
	         llm_fasttext_nlabels(m) > 1 ? ", " : "",
	         llm_fasttext_nlabels(m) > 1 ? llm_fasttext_label_name(m, 1) : "",
	         llm_fasttext_dim(m), c->co.output);
	llm_fasttext_free(m);
	return 0;
}

