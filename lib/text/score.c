/*
 * score.c — named classifier scores of a document (see score.h).
 */
#include "score.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "fasttext.h"

typedef struct {
	char *path;
	llm_fasttext *m;     /* NULL: an opener's model */
	llm_score_model ext;
} model;

typedef struct {
	char *name;
	int model; /* index into models */
	int label; /* label index, or -1: the distribution */
} named;

struct llm_scorer {
	model *models;
	size_t nmodels;
	named *names;
	size_t nnames;
	llm_score_opener opener;
	void *opener_arg;
};

struct llm_scorer_scratch {
	const llm_scorer *sc;
	size_t nmodels;
	llm_fasttext_scratch **ft; /* per model */
	void **ext;                /* per model: an opener's model's scratch */
	float **prob;              /* per model: the probability of each label, 0 if unknown */
	llm_fasttext_pred *pred;   /* room for the most labels of any model */
	llm_buf key;               /* a key of prev, unescaped */
	unsigned char *set;        /* per name: written already while copying prev */
};

llm_scorer *llm_scorer_new(void)
{
	return llm_calloc(1, sizeof(llm_scorer));
}

void llm_scorer_free(llm_scorer *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nmodels; i++) {
		free(sc->models[i].path);
		llm_fasttext_free(sc->models[i].m);
		if (!sc->models[i].m && sc->models[i].ext.free)
			sc->models[i].ext.free(sc->models[i].ext.ctx);
	}
	for (size_t i = 0; i < sc->nnames; i++)
		free(sc->names[i].name);
	free(sc->models);
	free(sc->names);
	free(sc);
}

void llm_scorer_set_opener(llm_scorer *sc, llm_score_opener fn, void *arg)
{
	sc->opener = fn;
	sc->opener_arg = arg;
}

/* A model's labels, whichever kind it is. */
static int nlabels(const model *m)
{
	return m->m ? llm_fasttext_nlabels(m->m) : m->ext.nlabels;
}

static const char *label_name(const model *m, int i)
{
	return m->m ? llm_fasttext_label_name(m->m, i) : m->ext.labels[i];
}

static int label_id(const model *m, const char *label)
{
	if (m->m)
		return llm_fasttext_label_id(m->m, label);
	for (int i = 0; i < m->ext.nlabels; i++)
		if (strcmp(m->ext.labels[i], label) == 0)
			return i;
	return -1;
}

int llm_score_name_ok(const char *name, size_t len)
{
	if (!len || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)name[i]) || name[i] == '_' || name[i] == '-'))
			return 0;
	return !(len == 6 && memcmp(name, "bucket", 6) == 0);
}

int llm_scorer_find(const llm_scorer *sc, const char *name, size_t len)
{
	for (size_t i = 0; i < sc->nnames; i++)
		if (strlen(sc->names[i].name) == len && memcmp(sc->names[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/* The model of path, loaded once. */
static int model_of(llm_scorer *sc, const char *path, int *out)
{
	for (size_t i = 0; i < sc->nmodels; i++)
		if (strcmp(sc->models[i].path, path) == 0) {
			*out = (int)i;
			return LLM_OK;
		}
	llm_fasttext *m = NULL;
	llm_score_model ext = { 0 };
	int rc = sc->opener ? sc->opener(sc->opener_arg, path, &ext) : LLM_ENOTFOUND;
	if (rc == LLM_ENOTFOUND)
		rc = llm_fasttext_load(&m, path);
	if (rc != LLM_OK)
		return rc;
	sc->models = llm_realloc(sc->models, (sc->nmodels + 1) * sizeof *sc->models);
	sc->models[sc->nmodels] = (model){ llm_strdup(path), m, ext };
	*out = (int)sc->nmodels++;
	return LLM_OK;
}

/* The labels of m, for a message: "hq, cc" (the first few). */
static void label_list(const model *m, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < nlabels(m) && n + 1 < cap; i++) {
		if (i == 8) {
			snprintf(out + n, cap - n, ", ...");
			return;
		}
		int w = snprintf(out + n, cap - n, "%s%s", i ? ", " : "", label_name(m, i));
		if (w < 0)
			return;
		n += (size_t)w;
	}
}

int llm_scorer_add(llm_scorer *sc, const char *spec, const char *default_label)
{
	const char *eq = strchr(spec, '=');
	if (!eq)
		return llm_fail(LLM_EINVAL, "'%s': expected NAME=MODEL[:LABEL]", spec);
	size_t nlen = (size_t)(eq - spec);
	if (!llm_score_name_ok(spec, nlen))
		return llm_fail(LLM_EINVAL, "'%.*s' is not a score name (letters, digits, '_' and '-', "
		                "not starting with a digit or '-', not \"bucket\")", (int)nlen, spec);
	if (llm_scorer_find(sc, spec, nlen) >= 0)
		return llm_fail(LLM_EINVAL, "score '%.*s' is named twice", (int)nlen, spec);
	const char *path = eq + 1, *slash = strrchr(path, '/'), *colon = strrchr(path, ':');
	const char *label = default_label ? default_label : LLM_SCORE_LABEL;
	char *file;
	int given = colon && (!slash || colon > slash);
	if (given) {
		file = llm_strndup(path, (size_t)(colon - path));
		label = colon + 1;
	} else {
		file = llm_strdup(path);
	}
	int mi = -1, rc = LLM_OK;
	if (!*file || !*label)
		rc = llm_fail(LLM_EINVAL, "'%s': expected NAME=MODEL[:LABEL]", spec);
	else
		rc = model_of(sc, file, &mi);
	int li = -1;
	/* a model of one value is named without a label: the label is its value's */
	if (rc == LLM_OK && !given && !sc->models[mi].m && sc->models[mi].ext.value)
		li = 0;
	else if (rc == LLM_OK && strcmp(label, LLM_SCORE_ALL) != 0 &&
	         (li = label_id(&sc->models[mi], label)) < 0) {
		char labels[256];
		label_list(&sc->models[mi], labels, sizeof labels);
		rc = llm_fail(LLM_ENOTFOUND, "%s has no label '%s' (its labels: %s); name one with "
		              "%.*s=MODEL:LABEL", file, label, labels, (int)nlen, spec);
	}
	free(file);
	if (rc != LLM_OK)
		return rc;
	sc->names = llm_realloc(sc->names, (sc->nnames + 1) * sizeof *sc->names);
	sc->names[sc->nnames++] = (named){ llm_strndup(spec, nlen), mi, li };
	return LLM_OK;
}

size_t llm_scorer_count(const llm_scorer *sc) { return sc->nnames; }

int llm_scorer_check(const llm_scorer *sc, const char *name, size_t len, const char *label)
{
	int i = llm_scorer_find(sc, name, len);
	if (i < 0)
		return LLM_ENOTFOUND;
	const named *n = &sc->names[i];
	if (!label && n->label < 0)
		return llm_fail(LLM_EINVAL, "score '%s' is a distribution: name one of its labels "
		                "(%s.LABEL)", n->name, n->name);
	if (label && n->label >= 0)
		return llm_fail(LLM_EINVAL, "score '%s' is one number, not a distribution of labels",
		                n->name);
	if (label && label_id(&sc->models[n->model], label) < 0)
		return llm_fail(LLM_EINVAL, "score '%s' has no label '%s'", n->name, label);
	return LLM_OK;
}
const char *llm_scorer_name(const llm_scorer *sc, size_t i) { return sc->names[i].name; }

int llm_scorer_is_value(const llm_scorer *sc, size_t i)
{
	const model *m = &sc->models[sc->names[i].model];
	return !m->m && m->ext.value;
}

llm_scorer_scratch *llm_scorer_scratch_new(const llm_scorer *sc)
{
	llm_scorer_scratch *s = llm_calloc(1, sizeof *s);
	s->sc = sc;
	s->nmodels = sc->nmodels;
	s->ft = llm_calloc(sc->nmodels + 1, sizeof *s->ft);
	s->ext = llm_calloc(sc->nmodels + 1, sizeof *s->ext);
	s->prob = llm_calloc(sc->nmodels + 1, sizeof *s->prob);
	s->set = llm_calloc(sc->nnames + 1, 1);
	int most = 1;
	for (size_t i = 0; i < sc->nmodels; i++) {
		const model *m = &sc->models[i];
		int nl = nlabels(m);
		s->prob[i] = llm_calloc((size_t)nl, sizeof **s->prob);
		most = nl > most ? nl : most;
		if (!m->m) {
			if (!(s->ext[i] = m->ext.scratch_new(m->ext.ctx))) {
				llm_scorer_scratch_free(s);
				return NULL;
			}
			continue;
		}
		if (!(s->ft[i] = llm_fasttext_scratch_new(m->m))) {
			llm_scorer_scratch_free(s);
			return NULL;
		}
	}
	s->pred = llm_calloc((size_t)most, sizeof *s->pred);
	return s;
}

void llm_scorer_scratch_free(llm_scorer_scratch *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmodels; i++) {
		llm_fasttext_scratch_free(s->ft[i]);
		if (s->ext[i])
			s->sc->models[i].ext.scratch_free(s->ext[i]);
		free(s->prob[i]);
	}
	free(s->ft);
	free(s->ext);
	free(s->prob);
	llm_buf_release(&s->key);
	free(s->set);
	free(s->pred);
	free(s);
}

/* A probability as fastText computed it (a float), in the fewest digits that read back as
 * the same float: what a reader of the record sees is the value the model gave. */
static void put_prob(llm_buf *out, float p)
{
	char tmp[32];
	for (int digits = 6; digits <= 9; digits++) {
		snprintf(tmp, sizeof tmp, "%.*g", digits, (double)p);
		if (strtof(tmp, NULL) == p)
			break;
	}
	llm_buf_adds(out, tmp);
}

/* Name i's value. */
static void put_value(const llm_scorer *sc, const llm_scorer_scratch *s, size_t i, llm_buf *out)
{
	const named *n = &sc->names[i];
	const model *m = &sc->models[n->model];
	const float *prob = s->prob[n->model];
	if (n->label >= 0) {
		put_prob(out, prob[n->label]);
		return;
	}
	llm_buf_addc(out, '{');
	for (int l = 0; l < nlabels(m); l++) {
		const char *name = label_name(m, l);
		if (l)
			llm_buf_adds(out, ", ");
		llm_json_put_str(out, name, strlen(name));
		llm_buf_adds(out, ": ");
		put_prob(out, prob[l]);
	}
	llm_buf_addc(out, '}');
}

int llm_scorer_run(const llm_scorer *sc, llm_scorer_scratch *s, const char *text, size_t len,
                   const llm_json_val *prev, llm_buf *out)
{
	int unknown = 0;
	for (size_t i = 0; i < sc->nmodels; i++) {
		const llm_fasttext *m = sc->models[i].m;
		if (!m) {
			const llm_score_model *x = &sc->models[i].ext;
			unknown += x->score(x->ctx, s->ext[i], text, len, s->prob[i]) == 1;
			continue;
		}
		int nl = llm_fasttext_nlabels(m);
		int n = llm_fasttext_predict(m, s->ft[i], text, len, 0, 0.0f, s->pred);
		memset(s->prob[i], 0, (size_t)nl * sizeof **s->prob);
		for (int k = 0; k < n; k++)
			s->prob[i][s->pred[k].label] = s->pred[k].prob;
		unknown += n == 0;
	}
	memset(s->set, 0, sc->nnames);
	llm_buf_addc(out, '{');
	int first = 1;
	if (prev && prev->type == LLM_JSON_OBJECT) {
		size_t it = 0;
		llm_json_val key, val;
		llm_buf *k = &s->key;
		while (llm_json_next(prev, &it, &key, &val) == LLM_OK) {
			llm_buf_reset(k);
			llm_json_str(&key, k);
			int i = llm_scorer_find(sc, k->p ? k->p : "", k->len);
			if (i >= 0 && s->set[i])
				continue; /* a key repeated in prev: written once */
			if (!first)
				llm_buf_adds(out, ", ");
			first = 0;
			llm_buf_add(out, key.p, key.len);
			llm_buf_adds(out, ": ");
			if (i >= 0) {
				put_value(sc, s, (size_t)i, out);
				s->set[i] = 1;
			} else {
				llm_buf_add(out, val.p, val.len);
			}
		}
	}
	for (size_t i = 0; i < sc->nnames; i++) {
		if (s->set[i])
			continue;
		if (!first)
			llm_buf_adds(out, ", ");
		first = 0;
		llm_json_put_str(out, sc->names[i].name, strlen(sc->names[i].name));
		llm_buf_adds(out, ": ");
		put_value(sc, s, i, out);
	}
	llm_buf_addc(out, '}');
	return unknown;
}

void llm_score_train_line(llm_buf *out, const char *label, const char *text, size_t len)
{
	llm_buf_adds(out, "__label__");
	/* A label is one fastText token: white space in it would split it. */
	for (const char *c = label; *c; c++)
		llm_buf_addc(out, isspace((unsigned char)*c) ? '_' : *c);
	llm_buf_addc(out, ' ');
	size_t start = out->len;
	llm_buf_add(out, text, len);
	for (size_t i = start; i < out->len; i++)
		if (out->p[i] == '\n')
			out->p[i] = ' ';
	llm_buf_addc(out, '\n');
}
