/*
 * task.c — lm-evaluation-harness task YAML for local data (task.h), read with libyaml's
 * document API; every node keeps its line for the messages.
 */
#include "task.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/err.h"

typedef struct {
	yaml_document_t *doc;
	const char *file;
} yctx;

static int bad(const yctx *y, const yaml_node_t *n, const char *what, const char *detail)
{
	return llm_fail(LLM_EFORMAT, "%s:%zu: %s%s%s", y->file, n->start_mark.line + 1, what,
	                detail ? ": " : "", detail ? detail : "");
}

static yaml_node_t *node(const yctx *y, int id)
{
	return yaml_document_get_node(y->doc, id);
}

/* A scalar written without quotes that YAML reads as null. */
static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *s = (const char *)n->data.scalar.value;
	return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
	       strcmp(s, "NULL") == 0;
}

/* Custom tags (!function, a Python callable) are code, not data. */
static int tagged(const yaml_node_t *n)
{
	return n->tag && n->tag[0] == '!';
}

static int scalar(const yctx *y, const yaml_node_t *n, const char *key, char **out)
{
	if (n->type != YAML_SCALAR_NODE || tagged(n))
		return bad(y, n, key, tagged(n) ? "a tagged value (Python code) is not data"
		                                : "not a string");
	free(*out);
	*out = is_null(n) ? NULL : llm_strndup((const char *)n->data.scalar.value,
	                                       n->data.scalar.length);
	return LLM_OK;
}

static int plain_int(const yaml_node_t *n, long *out)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *s = (const char *)n->data.scalar.value;
	char *end;
	if (!*s || !(isdigit((unsigned char)*s) || *s == '-'))
		return 0;
	*out = strtol(s, &end, 10);
	return *end == 0;
}

/* A template: text and {{ field }}; anything else Jinja would evaluate is refused. */
static int check_template(const yctx *y, const yaml_node_t *n, const char *key, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (p[0] == '{' && (p[1] == '%' || p[1] == '#'))
			return bad(y, n, key, "Jinja statements and comments are not supported "
			                      "(only {{ field }})");
		if (p[0] == '{' && p[1] == '{') {
			const char *q = p + 2;
			while (*q == ' ')
				q++;
			const char *id = q;
			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
			int ok = q > id && !isdigit((unsigned char)*id);
			while (*q == ' ')
				q++;
			if (!ok || q[0] != '}' || q[1] != '}')
				return bad(y, n, key, "only {{ field }} is supported (no filters, "
				                      "indexing or expressions)");
			p = q + 1;
		}
	}
	return LLM_OK;
}

static int tmpl(const yctx *y, const yaml_node_t *n, const char *key, char **out)
{
	int rc = scalar(y, n, key, out);
	return rc || !*out ? rc : check_template(y, n, key, *out);
}

static int string_list(const yctx *y, const yaml_node_t *n, const char *key, char ***out,
                       size_t *nout)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return bad(y, n, key, "not a list");
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		char *s = NULL;
		int rc = scalar(y, node(y, *i), key, &s);
		if (rc)
			return rc;
		*out = llm_realloc(*out, (*nout + 1) * sizeof **out);
		(*out)[(*nout)++] = s ? s : llm_strdup("");
	}
	return LLM_OK;
}

static int data_files(const yctx *y, const yaml_node_t *n, llm_task *t)
{
	if (n->type == YAML_SCALAR_NODE) {
		t->files = llm_calloc(1, sizeof *t->files);
		t->nfiles = 1;
		t->files[0].split = llm_strdup("train"); /* datasets' name for a lone file */
		return scalar(y, n, "data_files", &t->files[0].path);
	}
	if (n->type != YAML_MAPPING_NODE)
		return bad(y, n, "data_files", "neither a path nor {split: path}");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		t->files = llm_realloc(t->files, (t->nfiles + 1) * sizeof *t->files);
		llm_task_file *f = &t->files[t->nfiles++];
		*f = (llm_task_file){ 0 };
		int rc = scalar(y, node(y, p->key), "data_files", &f->split);
		if (!rc)
			rc = scalar(y, node(y, p->value), "data_files", &f->path);
		if (!rc && (!f->split || !f->path))
			rc = bad(y, node(y, p->value), "data_files", "a split without a path");
		if (rc)
			return rc;
	}
	return LLM_OK;
}

static const char *const known_metrics[] = { "acc", "acc_norm", "word_perplexity",
	                                     "byte_perplexity", "bits_per_byte", NULL };

static int metric_list(const yctx *y, const yaml_node_t *n, llm_task *t)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return bad(y, n, "metric_list", "not a list");
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		yaml_node_t *m = node(y, *i);
		if (m->type != YAML_MAPPING_NODE)
			return bad(y, m, "metric_list", "an entry is not {metric: NAME, ...}");
		char *name = NULL;
		for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
		     p++) {
			yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
			const char *ks = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
			int rc = LLM_OK;
			if (strcmp(ks, "metric") == 0)
				rc = scalar(y, v, "metric", &name);
			else if (strcmp(ks, "aggregation") == 0 || strcmp(ks, "higher_is_better") == 0)
				rc = v->type == YAML_SCALAR_NODE && !tagged(v) ? LLM_OK
				   : bad(y, v, ks, "not a name or a boolean");
			else
				rc = bad(y, k, "metric_list", "only metric, aggregation and "
				                              "higher_is_better are supported");
			if (rc) {
				free(name);
				return rc;
			}
		}
		size_t j = 0;
		while (name && known_metrics[j] && strcmp(known_metrics[j], name) != 0)
			j++;
		if (!name || !known_metrics[j]) {
			free(name);
			return bad(y, m, "metric_list", "not one of acc, acc_norm, word_perplexity, "
			                                "byte_perplexity, bits_per_byte");
		}
		t->metrics = llm_realloc(t->metrics, (t->nmetrics + 1) * sizeof *t->metrics);
		t->metrics[t->nmetrics++] = name;
	}
	return LLM_OK;
}

static int metadata(const yctx *y, const yaml_node_t *n, llm_task *t)
{
	if (n->type != YAML_MAPPING_NODE)
		return bad(y, n, "metadata", "not a mapping");
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(y, p->key);
		if (k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value,
		                                          "version") == 0) {
			int rc = scalar(y, node(y, p->value), "version", &t->version);
			if (rc)
				return rc;
		}
	}
	return LLM_OK;
}

static int key_value(const yctx *y, const char *k, const yaml_node_t *kn, const yaml_node_t *v,
                     llm_task *t)
{
	char *s = NULL;
	long i;
	int rc;
	if (strcmp(k, "task") == 0)
		return scalar(y, v, k, &t->name);
	if (strcmp(k, "dataset_path") == 0) {
		if ((rc = scalar(y, v, k, &s)))
			return rc;
		rc = s && strcmp(s, "json") == 0 ? LLM_OK
		   : bad(y, v, k, "only json (local files named by data_files) is supported");
		free(s);
		return rc;
	}
	if (strcmp(k, "dataset_name") == 0 || strcmp(k, "dataset_kwargs") == 0) {
		if (is_null(v))
			return LLM_OK;
		if (strcmp(k, "dataset_kwargs") == 0 && v->type == YAML_MAPPING_NODE) {
			/* dataset_kwargs: {data_files: ...}, as lm-evaluation-harness passes it on */
			for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
			     p < v->data.mapping.pairs.top; p++) {
				yaml_node_t *pk = node(y, p->key);
				if (pk->type != YAML_SCALAR_NODE ||
				    strcmp((const char *)pk->data.scalar.value, "data_files") != 0)
					return bad(y, pk, "dataset_kwargs", "only data_files is supported");
				if ((rc = data_files(y, node(y, p->value), t)))
					return rc;
			}
			return LLM_OK;
		}
		return bad(y, v, k, "not supported with dataset_path: json");
	}
	if (strcmp(k, "data_files") == 0)
		return data_files(y, v, t);
	if (strcmp(k, "test_split") == 0)
		return scalar(y, v, k, &t->test_split);
	if (strcmp(k, "validation_split") == 0)
		return scalar(y, v, k, &t->validation_split);
	if (strcmp(k, "training_split") == 0)
		return scalar(y, v, k, &t->training_split);
	if (strcmp(k, "fewshot_split") == 0)
		return scalar(y, v, k, &t->fewshot_split);
	if (strcmp(k, "output_type") == 0) {
		if ((rc = scalar(y, v, k, &s)))
			return rc;
		if (s && strcmp(s, "multiple_choice") == 0)
			t->output_type = LLM_TASK_MULTIPLE_CHOICE;
		else if (s && strcmp(s, "loglikelihood_rolling") == 0)
			t->output_type = LLM_TASK_ROLLING;
		else
			rc = bad(y, v, k, "only multiple_choice and loglikelihood_rolling are supported");
		free(s);
		return rc;
	}
	if (strcmp(k, "doc_to_text") == 0)
		return tmpl(y, v, k, &t->doc_to_text);
	if (strcmp(k, "doc_to_target") == 0) {
		if (plain_int(v, &i)) {
			t->target_index = i;
			return LLM_OK;
		}
		return tmpl(y, v, k, &t->doc_to_target);
	}
	if (strcmp(k, "doc_to_choice") == 0)
		return v->type == YAML_SEQUENCE_NODE
		     ? string_list(y, v, k, &t->choice_list, &t->nchoice_list)
		     : tmpl(y, v, k, &t->doc_to_choice);
	if (strcmp(k, "num_fewshot") == 0) {
		if (!plain_int(v, &i) || i < 0 || i > 1 << 16)
			return bad(y, v, k, "not a count");
		t->num_fewshot = (int)i;
		return LLM_OK;
	}
	if (strcmp(k, "description") == 0) {
		if ((rc = scalar(y, v, k, &t->description)))
			return rc;
		return t->description && strstr(t->description, "{{")
		     ? bad(y, v, k, "a description with fields of the document is not supported")
		     : LLM_OK;
	}
	if (strcmp(k, "target_delimiter") == 0)
		return scalar(y, v, k, &t->target_delimiter);
	if (strcmp(k, "fewshot_delimiter") == 0)
		return scalar(y, v, k, &t->fewshot_delimiter);
	if (strcmp(k, "metric_list") == 0)
		return metric_list(y, v, t);
	if (strcmp(k, "metadata") == 0)
		return metadata(y, v, t);
	if (strcmp(k, "tag") == 0 || strcmp(k, "group") == 0)
		return LLM_OK; /* groupings of tasks: nothing to score */
	return bad(y, kn, k, "not supported (a key outside the subset of local JSONL tasks)");
}

int llm_task_load(llm_task *t, const char *path)
{
	memset(t, 0, sizeof *t);
	t->file = llm_strdup(path);
	t->target_index = -1;
	t->num_fewshot = -1;
	FILE *f = fopen(path, "rb");
	if (!f)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	yaml_parser_t p;
	yaml_document_t doc;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	int rc = LLM_OK;
	if (!yaml_parser_load(&p, &doc)) {
		rc = llm_fail(LLM_EFORMAT, "%s:%zu: %s", path, p.problem_mark.line + 1,
		              p.problem ? p.problem : "not YAML");
		yaml_parser_delete(&p);
		fclose(f);
		return rc;
	}
	yctx y = { &doc, path };
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = llm_fail(LLM_EFORMAT, "%s:1: not a mapping of task settings", path);
	} else {
		for (yaml_node_pair_t *q = root->data.mapping.pairs.start;
		     !rc && q < root->data.mapping.pairs.top; q++) {
			yaml_node_t *k = node(&y, q->key);
			if (k->type != YAML_SCALAR_NODE)
				rc = bad(&y, k, "key", "not a name");
			else
				rc = key_value(&y, (const char *)k->data.scalar.value, k, node(&y, q->value), t);
		}
	}
	if (!rc && (!t->name || !t->nfiles))
		rc = llm_fail(LLM_EFORMAT, "%s: a task needs task and data_files", path);
	if (!rc && t->output_type == LLM_TASK_MULTIPLE_CHOICE && !t->doc_to_text)
		rc = llm_fail(LLM_EFORMAT, "%s: multiple_choice needs doc_to_text", path);
	if (!rc && t->output_type == LLM_TASK_ROLLING && !t->doc_to_target)
		rc = llm_fail(LLM_EFORMAT, "%s: loglikelihood_rolling needs doc_to_target (the text "
		              "scored)", path);
	if (!rc && t->output_type == LLM_TASK_MULTIPLE_CHOICE &&
	    ((!t->doc_to_target && t->target_index < 0) || (!t->doc_to_choice && !t->choice_list)))
		rc = llm_fail(LLM_EFORMAT, "%s: multiple_choice needs doc_to_target and doc_to_choice",
		              path);
	if (!rc && !llm_task_split_file(t, llm_task_eval_split(t)))
		rc = llm_fail(LLM_EFORMAT, "%s: no data file for the split to score (%s)", path,
		              llm_task_eval_split(t) ? llm_task_eval_split(t)
		                                     : "test_split or validation_split");
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	fclose(f);
	return rc;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void llm_task_release(llm_task *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->files[i].split);
		free(t->files[i].path);
	}
	free(t->files);
	free_list(t->choice_list, t->nchoice_list);
	free_list(t->metrics, t->nmetrics);
	char *s[] = { t->file, t->name, t->test_split, t->validation_split, t->training_split,
		      t->fewshot_split, t->doc_to_text, t->doc_to_target, t->doc_to_choice,
		      t->description, t->target_delimiter, t->fewshot_delimiter, t->version };
	for (size_t i = 0; i < sizeof s / sizeof *s; i++)
		free(s[i]);
	memset(t, 0, sizeof *t);
}

const char *llm_task_split_file(const llm_task *t, const char *split)
{
	for (size_t i = 0; split && i < t->nfiles; i++)
		if (strcmp(t->files[i].split, split) == 0)
			return t->files[i].path;
	return NULL;
}

const char *llm_task_eval_split(const llm_task *t)
{
	return t->test_split ? t->test_split : t->validation_split;
}

const char *llm_task_fewshot_split(const llm_task *t)
{
	return t->fewshot_split ? t->fewshot_split : t->training_split ? t->training_split
	     : t->validation_split ? t->validation_split : t->test_split;
}

/* lm-evaluation-harness keeps an item out of its own examples when the few-shot split is the
 * test split, two unset ones included (a task with only a validation split). */
int llm_task_fewshot_self(const llm_task *t)
{
	const char *a = t->fewshot_split, *b = t->test_split;
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* A field's value as Jinja prints it. */
static int put_value(const llm_json_val *v, const char *name, llm_buf *out)
{
	switch (v->type) {
	case LLM_JSON_STRING:
		return llm_json_str(v, out);
	case LLM_JSON_NUMBER:
		llm_buf_add(out, v->p, v->len);
		return LLM_OK;
	case LLM_JSON_TRUE:
		llm_buf_adds(out, "True");
		return LLM_OK;
	case LLM_JSON_FALSE:
		llm_buf_adds(out, "False");
		return LLM_OK;
	default:
		return llm_fail(LLM_EFORMAT, "field '%s' is not a string, number or boolean", name);
	}
}

int llm_task_render(const char *tmpl, const llm_json_rec *doc, llm_buf *out)
{
	if (!strstr(tmpl, "{{")) {
		const llm_json_val *v = llm_json_get(doc, tmpl);
		if (v)
			return put_value(v, tmpl, out);
	}
	for (const char *p = tmpl; *p;) {
		const char *o = strstr(p, "{{");
		if (!o) {
			llm_buf_adds(out, p);
			break;
		}
		llm_buf_add(out, p, (size_t)(o - p));
		const char *id = o + 2;
		while (*id == ' ')
			id++;
		const char *e = id;
		while (*e != ' ' && *e != '}')
			e++;
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(e - id), id);
		const llm_json_val *v = llm_json_get(doc, name);
		if (!v)
			return llm_fail(LLM_EFORMAT, "no field '%s' for the template", name);
		int rc = put_value(v, name, out);
		if (rc)
			return rc;
		p = strstr(e, "}}") + 2;
	}
	return LLM_OK;
}

/* The field a template of one {{ field }} and nothing else (or a bare field name) names. */
static const llm_json_val *sole_field(const char *tmpl, const llm_json_rec *doc)
{
	char name[256];
	const char *p = tmpl;
	if (strncmp(p, "{{", 2) == 0) {
		p += 2;
		while (*p == ' ')
			p++;
	}
	size_t n = strcspn(p, " }");
	if (n >= sizeof name)
		return NULL;
	snprintf(name, sizeof name, "%.*s", (int)n, p);
	const char *rest = p + n;
	while (*rest == ' ')
		rest++;
	if (*rest && strcmp(rest, "}}") != 0)
		return NULL;
	return llm_json_get(doc, name);
}

static char *render_dup(const char *tmpl, const llm_json_rec *doc, int *rc)
{
	llm_buf b = LLM_BUF_INIT;
	*rc = llm_task_render(tmpl, doc, &b);
	char *s = llm_strndup(b.p ? b.p : "", b.len);
	llm_buf_release(&b);
	return s;
}

static int item_choices(const llm_task *t, const llm_json_rec *doc, llm_choice_item *it)
{
	if (t->choice_list) {
		it->choices = llm_calloc(t->nchoice_list, sizeof *it->choices);
		for (size_t i = 0; i < t->nchoice_list; i++)
			it->choices[it->nchoices++] = llm_strdup(t->choice_list[i]);
		return LLM_OK;
	}
	const llm_json_val *v = sole_field(t->doc_to_choice, doc);
	if (!v || v->type != LLM_JSON_ARRAY)
		return llm_fail(LLM_EFORMAT, "doc_to_choice '%s' is not a list field of the document",
		                t->doc_to_choice);
	size_t iter = 0;
	llm_json_val k, c;
	while (llm_json_next(v, &iter, &k, &c) == LLM_OK) {
		llm_buf b = LLM_BUF_INIT;
		int rc = put_value(&c, t->doc_to_choice, &b);
		it->choices = llm_realloc(it->choices, (it->nchoices + 1) * sizeof *it->choices);
		it->choices[it->nchoices++] = llm_strndup(b.p ? b.p : "", b.len);
		llm_buf_release(&b);
		if (rc)
			return rc;
	}
	return LLM_OK;
}

/* doc_to_target: an index, or text that is a number (lm-evaluation-harness reads a rendered
 * target of digits as the index) or one of the choices. */
static int item_gold(const llm_task *t, const llm_json_rec *doc, llm_choice_item *it)
{
	long gold = t->target_index;
	if (gold < 0) {
		int rc;
		char *s = render_dup(t->doc_to_target, doc, &rc), *end;
		if (rc) {
			free(s);
			return rc;
		}
		gold = strtol(s, &end, 10);
		if (!*s || *end || !isdigit((unsigned char)*s)) {
			gold = -1;
			for (size_t i = 0; i < it->nchoices && gold < 0; i++)
				if (strcmp(it->choices[i], s) == 0)
					gold = (long)i;
			if (gold < 0) {
				rc = llm_fail(LLM_EFORMAT, "target '%s' is not one of the choices", s);
				free(s);
				return rc;
			}
		}
		free(s);
	}
	if ((size_t)gold >= it->nchoices)
		return llm_fail(LLM_EFORMAT, "target %ld is not a choice index (0..%zu)", gold,
		                it->nchoices - 1);
	it->gold = (size_t)gold;
	return LLM_OK;
}

int llm_task_item(const llm_task *t, const char *line, size_t n, llm_choice_item *it)
{
	memset(it, 0, sizeof *it);
	llm_json_rec r;
	llm_json_rec_init(&r);
	int rc = llm_json_parse(&r, line, n);
	if (rc) {
		rc = llm_fail(LLM_EFORMAT, "byte %zu: %s", r.err_pos, r.err_msg);
		goto out;
	}
	it->context = render_dup(t->doc_to_text, &r, &rc);
	if (rc || (rc = item_choices(t, &r, it)))
		goto out;
	if (it->nchoices < 2) {
		rc = llm_fail(LLM_EFORMAT, "%zu choices (at least 2)", it->nchoices);
		goto out;
	}
	if ((rc = item_gold(t, &r, it)))
		goto out;
	const llm_json_val *dom = llm_json_get(&r, "domain");
	llm_buf b = LLM_BUF_INIT;
	if (dom && dom->type == LLM_JSON_STRING && llm_json_str(dom, &b) == LLM_OK)
		it->domain = llm_strndup(b.p ? b.p : "", b.len);
	else
		it->domain = llm_strdup("unknown");
	llm_buf_release(&b);
out:
	llm_json_rec_release(&r);
	return rc;
}
