/*
 * toxeval.c — confusion counts of the toxicity stages (see toxeval.h).
 *
 * The scores are kept, not the verdicts, so that every threshold is counted from one pass
 * over the input, and an operating point is read off the sorted scores of one language.
 */
#include "toxeval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "toxlang.h"

#define MAX_LANGS 64

typedef struct {
	int32_t lang;
	uint8_t label, words; /* gold label; the word rule fired under the document's policy */
	float score;          /* the model's score, -1 when the model did not apply */
	double thr;           /* the document's own threshold */
} scored;

struct llm_toxeval {
	scored *v;
	size_t n, cap;
	char langs[MAX_LANGS][LLM_TOXLANG_TAG];
	int nlangs;
	uint64_t skipped;
};

typedef struct {
	uint64_t tp, fp, tn, fn;
} confusion;

enum { STAGE_WORDS, STAGE_MODEL, STAGE_BOTH };
static const char *const stage_name[] = { "words", "model", "words|model" };

/* A threshold that means "each document's own" in the counts below, and one the model
 * never reaches (a target it cannot meet). */
#define OWN (-1.0)
#define NEVER 2.0

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
	char key[LLM_TOXLANG_TAG];
	llm_toxlang_key(lang, len, key);
	for (int i = 0; i < e->nlangs; i++)
		if (strcmp(e->langs[i], key) == 0)
			return i;
	if (e->nlangs == MAX_LANGS)
		return MAX_LANGS - 1; /* the last slot gathers the rarest languages' overflow */
	strcpy(e->langs[e->nlangs], key);
	return e->nlangs++;
}

void llm_toxeval_add(llm_toxeval *e, const char *lang, size_t lang_len, const llm_tox_result *r,
                     const llm_tox_policy *p, int label)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 1024;
		e->v = llm_realloc(e->v, e->cap * sizeof *e->v);
	}
	e->v[e->n++] = (scored){ lang_index(e, lang, lang_len), label != 0,
		                 (uint8_t)llm_tox_words_fire(r, p),
		                 p->model && r->score >= 0 ? (float)r->score : -1.0f, p->threshold };
}

void llm_toxeval_skip(llm_toxeval *e) { e->skipped++; }
size_t llm_toxeval_count(const llm_toxeval *e) { return e->n; }

static int in_group(const scored *s, int lang)
{
	return lang < 0 || s->lang == lang;
}

static int predict(const scored *s, int stage, double thr)
{
	double t = thr == OWN ? s->thr : thr;
	int m = s->score >= 0 && (double)s->score >= t;
	return stage == STAGE_WORDS ? s->words : stage == STAGE_MODEL ? m : (s->words || m);
}

/* lang -1 for all; thr OWN for each document's own threshold */
static confusion count(const llm_toxeval *e, int lang, int stage, double thr)
{
	confusion k = { 0, 0, 0, 0 };
	for (size_t i = 0; i < e->n; i++) {
		const scored *s = &e->v[i];
		if (!in_group(s, lang))
			continue;
		if (predict(s, stage, thr))
			s->label ? k.tp++ : k.fp++;
		else
			s->label ? k.fn++ : k.tn++;
	}
	return k;
}

/* The threshold all documents of the group share, or OWN when they differ. */
static double group_threshold(const llm_toxeval *e, int lang)
{
	double t = OWN;
	for (size_t i = 0; i < e->n; i++) {
		if (!in_group(&e->v[i], lang))
			continue;
		if (t == OWN)
			t = e->v[i].thr;
		else if (e->v[i].thr != t)
			return OWN;
	}
	return t;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* thr: a value, or OWN ("mixed"); mark: the row in effect; extra: JSON members or a text
 * column before the counts (targets). */
static void put_row(llm_buf *o, int json, const char *lang, int stage, double thr, confusion k,
                    int mark, const char *extra)
{
	double p = ratio(k.tp, k.tp + k.fp), r = ratio(k.tp, k.tp + k.fn);
	double f1 = p + r > 0 ? 2 * p * r / (p + r) : 0.0, fpr = ratio(k.fp, k.fp + k.tn);
	if (json) {
		llm_buf_addf(o, "{\"stage\": \"%s\", ", stage_name[stage]);
		if (extra)
			llm_buf_addf(o, "%s, ", extra);
		if (stage != STAGE_WORDS) {
			if (thr == OWN || thr > 1)
				llm_buf_adds(o, "\"threshold\": null, ");
			else
				llm_buf_addf(o, "\"threshold\": %.10g, ", thr);
		}
		if (mark)
			llm_buf_adds(o, "\"in_effect\": true, ");
		llm_buf_addf(o, "\"tp\": %llu, \"fp\": %llu, \"tn\": %llu, \"fn\": %llu, "
		             "\"precision\": %.4f, \"recall\": %.4f, \"f1\": %.4f, \"fpr\": %.4f}",
		             (unsigned long long)k.tp, (unsigned long long)k.fp, (unsigned long long)k.tn,
		             (unsigned long long)k.fn, p, r, f1, fpr);
		return;
	}
	char t[24] = "-";
	if (stage != STAGE_WORDS)
		snprintf(t, sizeof t, thr == OWN ? "mixed" : thr > 1 ? "never" : extra ? "%.10g" : "%g", thr);
	llm_buf_addf(o, "%-5s %-11s ", lang, stage_name[stage]);
	if (extra)
		llm_buf_addf(o, "%-16s ", extra);
	llm_buf_addf(o, "%6s%s %6llu %6llu %6llu %6llu %6.3f %6.3f %6.3f %6.3f\n", t, mark ? "*" : " ",
	             (unsigned long long)k.tp, (unsigned long long)k.fp, (unsigned long long)k.tn,
	             (unsigned long long)k.fn, p, r, f1, fpr);
}

static void group_head(const llm_toxeval *e, llm_buf *o, int li, double thr)
{
	uint64_t n = 0, pos = 0;
	for (size_t i = 0; i < e->n; i++)
		if (in_group(&e->v[i], li)) {
			n++;
			pos += e->v[i].label;
		}
	llm_buf_addf(o, "%s\"%s\": {\"records\": %llu, \"toxic\": %llu, ", li >= 0 ? ", " : "",
	             li < 0 ? "all" : e->langs[li], (unsigned long long)n, (unsigned long long)pos);
	if (thr == OWN || thr > 1)
		llm_buf_adds(o, "\"threshold\": null, ");
	else
		llm_buf_addf(o, "\"threshold\": %.10g, ", thr);
}

/* ---- the sweep ---- */

static void report_sweep(const llm_toxeval *e, const llm_toxeval_opts *op, llm_buf *o)
{
	int json = op->json;
	if (!json)
		llm_buf_addf(o, "%-5s %-11s %6s  %6s %6s %6s %6s %6s %6s %6s %6s\n", "lang", "stage",
		             "thr", "tp", "fp", "tn", "fn", "prec", "recall", "f1", "fpr");
	for (int li = -1; li < e->nlangs; li++) {
		const char *name = li < 0 ? "all" : e->langs[li];
		double own = group_threshold(e, li);
		if (json) {
			group_head(e, o, li, own);
			llm_buf_adds(o, "\"rows\": [");
		}
		int first = 1;
		if (op->words) {
			put_row(o, json, name, STAGE_WORDS, 0, count(e, li, STAGE_WORDS, 0),
			        !op->model, NULL);
			first = 0;
		}
		for (int stage = STAGE_MODEL; op->model && stage <= (op->words ? STAGE_BOTH : STAGE_MODEL);
		     stage++) {
			/* The sweep, with the threshold in effect in its place when it is not one of
			 * them, and a "mixed" row after it when the group's documents differ. */
			int done = 0;
			for (int t = 0; t <= op->nthresholds; t++) {
				double thr = t < op->nthresholds ? op->thresholds[t] : NEVER;
				if (!done && own != OWN && own <= thr) {
					if (json && !first)
						llm_buf_adds(o, ", ");
					first = 0;
					put_row(o, json, name, stage, own, count(e, li, stage, own),
					        stage == (op->words ? STAGE_BOTH : STAGE_MODEL), NULL);
					done = 1;
					if (own == thr)
						continue;
				}
				if (t == op->nthresholds)
					break;
				if (json && !first)
					llm_buf_adds(o, ", ");
				first = 0;
				put_row(o, json, name, stage, thr, count(e, li, stage, thr), 0, NULL);
			}
			if (own == OWN) {
				if (json && !first)
					llm_buf_adds(o, ", ");
				first = 0;
				put_row(o, json, name, stage, OWN, count(e, li, stage, OWN),
				        stage == (op->words ? STAGE_BOTH : STAGE_MODEL), NULL);
			}
		}
		if (json)
			llm_buf_adds(o, "]}");
	}
}

/* ---- operating points ---- */

static int cmp_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x > y ? -1 : x < y;
}

/*
 * The shortest decimal d with lo < d <= hi (hi at most 1), found digit by digit from lo
 * rounded up (up = 1) or from hi rounded down: the threshold that a user can type and that
 * decides every score of the data as the exact bound would. The checks are made on the value
 * the printed digits parse back to, since that is what --threshold will hold.
 */
static double short_decimal(double lo, double hi, int up)
{
	for (int digits = 1; digits <= 9; digits++) {
		double scale = pow(10, digits), d;
		if (up) {
			d = ceil(lo * scale) / scale;
			if (d <= lo)
				d += 1 / scale;
		} else {
			d = floor(hi * scale) / scale;
		}
		char buf[32];
		snprintf(buf, sizeof buf, "%.*f", digits, d);
		d = strtod(buf, NULL);
		if (d > lo && d <= hi)
			return d;
	}
	return hi;
}

typedef struct {
	double thr; /* OWN: not reachable with the model (the stage's best is reported) */
	int met;
} point;

/*
 * One language's operating point for the stage. Documents the word rule fires on count as
 * positive whatever the threshold; the model's candidates are the others, by score.
 */
static point find_point(const llm_toxeval *e, int lang, int stage, const llm_toxeval_target *tg)
{
	uint64_t npos = 0, nneg = 0, fixed_tp = 0, fixed_fp = 0;
	size_t np = 0, nn = 0;
	for (size_t i = 0; i < e->n; i++) {
		const scored *s = &e->v[i];
		if (s->lang != lang)
			continue;
		s->label ? npos++ : nneg++;
		if (stage == STAGE_BOTH && s->words)
			s->label ? fixed_tp++ : fixed_fp++;
		else if (s->score >= 0)
			s->label ? np++ : nn++;
	}
	float *pos = llm_malloc((np + 1) * sizeof *pos), *neg = llm_malloc((nn + 1) * sizeof *neg);
	np = nn = 0;
	for (size_t i = 0; i < e->n; i++) {
		const scored *s = &e->v[i];
		if (s->lang == lang && !(stage == STAGE_BOTH && s->words) && s->score >= 0) {
			if (s->label)
				pos[np++] = s->score;
			else
				neg[nn++] = s->score;
		}
	}
	qsort(pos, np, sizeof *pos, cmp_desc);
	qsort(neg, nn, sizeof *neg, cmp_desc);
	point pt = { OWN, 0 };
	if (tg->kind == LLM_TOXEVAL_MAX_FPR) {
		/* At most floor(X * negatives) false positives; the model may add the rest. */
		double allowed = floor(tg->value * (double)nneg + 1e-9);
		if ((double)fixed_fp > allowed)
			goto out;
		size_t k = (size_t)(allowed - (double)fixed_fp);
		if (k >= nn) {
			pt = (point){ 0.0, 1 };
			goto out;
		}
		/* Above the (k+1)-th highest clean score, at or below the next score up. */
		double lo = neg[k], hi = 1.0;
		for (size_t i = 0; i < np; i++)
			if (pos[i] > lo && pos[i] < hi)
				hi = pos[i];
		for (size_t i = 0; i < k; i++)
			if (neg[i] > lo && neg[i] < hi)
				hi = neg[i];
		if (lo >= 1.0)
			goto out;
		pt = (point){ short_decimal(lo, hi, 1), 1 };
	} else {
		double need = ceil(tg->value * (double)npos - 1e-9) - (double)fixed_tp;
		if (need <= 0) {
			pt = (point){ 1.0, 1 };
			goto out;
		}
		if ((size_t)need > np) {
			pt = (point){ 0.0, 0 };
			goto out;
		}
		/* At or below the need-th highest toxic score, above the next score down. */
		double hi = pos[(size_t)need - 1], lo = -1.0;
		for (size_t i = (size_t)need; i < np; i++)
			if (pos[i] < hi) {
				lo = pos[i];
				break;
			}
		for (size_t i = 0; i < nn; i++)
			if (neg[i] < hi) {
				lo = neg[i] > lo ? neg[i] : lo;
				break;
			}
		pt = (point){ short_decimal(lo, hi, 0), 1 };
	}
out:
	free(pos);
	free(neg);
	return pt;
}

static void report_targets(const llm_toxeval *e, const llm_toxeval_opts *op, llm_buf *o)
{
	int json = op->json, stage = op->words ? STAGE_BOTH : STAGE_MODEL;
	if (!json)
		llm_buf_addf(o, "%-5s %-11s %-12s %-3s %6s  %6s %6s %6s %6s %6s %6s %6s %6s\n", "lang",
		             "stage", "target", "met", "thr", "tp", "fp", "tn", "fn", "prec", "recall", "f1",
		             "fpr");
	else
		llm_buf_adds(o, "\"targets\": [");
	scored *v = e->v; /* the thresholds found are tried on the whole set through a copy */
	scored *tried = llm_malloc((e->n + 1) * sizeof *tried);
	for (int ti = 0; ti < op->ntargets; ti++) {
		const llm_toxeval_target *tg = &op->targets[ti];
		char what[32];
		snprintf(what, sizeof what, "%s%g", tg->kind == LLM_TOXEVAL_MAX_FPR ? "fpr<=" : "recall>=",
		         tg->value);
		llm_toxlang spec;
		llm_toxlang_init(&spec, op->default_threshold);
		point pts[MAX_LANGS];
		int all_met = 1;
		for (int li = 0; li < e->nlangs; li++) {
			pts[li] = find_point(e, li, stage, tg);
			all_met &= pts[li].met;
			if (pts[li].thr != OWN)
				llm_toxlang_set(&spec, strcmp(e->langs[li], "und") ? e->langs[li] : NULL,
				                pts[li].thr);
		}
		memcpy(tried, v, e->n * sizeof *v);
		for (size_t i = 0; i < e->n; i++)
			tried[i].thr = pts[v[i].lang].thr == OWN ? NEVER : pts[v[i].lang].thr;
		llm_toxeval view = *e;
		view.v = tried;
		llm_buf sp = LLM_BUF_INIT;
		llm_toxlang_format(&spec, &sp);
		if (json)
			llm_buf_addf(o, "%s{\"%s\": %g, \"met\": %s, \"threshold_spec\": \"%s\", \"languages\": {",
			             ti ? ", " : "", tg->kind == LLM_TOXEVAL_MAX_FPR ? "max_fpr" : "min_recall",
			             tg->value, all_met ? "true" : "false", sp.p);
		for (int li = -1; li < e->nlangs; li++) {
			double thr = li < 0 ? group_threshold(&view, -1) : pts[li].thr == OWN ? NEVER : pts[li].thr;
			confusion k = count(&view, li, stage, OWN);
			if (json) {
				group_head(&view, o, li, thr);
				llm_buf_addf(o, "\"met\": %s, \"row\": ",
				             li < 0 ? (all_met ? "true" : "false") : pts[li].met ? "true" : "false");
				put_row(o, 1, NULL, stage, thr, k, 0, NULL);
				llm_buf_addc(o, '}');
			} else {
				char col[40];
				snprintf(col, sizeof col, "%-12s %-3s", what,
				         (li < 0 ? all_met : pts[li].met) ? "yes" : "no");
				put_row(o, 0, li < 0 ? "all" : e->langs[li], stage, thr, k, 0, col);
			}
		}
		if (json)
			llm_buf_adds(o, "}}");
		else
			llm_buf_addf(o, "--threshold %s%s\n", sp.p,
			             all_met ? "" : "  (met where the table says yes)");
		llm_buf_release(&sp);
	}
	free(tried);
	if (json)
		llm_buf_adds(o, "]");
}

void llm_toxeval_report(const llm_toxeval *e, const llm_toxeval_opts *op, llm_buf *o)
{
	int json = op->json;
	if (json)
		llm_buf_addf(o, "{\"records\": %zu, \"skipped\": %llu, \"words_per_1k\": %g, ", e->n,
		             (unsigned long long)e->skipped, op->words_per_1k);
	if (op->ntargets > 0 && op->model) {
		report_targets(e, op, o);
	} else {
		if (json)
			llm_buf_adds(o, "\"languages\": {");
		report_sweep(e, op, o);
		if (json)
			llm_buf_adds(o, "}");
	}
	if (json)
		llm_buf_adds(o, "}\n");
	else if (op->ntargets > 0 && op->model)
		llm_buf_addf(o, "(%zu records; words fire at %g hits per 1k chars)\n", e->n,
		             op->words_per_1k);
	else
		llm_buf_addf(o, "(%zu records; * marks the threshold in effect; words fire at %g hits "
		             "per 1k chars)\n", e->n, op->words_per_1k);
}
