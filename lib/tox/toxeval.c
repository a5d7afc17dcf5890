/*
 * toxeval.c — confusion counts of the toxicity stages (see toxeval.h).
 *
 * The scores are kept, not the verdicts, so that every threshold is counted from one pass
 * over the input.
 */
#include "toxeval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

#define MAX_LANGS 64

typedef struct {
	int lang, label;
	double per_1k, score;
	size_t hits;
} scored;

struct llm_toxeval {
	scored *v;
	size_t n, cap;
	char langs[MAX_LANGS][16];
	int nlangs;
	uint64_t skipped;
};

typedef struct {
	uint64_t tp, fp, tn, fn;
} confusion;

llm_toxeval *llm_toxeval_new(void)
{
	return llm_calloc(1, sizeof(llm_toxeval));
}

void llm_toxeval_free(llm_toxeval *e)
{
	if (!e)
		return;
	free(e->v);
	free(e);
}

static int lang_index(llm_toxeval *e, const char *lang, size_t len)
{
	char key[16] = "und";
	if (lang) {
		size_t n = 0;
		while (n < len && n < sizeof key - 1 && lang[n] != '-' && lang[n] != '_')
			n++;
		if (n) {
			memcpy(key, lang, n);
			key[n] = 0;
		}
	}
	for (int i = 0; i < e->nlangs; i++)
		if (strcmp(e->langs[i], key) == 0)
			return i;
	if (e->nlangs == MAX_LANGS)
		return MAX_LANGS - 1; /* the last slot gathers the rarest languages' overflow */
	strcpy(e->langs[e->nlangs], key);
	return e->nlangs++;
}

void llm_toxeval_add(llm_toxeval *e, const char *lang, size_t lang_len, const llm_tox_result *r,
                     int label)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 1024;
		e->v = llm_realloc(e->v, e->cap * sizeof *e->v);
	}
	e->v[e->n++] = (scored){ lang_index(e, lang, lang_len), label != 0, r->per_1k, r->score,
		                 r->hits };
}

void llm_toxeval_skip(llm_toxeval *e) { e->skipped++; }
size_t llm_toxeval_count(const llm_toxeval *e) { return e->n; }

/* stage: 0 words, 1 model, 2 words OR model; lang -1 for all */
static confusion count(const llm_toxeval *e, int lang, int stage, double per_1k, double thr)
{
	confusion k = { 0, 0, 0, 0 };
	for (size_t i = 0; i < e->n; i++) {
		const scored *s = &e->v[i];
		if (lang >= 0 && s->lang != lang)
			continue;
		llm_tox_result r = { s->hits, 0, s->per_1k, s->score };
		int w = llm_tox_words_fire(&r, per_1k), m = llm_tox_model_fires(&r, thr);
		int pred = stage == 0 ? w : stage == 1 ? m : (w || m);
		if (pred)
			s->label ? k.tp++ : k.fp++;
		else
			s->label ? k.fn++ : k.tn++;
	}
	return k;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static void put_row(llm_buf *o, int json, const char *lang, const char *stage, double thr,
                    confusion k, int mark)
{
	double p = ratio(k.tp, k.tp + k.fp), r = ratio(k.tp, k.tp + k.fn);
	double f1 = p + r > 0 ? 2 * p * r / (p + r) : 0.0, fpr = ratio(k.fp, k.fp + k.tn);
	if (json) {
		llm_buf_addf(o, "{\"stage\": \"%s\", ", stage);
		if (thr >= 0)
			llm_buf_addf(o, "\"threshold\": %g, ", thr);
		llm_buf_addf(o, "\"tp\": %llu, \"fp\": %llu, \"tn\": %llu, \"fn\": %llu, "
		             "\"precision\": %.4f, \"recall\": %.4f, \"f1\": %.4f, \"fpr\": %.4f}",
		             (unsigned long long)k.tp, (unsigned long long)k.fp, (unsigned long long)k.tn,
		             (unsigned long long)k.fn, p, r, f1, fpr);
		return;
	}
	char t[16] = "-";
	if (thr >= 0)
		snprintf(t, sizeof t, "%g", thr);
	llm_buf_addf(o, "%-5s %-11s %5s%s %6llu %6llu %6llu %6llu %6.3f %6.3f %6.3f %6.3f\n", lang,
	             stage, t, mark ? "*" : " ", (unsigned long long)k.tp, (unsigned long long)k.fp,
	             (unsigned long long)k.tn, (unsigned long long)k.fn, p, r, f1, fpr);
}

void llm_toxeval_report(const llm_toxeval *e, const llm_toxeval_opts *op, llm_buf *o)
{
	int json = op->json;
	if (json)
		llm_buf_addf(o, "{\"records\": %zu, \"skipped\": %llu, \"words_per_1k\": %g, "
		             "\"threshold\": %g, \"languages\": {", e->n, (unsigned long long)e->skipped,
		             op->words_per_1k, op->threshold);
	else
		llm_buf_addf(o, "%-5s %-11s %5s  %6s %6s %6s %6s %6s %6s %6s %6s\n", "lang", "stage",
		             "thr", "tp", "fp", "tn", "fn", "prec", "recall", "f1", "fpr");
	for (int li = -1; li < e->nlangs; li++) {
		const char *name = li < 0 ? "all" : e->langs[li];
		if (json) {
			uint64_t n = 0, pos = 0;
			for (size_t i = 0; i < e->n; i++)
				if (li < 0 || e->v[i].lang == li) {
					n++;
					pos += e->v[i].label != 0;
				}
			llm_buf_addf(o, "%s\"%s\": {\"records\": %llu, \"toxic\": %llu, \"rows\": [",
			             li >= 0 ? ", " : "", name, (unsigned long long)n, (unsigned long long)pos);
		}
		int first = 1;
		if (op->words) {
			put_row(o, json, name, "words", -1, count(e, li, 0, op->words_per_1k, 0), 0);
			first = 0;
		}
		for (int stage = 1; op->model && stage <= (op->words ? 2 : 1); stage++)
			for (int t = 0; t < op->nthresholds; t++) {
				if (json && !first)
					llm_buf_adds(o, ", ");
				first = 0;
				double thr = op->thresholds[t];
				put_row(o, json, name, stage == 1 ? "model" : "words|model", thr,
				        count(e, li, stage, op->words_per_1k, thr),
				        fabs(thr - op->threshold) < 1e-9);
			}
		if (json)
			llm_buf_adds(o, "]}");
	}
	if (json)
		llm_buf_adds(o, "}}\n");
	else
		llm_buf_addf(o, "(%zu records; * marks --threshold %g; words fire at %g hits per 1k chars)\n",
		             e->n, op->threshold, op->words_per_1k);
}
