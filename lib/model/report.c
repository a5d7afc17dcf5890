/*
 * report.c — the page of report.h: HTML by hand, charts as inline SVG.
 *
 * No script: a page that runs nothing works wherever it is opened, as a file or from a server
 * that sends it without headers of its own, and is the same page in every browser. Hover
 * texts are SVG <title> elements, which browsers show without script.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fmt.h"
#include "core/io.h"
#include "core/json.h"
#include "reportpipe.h"

/* Chart geometry, in SVG user units (pixels at 100%). */
#define CW 560
#define CH 220
#define ML 62
#define MR 14
#define MT 28
#define MB 30

#define MAX_MARKERS 400

typedef struct {
	llm_buf *b;
	const llm_runlog *rl;
	const llm_report_options *o;
	const llm_findings *f;
	int64_t x0, x1; /* the steps of the x axis, the same on every chart */
	llm_buf tmp;
	llm_buf constant; /* the curves not drawn for being flat, "loss scale 1, ..." */
	llm_json_rec rec;
} page;

int llm_report_run(llm_runlog **rl, const char *dir, int live, double refresh)
{
	int rc = *rl ? llm_runlog_refresh(*rl) : llm_runlog_open(rl, dir);
	llm_report_options ro;
	llm_report_options_init(&ro);
	char holder[256], path[4096];
	if (live && llm_runlog_live(dir, holder, sizeof holder)) {
		ro.live = holder;
		ro.refresh = refresh < 5 ? 5 : refresh > 3600 ? 3600 : (int)refresh;
	}
	snprintf(path, sizeof path, "%s/report.html", dir);
	return rc != LLM_OK ? rc : llm_report_write(*rl, &ro, path, NULL);
}

void llm_report_options_init(llm_report_options *o)
{
	*o = (llm_report_options){ .max_points = 4000 };
}

/* ---- text ------------------------------------------------------------------------------- */

void llm_report_escape(llm_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		switch (s[i]) {
		case '&': llm_buf_adds(b, "&amp;"); break;
		case '<': llm_buf_adds(b, "&lt;"); break;
		case '>': llm_buf_adds(b, "&gt;"); break;
		case '"': llm_buf_adds(b, "&quot;"); break;
		default: llm_buf_addc(b, s[i]);
		}
}

static void esc(llm_buf *b, const char *s, size_t n) { llm_report_escape(b, s, n); }
static void escs(llm_buf *b, const char *s) { llm_report_escape(b, s, strlen(s)); }

void llm_report_number(llm_buf *b, double v)
{
	if (!isfinite(v))
		llm_buf_adds(b, isinf(v) ? "not finite" : "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		llm_buf_addf(b, "%.0f", v);
	else
		llm_buf_addf(b, "%.4g", v);
}

static void num(llm_buf *b, double v) { llm_report_number(b, v); }

static void bytes(llm_buf *b, double n)
{
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (n >= 1024 && u < 4)
		n /= 1024, u++;
	llm_buf_addf(b, u ? "%.1f %s" : "%.0f %s", n, unit[u]);
}

static void duration(llm_buf *b, double s)
{
	if (s < 120)
		llm_buf_addf(b, "%.0f s", s);
	else if (s < 7200)
		llm_buf_addf(b, "%.0f min", s / 60);
	else
		llm_buf_addf(b, "%.0f h %02.0f min", floor(s / 3600), fmod(s / 60, 60));
}

/* A double in full: the shortest text that reads back (fmt.h), as everywhere in llmkit. */
static void full(llm_buf *b, double v)
{
	char s[LLM_FMT_DOUBLE_MAX];
	llm_buf_add(b, s, llm_fmt_double(s, sizeof s, v));
}

/* Whether a JSON number is written with a fraction or an exponent (an integer is shown as
 * written: a seed or a count of 20 digits is not a double). */
static int fractional(const llm_json_val *v)
{
	return memchr(v->p, '.', v->len) || memchr(v->p, 'e', v->len) || memchr(v->p, 'E', v->len);
}

/* A JSON value as text: a string unescaped, a fractional number in its shortest form
 * (llm-train writes %.17g: 0.00029999999999999997 is shown 0.0003), anything else as written
 * (cut at 300 bytes). */
static void json_text(page *p, const llm_json_val *v)
{
	llm_buf_reset(&p->tmp);
	if (v->type == LLM_JSON_STRING && llm_json_str(v, &p->tmp) == LLM_OK) {
		escs(p->b, p->tmp.p ? p->tmp.p : "");
		return;
	}
	double d;
	if (v->type == LLM_JSON_NUMBER && fractional(v) && llm_json_num(v, &d) == LLM_OK) {
		full(p->b, d);
		return;
	}
	esc(p->b, v->p, v->len > 300 ? 300 : v->len);
	if (v->len > 300)
		llm_buf_adds(p->b, "...");
}

/* ---- curves ----------------------------------------------------------------------------- */

typedef struct {
	const char *key, *label, *color;
	double width;
	int dots;            /* a circle per point: sparse curves (validation) */
} curve;

typedef struct {
	double lo, hi;
	int log;
	int clipped;         /* values beyond hi drawn at the top */
	int constant;        /* every value the same */
} axis;

static double X(const page *p, int64_t step)
{
	return ML + (double)(step - p->x0) / (double)(p->x1 - p->x0) * (CW - ML - MR);
}

static double Y(const axis *a, double v)
{
	double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) :
	                    (v - a->lo) / (a->hi - a->lo);
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return CH - MB - t * (CH - MT - MB);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The range of the curves' finite values (positive ones on a log axis). A range that one
 * spike would flatten everything in is cut at the 99th percentile plus a tenth of the span,
 * and what lies above is drawn on the top edge. 0 when there is nothing to draw. */
static int make_axis(const page *p, const curve *c, int nc, int log, double extra, axis *a)
{
	size_t rows = llm_runlog_rows(p->rl), n = 0;
	double *v = llm_malloc((rows * (size_t)nc + 1) * sizeof *v);
	for (int k = 0; k < nc; k++) {
		const double *col = llm_runlog_col(p->rl, c[k].key);
		for (size_t i = 0; col && i < rows; i++)
			if (isfinite(col[i]) && (!log || col[i] > 0))
				v[n++] = col[i];
	}
	if (!n) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof *v, cmp_double);
	*a = (axis){ .lo = v[0], .hi = v[n - 1], .log = log, .constant = v[0] == v[n - 1] };
	double q01 = v[n / 100], q99 = v[n - 1 - n / 100];
	if (!log && n >= 50 && a->hi - q99 > 3 * (q99 - q01) && q99 > q01) {
		a->hi = q99 + 0.1 * (q99 - q01);
		a->clipped = 1;
	}
	free(v);
	if (isfinite(extra) && (!log || extra > 0)) {
		a->lo = extra < a->lo ? extra : a->lo;
		a->hi = extra > a->hi ? extra : a->hi;
	}
	if (log && a->hi / a->lo < 10) {
		double m = sqrt(a->hi * a->lo);
		a->lo = m / sqrt(10) < a->lo ? m / sqrt(10) : a->lo;
		a->hi = m * sqrt(10) > a->hi ? m * sqrt(10) : a->hi;
	} else if (!log) {
		double span = a->hi - a->lo, pad = span > 0 ? 0.05 * span : fabs(a->hi) > 0 ? 0.05 * fabs(a->hi) : 1;
		a->lo -= pad;
		a->hi += a->clipped ? 0 : pad;
	}
	return 1;
}

static void ticks(page *p, const axis *a)
{
	llm_buf *b = p->b;
	double vals[16];
	int n = 0;
	int decimals = -1; /* -1: %g */
	if (a->log) {
		/* Decades, and 2 and 5 times them when the axis spans fewer than three. */
		int few = log10(a->hi) - log10(a->lo) < 3;
		for (double d = pow(10, floor(log10(a->lo))); d <= a->hi * 1.0001 && n < 14; d *= 10)
			for (int m = 1; m <= 5 && n < 14; m += m == 1 ? 1 : 3)
				if ((m == 1 || few) && d * m >= a->lo * 0.9999 && d * m <= a->hi * 1.0001)
					vals[n++] = d * m;
	} else {
		double raw = (a->hi - a->lo) / 4, mag = pow(10, floor(log10(raw))), step = mag;
		if (raw / mag >= 5)
			step = 5 * mag;
		else if (raw / mag >= 2)
			step = 2 * mag;
		for (double v = ceil(a->lo / step) * step; v <= a->hi && n < 16; v += step)
			vals[n++] = fabs(v) < step * 1e-9 ? 0 : v;
		/* As many decimals as the step needs, so that near ticks never read alike. */
		if (fabs(a->hi) < 1e6 && fabs(a->lo) < 1e6 && step >= 1e-6)
			decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	}
	for (int i = 0; i < n; i++) {
		double y = Y(a, vals[i]);
		llm_buf_addf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		             "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
		             ML, y, CW - MR, y, ML - 4, y + 4);
		if (decimals >= 0)
			llm_buf_addf(b, "%.*f</text>\n", decimals, vals[i]);
		else
			llm_buf_addf(b, "%.3g</text>\n", vals[i]);
	}
	for (int i = 0; i <= 4; i++) {
		int64_t s = p->x0 + (p->x1 - p->x0) * i / 4;
		llm_buf_addf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld"
		             "</text>\n", X(p, s), CH - MB + 16, (long long)s);
	}
}

/* The events on a chart: non-finite steps, spikes, plateaus as lines, rollbacks as the band
 * of the steps they threw away. */
static void markers(page *p)
{
	llm_buf *b = p->b;
	size_t n = llm_runlog_nevents(p->rl), drawn = 0;
	const double *upd = llm_runlog_col(p->rl, "update_ratio");
	const int64_t *st = llm_runlog_steps(p->rl);
	size_t rows = llm_runlog_rows(p->rl);
	for (size_t i = 0; i < n && drawn < MAX_MARKERS; i++) {
		const llm_runlog_event *e = llm_runlog_event_at(p->rl, i);
		if (e->step < p->x0 || e->step > p->x1)
			continue;
		drawn++;
		double x = X(p, e->step);
		const char *cls = strcmp(e->name, "nonfinite_skipped") == 0 ? "ev-nonfinite" :
		                  strcmp(e->name, "spike") == 0 ? "ev-spike" :
		                  strcmp(e->name, "rollback") == 0 ? "ev-rollback" :
		                  strcmp(e->name, "plateau") == 0 ? "ev-plateau" : "ev-other";
		if (e->to_step >= 0) {
			double x0 = X(p, e->to_step < p->x0 ? p->x0 : e->to_step);
			llm_buf_addf(b, "<rect class=\"band\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			             "height=\"%d\"><title>", x0, MT, x - x0 > 1 ? x - x0 : 1, CH - MT - MB);
			llm_buf_addf(b, "steps %lld-%lld rolled back", (long long)e->to_step + 1,
			             (long long)e->step);
			llm_buf_adds(b, "</title></rect>");
		}
		/* A spike the step of which changed no weight was skipped. */
		int skipped = 0;
		if (strcmp(e->name, "spike") == 0 && upd) {
			size_t lo = 0, hi = rows;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (st[mid] < e->step)
					lo = mid + 1;
				else
					hi = mid;
			}
			skipped = lo < rows && st[lo] == e->step && upd[lo] == 0;
		}
		llm_buf_addf(b, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>"
		             "step %lld: ", cls, x, MT, x, CH - MB, (long long)e->step);
		escs(b, e->name);
		if (skipped)
			llm_buf_adds(b, " (skipped)");
		if (isfinite(e->loss)) {
			llm_buf_adds(b, ", loss ");
			num(b, e->loss);
		}
		for (size_t j = 0; j < e->nbatches && j < 8; j++)
			llm_buf_addf(b, "%s%llu", j ? "," : ", batch ", (unsigned long long)e->batches[j]);
		llm_buf_adds(b, "</title></line>\n");
	}
}

/* One curve as polylines, one point per row that has a value (or per bucket's low and high
 * beyond max_points), a new polyline after each value that is not finite: a row without the
 * key is not a gap (validation is logged every so many steps), a step that blew up is. */
static void polyline(page *p, const curve *c, const axis *a)
{
	llm_buf *b = p->b;
	const double *v = llm_runlog_col(p->rl, c->key);
	const int64_t *st = llm_runlog_steps(p->rl);
	size_t rows = llm_runlog_rows(p->rl), maxp = p->o->max_points ? p->o->max_points : 4000;
	size_t per = rows <= maxp ? 1 : (rows + maxp / 2 - 1) / (maxp / 2 > 0 ? maxp / 2 : 1);
	int open = 0;
	llm_buf dots = LLM_BUF_INIT;
	for (size_t i = 0; i < rows; i += per) {
		size_t end = i + per < rows ? i + per : rows, pick[2], np = 0;
		int gap = 0;
		if (per == 1) {
			if (isfinite(v[i]) && (!a->log || v[i] > 0))
				pick[np++] = i;
			gap = isinf(v[i]);
		} else {
			size_t lo = rows, hi = rows;
			for (size_t j = i; j < end; j++) {
				gap |= isinf(v[j]);
				if (isfinite(v[j]) && (!a->log || v[j] > 0)) {
					lo = lo == rows || v[j] < v[lo] ? j : lo;
					hi = hi == rows || v[j] > v[hi] ? j : hi;
				}
			}
			if (lo < rows)
				pick[np++] = lo < hi ? lo : hi;
			if (lo < rows && hi != lo)
				pick[np++] = lo < hi ? hi : lo;
		}
		if (gap && open) {
			llm_buf_adds(b, "\"/>\n");
			open = 0;
		}
		for (size_t k = 0; k < np; k++) {
			if (!open) {
				llm_buf_adds(b, "<polyline class=\"curve\" data-key=\"");
				escs(b, c->key); /* another trainer's tag may hold anything */
				llm_buf_addf(b, "\" stroke=\"%s\" stroke-width=\"%.1f\" points=\"",
				             c->color, c->width);
				open = 1;
			} else {
				llm_buf_addc(b, ' ');
			}
			double x = X(p, st[pick[k]]), y = Y(a, v[pick[k]]);
			llm_buf_addf(b, "%.1f,%.1f", x, y);
			if (c->dots)
				llm_buf_addf(&dots, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">"
				             "<title>step %lld: %.5g</title></circle>", x, y, c->color,
				             (long long)st[pick[k]], v[pick[k]]);
		}
	}
	if (open)
		llm_buf_adds(b, "\"/>\n");
	if (dots.len)
		llm_buf_add(b, dots.p, dots.len);
	llm_buf_release(&dots);
}

/* A chart of curves (those present), with the events; hline: a reference line (the clip
 * threshold) or NaN. 0 when none of the curves has a value. */
static int chart(page *p, const char *id, const char *title, const curve *cs, int nc, int log,
                 double hline, const char *hlabel, int is_loss)
{
	curve present[64];
	int n = 0;
	for (int k = 0; k < nc && n < 64; k++)
		if (llm_runlog_col(p->rl, cs[k].key))
			present[n++] = cs[k];
	axis a;
	if (!n || !make_axis(p, present, n, log, hline, &a))
		return 0;
	if (n == 1 && a.constant) {
		const double *v = llm_runlog_col(p->rl, present[0].key);
		size_t i = 0;
		while (!isfinite(v[i]))
			i++;
		llm_buf_adds(&p->constant, p->constant.len ? ", " : "");
		escs(&p->constant, title);
		llm_buf_adds(&p->constant, " ");
		num(&p->constant, v[i]);
		return 0;
	}
	llm_buf *b = p->b;
	llm_buf_adds(b, "<figure><svg class=\"chart\" id=\"chart-");
	escs(b, id);
	llm_buf_addf(b, "\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
	             "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"",
	             CW, CH, CW, CH);
	escs(b, title);
	llm_buf_addf(b, "\">\n<text class=\"title\" x=\"%d\" y=\"16\">", ML);
	escs(b, title);
	if (log)
		llm_buf_adds(b, " (log scale)");
	if (a.clipped)
		llm_buf_adds(b, " (cut above the 99th percentile)");
	llm_buf_adds(b, "</text>\n");
	ticks(p, &a);
	llm_buf_addf(b, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
	             "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
	             ML, CH - MB, CW - MR, CH - MB, ML, MT, ML, CH - MB);
	if (is_loss && p->f)
		for (size_t i = 0; i < p->f->n; i++) {
			const llm_finding *f = &p->f->v[i];
			double x0 = X(p, f->first < p->x0 ? p->x0 : f->first);
			double x1 = X(p, f->last > p->x1 ? p->x1 : f->last);
			llm_buf_addf(b, "<rect class=\"finding\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			             "height=\"%d\"><title>", x0 - 1, MT, x1 - x0 + 2, CH - MT - MB);
			escs(b, f->name);
			llm_buf_adds(b, ": ");
			escs(b, f->evidence);
			llm_buf_adds(b, "</title></rect>\n");
		}
	markers(p);
	if (isfinite(hline)) {
		llm_buf_addf(b, "<line class=\"ref\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"><title>",
		             ML, Y(&a, hline), CW - MR, Y(&a, hline));
		escs(b, hlabel);
		llm_buf_adds(b, "</title></line>\n");
	}
	if (is_loss)
		for (size_t i = 0; i < llm_runlog_nckpts(p->rl); i++) {
			const llm_runlog_ckpt *c = llm_runlog_ckpt_at(p->rl, i);
			if (c->step < p->x0 || c->step > p->x1)
				continue;
			double x = X(p, c->step);
			llm_buf_addf(b, "<path class=\"ckpt\" d=\"M%.1f,%d l-4,7 h8 z\"><title>checkpoint ",
			             x, CH - MB);
			escs(b, c->name);
			llm_buf_adds(b, "</title></path>\n");
		}
	for (int k = 0; k < n; k++)
		polyline(p, &present[k], &a);
	/* The legend, right-aligned on the title line. */
	double lx = CW - MR;
	for (int k = n - 1; k >= 0 && n <= 12; k--) {
		llm_buf_addf(b, "<text class=\"legend\" x=\"%.0f\" y=\"16\" text-anchor=\"end\" "
		             "fill=\"%s\">", lx, present[k].color);
		escs(b, present[k].label);
		llm_buf_adds(b, "</text>");
		lx -= 7.0 * (double)strlen(present[k].label) + 14;
	}
	llm_buf_adds(b, "\n</svg></figure>\n");
	return 1;
}

/* Curves named PREFIX0, PREFIX1, ...: one chart of all of them. */
static void numbered(page *p, const char *prefix, const char *id, const char *title)
{
	static const char *const pal[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };
	curve cs[64];
	char keys[64][48], labels[64][24];
	int n = 0;
	for (; n < 64; n++) {
		snprintf(keys[n], sizeof keys[n], "%s%d", prefix, n);
		if (!llm_runlog_col(p->rl, keys[n]))
			break;
		snprintf(labels[n], sizeof labels[n], "%d", n);
		cs[n] = (curve){ keys[n], labels[n], pal[n % 10], 1.2, 0 };
	}
	if (n)
		chart(p, id, title, cs, n, 0, NAN, NULL, 0);
}

/* Whether key is drawn by a chart of its own below, or is a counter not worth one. */
static int known_key(const char *k)
{
	static const char *const keys[] = {
		"loss", "smoothed_loss", "val_loss", "val_ppl", "lr", "grad_norm", "clip_factor",
		"param_norm", "update_ratio", "loss_scale", "tokens", "tokens_per_s", "mfu",
		"longest_seq", "batch_id", "mem_mb", "step_s", "nonfinite_steps", "spikes",
		"rollbacks",
	};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (strcmp(k, keys[i]) == 0)
			return 1;
	return strncmp(k, "grad_norm_layer_", 16) == 0 || strncmp(k, "loss_rank_", 10) == 0;
}

static void charts(page *p)
{
	static const curve loss[] = {
		{ "loss", "loss", "#9bb7d4", 1, 0 },
		{ "smoothed_loss", "smoothed", "#1f4e79", 1.8, 0 },
		{ "val_loss", "validation", "#c0392b", 1.8, 1 },
	};
	static const curve one[][1] = {
		{ { "val_ppl", "validation", "#c0392b", 1.8, 1 } },
		{ { "lr", "lr", "#2ca02c", 1.5, 0 } },
		{ { "grad_norm", "grad norm", "#1f77b4", 1, 0 } },
		{ { "param_norm", "param norm", "#8c564b", 1.5, 0 } },
		{ { "update_ratio", "update/param", "#9467bd", 1, 0 } },
		{ { "loss_scale", "loss scale", "#7f7f7f", 1.5, 0 } },
		{ { "tokens_per_s", "tokens/s", "#17becf", 1, 0 } },
		{ { "mfu", "MFU", "#bcbd22", 1, 0 } },
		{ { "mem_mb", "MiB", "#e377c2", 1.5, 0 } },
		{ { "longest_seq", "tokens", "#ff7f0e", 1, 0 } },
	};
	static const struct {
		const char *id, *title;
		int log;
	} meta[] = {
		{ "val_ppl", "Validation perplexity", 0 }, { "lr", "Learning rate", 0 },
		{ "grad_norm", "Gradient norm", 0 }, { "param_norm", "Parameter norm", 0 },
		{ "update_ratio", "Update / parameter ratio", 1 }, { "loss_scale", "Loss scale", 1 },
		{ "tokens_per_s", "Tokens per second", 0 }, { "mfu", "Model FLOPs utilisation", 0 },
		{ "mem_mb", "Memory (MiB)", 0 }, { "longest_seq", "Longest sequence in the batch", 0 },
	};
	chart(p, "loss", "Loss", loss, 3, 0, NAN, NULL, 1);
	for (size_t i = 0; i < sizeof meta / sizeof *meta; i++) {
		double clip = NAN;
		char label[64] = "";
		if (strcmp(meta[i].id, "grad_norm") == 0) {
			clip = llm_runlog_train_num(p->rl, "clip");
			clip = clip > 0 ? clip : NAN;
			snprintf(label, sizeof label, "clip threshold %g", clip);
		}
		chart(p, meta[i].id, meta[i].title, one[i], 1, meta[i].log, clip, label, 0);
	}
	numbered(p, "grad_norm_layer_", "grad_norm_layers", "Gradient norm per layer");
	numbered(p, "loss_rank_", "loss_ranks", "Loss per rank");
	for (size_t i = 0; i < llm_runlog_ncols(p->rl); i++) {
		const char *k = llm_runlog_colname(p->rl, i);
		if (known_key(k))
			continue;
		curve c = { k, k, "#1f77b4", 1.2, 0 };
		chart(p, k, k, &c, 1, 0, NAN, NULL, 0);
	}
}

/* ---- sections --------------------------------------------------------------------------- */

/* The last finite value of a curve and its row; NaN when none. */
static double last_value(const page *p, const char *key, size_t *row)
{
	const double *v = llm_runlog_col(p->rl, key);
	for (size_t i = llm_runlog_rows(p->rl); v && i-- > 0;)
		if (isfinite(v[i])) {
			if (row)
				*row = i;
			return v[i];
		}
	return NAN;
}

/* The median of a curve's last 20 finite values. */
static double recent(const page *p, const char *key)
{
	const double *v = llm_runlog_col(p->rl, key);
	double w[20];
	size_t n = 0;
	for (size_t i = llm_runlog_rows(p->rl); v && i-- > 0 && n < 20;)
		if (isfinite(v[i]))
			w[n++] = v[i];
	if (!n)
		return NAN;
	qsort(w, n, sizeof *w, cmp_double);
	return n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
}

static void status(page *p)
{
	llm_buf *b = p->b;
	size_t rows = llm_runlog_rows(p->rl), vr = 0;
	double planned = llm_runlog_train_num(p->rl, "steps");
	llm_buf_adds(b, "<table class=\"status\">\n");
	llm_buf_adds(b, "<tr><th>state</th><td>");
	if (p->o->live) {
		llm_buf_adds(b, "training (");
		escs(b, p->o->live);
		llm_buf_adds(b, ")");
	} else {
		llm_buf_adds(b, "no trainer running");
	}
	llm_buf_adds(b, "</td></tr>\n<tr><th>step</th><td>");
	if (rows)
		llm_buf_addf(b, "%lld", (long long)llm_runlog_steps(p->rl)[rows - 1]);
	else
		llm_buf_adds(b, "none logged yet");
	if (planned > 0)
		llm_buf_addf(b, " of %.0f", planned);
	double step_s = recent(p, "step_s");
	if (p->o->live && rows && planned > 0 && isfinite(step_s)) {
		double left = (planned - (double)llm_runlog_steps(p->rl)[rows - 1]) * step_s;
		if (left > 0) {
			llm_buf_adds(b, " (about ");
			duration(b, left);
			llm_buf_adds(b, " left at the recent pace)");
		}
	}
	llm_buf_adds(b, "</td></tr>\n");
	static const struct {
		const char *key, *label;
	} rowsdef[] = {
		{ "tokens", "tokens trained on" }, { "loss", "loss" }, { "smoothed_loss", "smoothed loss" },
	};
	for (size_t i = 0; i < sizeof rowsdef / sizeof *rowsdef; i++) {
		double v = last_value(p, rowsdef[i].key, NULL);
		if (!isfinite(v))
			continue;
		llm_buf_addf(b, "<tr><th>%s</th><td>", rowsdef[i].label);
		num(b, v);
		llm_buf_adds(b, "</td></tr>\n");
	}
	double vl = last_value(p, "val_loss", &vr);
	if (isfinite(vl)) {
		llm_buf_adds(b, "<tr><th>validation loss</th><td>");
		num(b, vl);
		llm_buf_addf(b, " (perplexity %.4g) at step %lld</td></tr>\n", exp(vl),
		             (long long)llm_runlog_steps(p->rl)[vr]);
	}
	double tps = recent(p, "tokens_per_s"), mfu = recent(p, "mfu");
	if (isfinite(tps)) {
		llm_buf_adds(b, "<tr><th>tokens/s</th><td>");
		num(b, round(tps));
		if (isfinite(mfu))
			llm_buf_addf(b, ", MFU %.1f%%", 100 * mfu);
		llm_buf_adds(b, " (median of the last 20 steps)</td></tr>\n");
	}
	size_t counts[4] = { 0 };
	static const char *const evn[] = { "nonfinite_skipped", "spike", "rollback", "plateau" };
	for (size_t i = 0; i < llm_runlog_nevents(p->rl); i++)
		for (int k = 0; k < 4; k++)
			counts[k] += strcmp(llm_runlog_event_at(p->rl, i)->name, evn[k]) == 0;
	llm_buf_addf(b, "<tr><th>events</th><td>%zu non-finite steps skipped, %zu spikes, "
	             "%zu rollbacks, %zu learning-rate cuts on a plateau</td></tr>\n",
	             counts[0], counts[1], counts[2], counts[3]);
	llm_buf_adds(b, "</table>\n");
}

static void diagnosis(page *p)
{
	llm_buf *b = p->b;
	llm_buf_adds(b, "<section id=\"diagnosis\"><h2>Diagnosis</h2>\n");
	if (p->f && p->f->n) {
		llm_buf_adds(b, "<ul class=\"findings\">\n");
		for (size_t i = 0; i < p->f->n; i++) {
			const llm_finding *f = &p->f->v[i];
			llm_buf_adds(b, "<li><b>");
			escs(b, f->name);
			if (f->first == f->last)
				llm_buf_addf(b, "</b>, step %lld: ", (long long)f->first);
			else
				llm_buf_addf(b, "</b>, steps %lld-%lld: ", (long long)f->first,
				             (long long)f->last);
			escs(b, f->evidence);
			llm_buf_adds(b, ".<br>Likely cause: ");
			escs(b, f->cause);
			llm_buf_adds(b, ".<br>Check: ");
			escs(b, f->check);
			llm_buf_adds(b, ".</li>\n");
		}
		llm_buf_adds(b, "</ul>\n");
	} else {
		llm_buf_adds(b, "<p>Nothing found by the detectors:</p>\n");
	}
	llm_buf_adds(b, "<p class=\"detectors\">Looked for: ");
	for (const llm_detector *d = llm_detectors; d->fn; d++) {
		llm_buf_addf(b, "%s<i>%s</i> (", d == llm_detectors ? "" : "; ", d->name);
		escs(b, d->pattern);
		llm_buf_adds(b, ")");
	}
	llm_buf_adds(b, ".</p></section>\n");
}

static void events(page *p)
{
	size_t n = llm_runlog_nevents(p->rl);
	if (!n)
		return;
	llm_buf *b = p->b;
	llm_buf_addf(b, "<section id=\"events\"><h2>Events</h2>\n<table><tr><th>step</th><th>event"
	             "</th><th>loss</th><th>batches</th><th>rolled back to</th></tr>\n");
	for (size_t i = 0; i < n && i < 1000; i++) {
		const llm_runlog_event *e = llm_runlog_event_at(p->rl, i);
		llm_buf_addf(b, "<tr><td>%lld</td><td>", (long long)e->step);
		escs(b, e->name);
		llm_buf_adds(b, "</td><td>");
		num(b, e->loss);
		llm_buf_adds(b, "</td><td>");
		for (size_t j = 0; j < e->nbatches && j < 16; j++)
			llm_buf_addf(b, "%s%llu", j ? ", " : "", (unsigned long long)e->batches[j]);
		if (e->nbatches > 16)
			llm_buf_adds(b, ", ...");
		llm_buf_adds(b, "</td><td>");
		if (e->to_step >= 0)
			llm_buf_addf(b, "step %lld", (long long)e->to_step);
		llm_buf_adds(b, "</td></tr>\n");
	}
	if (n > 1000)
		llm_buf_addf(b, "<tr><td colspan=\"5\">and %zu more</td></tr>\n", n - 1000);
	llm_buf_adds(b, "</table></section>\n");
}

static void checkpoints(page *p)
{
	size_t n = llm_runlog_nckpts(p->rl);
	llm_buf *b = p->b;
	llm_buf_adds(b, "<section id=\"checkpoints\"><h2>Checkpoints</h2>\n");
	if (!n) {
		llm_buf_adds(b, "<p>None yet.</p></section>\n");
		return;
	}
	llm_buf_adds(b, "<table><tr><th>checkpoint</th><th>step</th><th>kind</th><th>tokens</th>"
	             "<th>size</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const llm_runlog_ckpt *c = llm_runlog_ckpt_at(p->rl, i);
		llm_buf_adds(b, "<tr><td>ckpt/");
		escs(b, c->name);
		if (c->latest)
			llm_buf_adds(b, " (latest)");
		llm_buf_addf(b, "</td><td>%lld</td><td>%s</td><td>", (long long)c->step,
		             c->full ? "full (resumable)" : "weights only");
		if (c->tokens >= 0)
			llm_buf_addf(b, "%lld", (long long)c->tokens);
		llm_buf_adds(b, "</td><td>");
		bytes(b, (double)c->bytes);
		llm_buf_adds(b, "</td></tr>\n");
	}
	llm_buf_adds(b, "</table></section>\n");
}

/* The chance level of a multiple-choice result per domain: the mean of 1 / choices over the
 * items that llm-eval choice --log-samples wrote beside FILE.json as FILE.samples.jsonl (the
 * pipeline's choice stage does). Domains in order of appearance, "all" last; none when there
 * is no such file. */
typedef struct {
	char **name;
	double *sum;
	uint64_t *n;
	size_t len;
} chance_tab;

static void chance_add(chance_tab *t, const char *name, double x)
{
	size_t i = 0;
	while (i < t->len && strcmp(t->name[i], name) != 0)
		i++;
	if (i == t->len) {
		t->name = llm_realloc(t->name, (t->len + 1) * sizeof *t->name);
		t->sum = llm_realloc(t->sum, (t->len + 1) * sizeof *t->sum);
		t->n = llm_realloc(t->n, (t->len + 1) * sizeof *t->n);
		t->name[i] = llm_strdup(name);
		t->sum[i] = 0;
		t->n[i] = 0;
		t->len++;
	}
	t->sum[i] += x;
	t->n[i]++;
}

static double chance_of(const chance_tab *t, const char *name)
{
	for (size_t i = 0; i < t->len; i++)
		if (strcmp(t->name[i], name) == 0)
			return t->sum[i] / (double)t->n[i];
	return NAN;
}

static void chance_release(chance_tab *t)
{
	for (size_t i = 0; i < t->len; i++)
		free(t->name[i]);
	free(t->name);
	free(t->sum);
	free(t->n);
	*t = (chance_tab){ 0 };
}

static void chance_read(chance_tab *t, const char *json_path)
{
	size_t n = strlen(json_path);
	if (n < 5 || strcmp(json_path + n - 5, ".json") != 0)
		return;
	llm_buf path = LLM_BUF_INIT, dom = LLM_BUF_INIT;
	llm_buf_add(&path, json_path, n - 5);
	llm_buf_adds(&path, ".samples.jsonl");
	llm_reader *r;
	if (access(path.p, F_OK) != 0 || llm_reader_open(&r, path.p) != LLM_OK) {
		llm_buf_release(&path);
		return;
	}
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	char *line;
	size_t len;
	while (llm_reader_line(r, &line, &len) == LLM_OK) {
		const llm_json_val *ch, *d;
		if (llm_json_parse(&rec, line, len) != LLM_OK || !(ch = llm_json_get(&rec, "choices")) ||
		    ch->type != LLM_JSON_ARRAY)
			continue;
		size_t k = 0, it = 0;
		llm_json_val key, val;
		while (llm_json_next(ch, &it, &key, &val) == LLM_OK)
			k++;
		if (!k)
			continue;
		llm_buf_reset(&dom);
		d = llm_json_get(&rec, "domain");
		if (d && llm_json_str(d, &dom) == LLM_OK && dom.p)
			chance_add(t, dom.p, 1.0 / (double)k);
		chance_add(t, "all", 1.0 / (double)k);
	}
	llm_json_rec_release(&rec);
	llm_reader_free(r);
	llm_buf_release(&path);
	llm_buf_release(&dom);
}

/* An llm-eval result: its scalars as a line, then "all" and each domain as rows of the
 * numbers "all" has; for a multiple-choice result the chance level beside the accuracy (when
 * the items are known: chance_read), and a warning on each domain whose validation is one
 * document (its loss is that document's, not the domain's). */
static void eval_file(page *p, const llm_runlog_eval *ev)
{
	llm_buf *b = p->b;
	if (llm_json_parse(&p->rec, ev->json, ev->len) != LLM_OK)
		return;
	llm_buf_adds(b, "<h3>");
	const char *base = strrchr(ev->path, '/');
	escs(b, base ? base + 1 : ev->path);
	llm_buf_adds(b, "</h3>\n<p class=\"meta\">");
	int first = 1;
	for (size_t i = 0; i < p->rec.nfields; i++) {
		const llm_json_field *f = &p->rec.fields[i];
		if (f->val.type == LLM_JSON_OBJECT || f->val.type == LLM_JSON_ARRAY)
			continue;
		llm_buf_adds(b, first ? "" : ", ");
		first = 0;
		json_text(p, &f->key);
		llm_buf_adds(b, " ");
		json_text(p, &f->val);
	}
	llm_buf_adds(b, "</p>\n");
	const llm_json_val *all = llm_json_get(&p->rec, "all"), *doms = llm_json_get(&p->rec, "domains");
	if (!all || all->type != LLM_JSON_OBJECT)
		return;
	/* The columns: the numbers of "all", in its order. */
	llm_json_val cols[32], k, v;
	size_t nc = 0, it = 0;
	while (nc < 32 && llm_json_next(all, &it, &k, &v) == LLM_OK)
		if (v.type == LLM_JSON_NUMBER || v.type == LLM_JSON_NULL)
			cols[nc++] = k;
	chance_tab chance = { 0 };
	if (llm_json_member(all, "acc").type == LLM_JSON_NUMBER)
		chance_read(&chance, ev->path);
	llm_buf_adds(b, "<table><tr><th>domain</th>");
	for (size_t c = 0; c < nc; c++) {
		llm_buf_adds(b, "<th>");
		json_text(p, &cols[c]);
		llm_buf_adds(b, "</th>");
	}
	if (chance.len)
		llm_buf_adds(b, "<th>chance</th>");
	llm_buf_adds(b, "</tr>\n");
	llm_buf one = LLM_BUF_INIT, name = LLM_BUF_INIT;
	size_t nones = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t di = 0;
		llm_json_val dk, dv;
		while (1) {
			if (pass == 0) {
				if (!doms || doms->type != LLM_JSON_OBJECT ||
				    llm_json_next(doms, &di, &dk, &dv) != LLM_OK)
					break;
			} else {
				dv = *all;
			}
			if (dv.type != LLM_JSON_OBJECT)
				continue;
			llm_buf_reset(&name);
			if (pass)
				llm_buf_adds(&name, "all");
			else
				llm_json_str(&dk, &name);
			llm_json_val docs = llm_json_member(&dv, "documents");
			double nd;
			int lone = !pass && docs.type == LLM_JSON_NUMBER && llm_json_num(&docs, &nd) == LLM_OK &&
			           nd == 1;
			llm_buf_adds(b, pass ? "<tr class=\"all\"><td>" : lone ? "<tr class=\"warn\"><td>" :
			                "<tr><td>");
			escs(b, name.p ? name.p : "");
			if (lone) {
				llm_buf_adds(b, " (one document)");
				llm_buf_adds(&one, nones++ ? ", " : "");
				escs(&one, name.p ? name.p : "");
			}
			llm_buf_adds(b, "</td>");
			for (size_t c = 0; c < nc; c++) {
				llm_buf_reset(&p->tmp);
				llm_json_str(&cols[c], &p->tmp);
				llm_json_val x = llm_json_member(&dv, p->tmp.p ? p->tmp.p : "");
				double d;
				llm_buf_adds(b, "<td>");
				if (x.type == LLM_JSON_NUMBER && llm_json_num(&x, &d) == LLM_OK)
					num(b, d);
				else
					llm_buf_adds(b, "-");
				llm_buf_adds(b, "</td>");
			}
			if (chance.len) {
				llm_buf_adds(b, "<td>");
				num(b, chance_of(&chance, name.p ? name.p : ""));
				llm_buf_adds(b, "</td>");
			}
			llm_buf_adds(b, "</tr>\n");
			if (pass)
				break;
		}
	}
	llm_buf_adds(b, "</table>\n");
	if (chance.len)
		llm_buf_adds(b, "<p class=\"meta\">Chance: the accuracy of a uniform guess, the mean of "
		             "1 / choices over the items (from the items scored, FILE.samples.jsonl).</p>\n");
	if (nones)
		llm_buf_addf(b, "<p class=\"warn\">Validated on one document: %s. Such a domain's loss "
		             "and perplexity are those of one text, not of the domain; give it more "
		             "documents, or a larger validation share (llm-shard --val-fraction).</p>\n",
		             one.p);
	llm_buf_release(&one);
	llm_buf_release(&name);
	chance_release(&chance);
}

static void evals(page *p)
{
	size_t n = llm_runlog_nevals(p->rl);
	if (!n)
		return;
	llm_buf_adds(p->b, "<section id=\"evaluation\"><h2>Evaluation</h2>\n");
	for (size_t i = 0; i < n; i++)
		eval_file(p, llm_runlog_eval_at(p->rl, i));
	llm_buf_adds(p->b, "</section>\n");
}

static void object_table(page *p, const char *title, const char *json)
{
	llm_buf *b = p->b;
	if (!json || llm_json_parse(&p->rec, json, strlen(json)) != LLM_OK)
		return;
	llm_buf_adds(b, "<h3>");
	escs(b, title);
	llm_buf_adds(b, "</h3>\n<table class=\"kv\">\n");
	for (size_t i = 0; i < p->rec.nfields; i++) {
		llm_buf_adds(b, "<tr><th>");
		json_text(p, &p->rec.fields[i].key);
		llm_buf_adds(b, "</th><td>");
		json_text(p, &p->rec.fields[i].val);
		llm_buf_adds(b, "</td></tr>\n");
	}
	llm_buf_adds(b, "</table>\n");
}

static void configuration(page *p)
{
	llm_buf *b = p->b;
	int ok;
	const char *h = llm_runlog_manifest_hash(p->rl, &ok);
	const char *train = llm_runlog_train_json(p->rl), *cfg = llm_runlog_config_json(p->rl);
	if (!*h && !train && !cfg)
		return;
	llm_buf_adds(b, "<section id=\"configuration\"><h2>Configuration</h2>\n");
	if (*h) {
		llm_buf_addf(b, "<p>Data manifest hash (XXH3-64): <code>%s</code>", h);
		llm_buf_adds(b, ok == 1 ? "; the run's copy, data-manifest.json, has it.</p>\n" :
		                ok == 0 ? "; <b>the run's copy, data-manifest.json, does not</b>: it "
		                          "changed after the run started.</p>\n" :
		                          "; the run holds no copy to check.</p>\n");
	}
	object_table(p, "train.json (the resolved options)", train);
	object_table(p, "config.json (the model)", cfg);
	llm_buf_adds(b, "</section>\n");
}

static void gauges(page *p)
{
	size_t n = llm_runlog_ngauges(p->rl);
	if (!n)
		return;
	llm_buf *b = p->b;
	llm_buf_adds(b, "<section id=\"prometheus\"><h2>Latest values (metrics.prom)</h2>\n"
	             "<table class=\"kv\">\n");
	for (size_t i = 0; i < n; i++) {
		const llm_runlog_gauge *g = llm_runlog_gauge_at(p->rl, i);
		llm_buf_adds(b, "<tr><th>");
		escs(b, g->name);
		llm_buf_adds(b, "</th><td>");
		num(b, g->value);
		llm_buf_adds(b, "</td></tr>\n");
	}
	llm_buf_adds(b, "</table></section>\n");
}

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;max-width:86em;margin:1.5em auto;padding:0 1em;"
	"color:#222}\n"
	"h1{font-size:1.5em;margin-bottom:.3em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:"
	"1px solid #ddd}h3{font-size:1em;margin-bottom:.3em}\n"
	"table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ddd;padding:2px 8px;"
	"text-align:right;vertical-align:top}td:first-child,th:first-child{text-align:left}\n"
	"table.kv td,table.status td{text-align:left}tr.all td{font-weight:bold}\n"
	".charts{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}\n"
	"svg.chart{background:#fff;border:1px solid #e4e4e4;max-width:100%;height:auto}\n"
	"svg text{font:11px sans-serif}.tick{fill:#444}.title{font-weight:bold;fill:#222}\n"
	".grid{stroke:#eee}.axis{stroke:#999}.curve{fill:none;stroke-linejoin:round}\n"
	".ref{stroke:#d62728;stroke-dasharray:6 3}.band{fill:#7f7f7f;fill-opacity:.18}\n"
	".finding{fill:#ffd54f;fill-opacity:.3}.ckpt{fill:#555}\n"
	".ev-nonfinite{stroke:#d62728;stroke-width:1.5}.ev-spike{stroke:#ff7f0e;"
	"stroke-dasharray:3 2}.ev-rollback{stroke:#555}.ev-plateau{stroke:#9467bd;"
	"stroke-dasharray:1 2}.ev-other{stroke:#8c564b;stroke-dasharray:1 3}\n"
	"ul.findings li{margin-bottom:.6em}.detectors,.meta,footer{color:#666;font-size:.9em}\n"
	"tr.warn td{background:#fff4d6}p.warn{background:#fff4d6;padding:4px 8px}\n"
	"td.why{text-align:left}\n";

/*
 * The page's title: the option's, else the run's directory and what it trains, from
 * train.json: "out/run: a model of 787584 parameters, 600 steps of 8 x 128 tokens".
 */
static void run_title(const llm_runlog *rl, const llm_report_options *o, llm_buf *t)
{
	if (o->title) {
		llm_buf_adds(t, o->title);
		return;
	}
	llm_buf_adds(t, o->pipeline ? o->pipeline : llm_runlog_dir(rl));
	double params = llm_runlog_train_num(rl, "parameters"), steps = llm_runlog_train_num(rl, "steps");
	double batch = llm_runlog_train_num(rl, "batch"), seq = llm_runlog_train_num(rl, "seq_len");
	if (!(params > 0) && !(steps > 0)) {
		llm_buf_adds(t, ": training run");
		return;
	}
	llm_buf_adds(t, ":");
	if (params > 0)
		llm_buf_addf(t, " a model of %.0f parameters", params);
	if (steps > 0) {
		llm_buf_addf(t, "%s %.0f steps", params > 0 ? "," : "", steps);
		if (batch > 0 && seq > 0)
			llm_buf_addf(t, " of %.0f x %.0f tokens", batch, seq);
	}
}

void llm_report_html(const llm_runlog *rl, const llm_findings *findings,
                     const llm_report_options *o, llm_buf *out)
{
	page p = { .b = out, .rl = rl, .o = o, .f = findings };
	llm_json_rec_init(&p.rec);
	size_t rows = llm_runlog_rows(rl);
	if (rows) {
		p.x0 = llm_runlog_steps(rl)[0];
		p.x1 = llm_runlog_steps(rl)[rows - 1];
	}
	if (p.x1 <= p.x0)
		p.x1 = p.x0 + 1;
	llm_buf title = LLM_BUF_INIT;
	run_title(rl, o, &title);
	llm_buf_adds(out, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
	if (o->refresh > 0)
		llm_buf_addf(out, "<meta http-equiv=\"refresh\" content=\"%d\">\n", o->refresh);
	llm_buf_adds(out, "<title>");
	escs(out, title.p);
	llm_buf_addf(out, "</title>\n<style>\n%s</style></head><body>\n<h1>", css);
	escs(out, title.p);
	llm_buf_adds(out, "</h1>\n");
	llm_buf_release(&title);
	if (o->pipeline) {
		llm_reportpipe_html(o->pipeline, out);
		llm_buf_adds(out, "<h2 class=\"run\">The training run: ");
		escs(out, llm_runlog_dir(rl));
		llm_buf_adds(out, "</h2>\n");
	}
	status(&p);
	diagnosis(&p);
	llm_buf_adds(out, "<section id=\"curves\"><h2>Curves</h2>\n");
	if (rows) {
		llm_buf_adds(out, "<div class=\"charts\">\n");
		charts(&p);
		llm_buf_adds(out, "</div>\n");
		if (p.constant.len)
			llm_buf_addf(out, "<p class=\"meta\">The same at every step: %s.</p>\n",
			             p.constant.p);
	} else {
		llm_buf_adds(out, "<p>No step logged yet.</p>\n");
	}
	llm_buf_adds(out, "</section>\n");
	events(&p);
	evals(&p);
	checkpoints(&p);
	configuration(&p);
	gauges(&p);
	llm_buf_adds(out, "<footer><p>Written by llm-report");
#ifdef LLM_VERSION
	llm_buf_adds(out, " " LLM_VERSION);
#endif
	llm_buf_addf(out, " from %zu logged steps", rows);
	if (*llm_runlog_source(rl)) {
		llm_buf_adds(out, " of ");
		escs(out, llm_runlog_source(rl));
	}
	if (llm_runlog_bad_lines(rl))
		llm_buf_addf(out, " (%llu malformed lines skipped)",
		             (unsigned long long)llm_runlog_bad_lines(rl));
	llm_buf_adds(out, ".</p></footer>\n</body></html>\n");
	llm_json_rec_release(&p.rec);
	llm_buf_release(&p.tmp);
	llm_buf_release(&p.constant);
}

int llm_report_write(const llm_runlog *rl, const llm_report_options *o, const char *path,
                     size_t *nfound)
{
	llm_findings f;
	llm_findings_init(&f);
	size_t n = llm_diagnose(rl, &f);
	llm_buf html = LLM_BUF_INIT;
	llm_report_html(rl, &f, o, &html);
	int rc = llm_write_file(path, html.p, html.len);
	llm_buf_release(&html);
	llm_findings_release(&f);
	if (nfound)
		*nfound = n;
	return rc;
}
