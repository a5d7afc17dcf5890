/*
 * diagnose.c — the detectors of diagnose.h.
 *
 * Shared habits: a detector takes the finite values of a curve in row order, measures levels
 * with medians (a spike or a skipped step moves a median by one place, a mean by its size)
 * and noise as 1.4826 x the median absolute deviation (the standard deviation for Gaussian
 * noise, unmoved by outliers), and asks for evidence many times that noise, so that healthy
 * runs of every size stay quiet. Thresholds are written beside the test they belong to.
 */
#include "diagnose.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

void llm_findings_init(llm_findings *f) { *f = (llm_findings){ 0 }; }

void llm_findings_release(llm_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].evidence);
		free(f->v[i].cause);
		free(f->v[i].check);
	}
	free(f->v);
	*f = (llm_findings){ 0 };
}

static char *vformat(const char *fmt, va_list ap)
{
	llm_buf b = LLM_BUF_INIT;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	llm_buf_grow(&b, (size_t)n);
	vsnprintf(b.p, (size_t)n + 1, fmt, ap);
	b.len = (size_t)n;
	return llm_buf_detach(&b, NULL);
}

/* A finding; evidence is the caller's (malloc'd), check is formatted. */
__attribute__((format(printf, 7, 8)))
static int found(llm_findings *out, const char *name, int64_t first, int64_t last,
                 char *evidence, const char *cause, const char *check_fmt, ...)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 8;
		out->v = llm_realloc(out->v, out->cap * sizeof *out->v);
	}
	va_list ap;
	va_start(ap, check_fmt);
	out->v[out->n++] = (llm_finding){ name, first, last, evidence, llm_strdup(cause),
	                                  vformat(check_fmt, ap) };
	va_end(ap);
	return 1;
}

__attribute__((format(printf, 1, 2)))
static char *format(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vformat(fmt, ap);
	va_end(ap);
	return s;
}

void llm_finding_format(const llm_finding *f, llm_buf *out)
{
	if (f->first == f->last)
		llm_buf_addf(out, "step %lld: ", (long long)f->first);
	else
		llm_buf_addf(out, "steps %lld-%lld: ", (long long)f->first, (long long)f->last);
	llm_buf_addf(out, "%s: %s; likely: %s; check: %s", f->name, f->evidence, f->cause, f->check);
}

/* ---- robust statistics ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of a[0..n) (reordered); NaN when n is 0. */
static double median(double *a, size_t n)
{
	if (!n)
		return NAN;
	qsort(a, n, sizeof *a, cmp_double);
	return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

/* The median of x[lo..hi), without reordering x; tmp holds hi - lo doubles. */
static double median_of(const double *x, size_t lo, size_t hi, double *tmp)
{
	memcpy(tmp, x + lo, (hi - lo) * sizeof *x);
	return median(tmp, hi - lo);
}

/* 1.4826 x the median absolute deviation of x[0..n) from its median: a standard deviation
 * that outliers do not move. */
static double robust_sigma(const double *x, size_t n)
{
	double *t = llm_malloc((n ? n : 1) * sizeof *t);
	memcpy(t, x, n * sizeof *t);
	double m = median(t, n);
	for (size_t i = 0; i < n; i++)
		t[i] = fabs(x[i] - m);
	double s = 1.4826 * median(t, n);
	free(t);
	return s;
}

/* A value and its row: rows sorted by value, then by row, so that each has a rank of its own. */
typedef struct {
	double v;
	size_t row;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	return x->v < y->v ? -1 : x->v > y->v ? 1 : (x->row > y->row) - (x->row < y->row);
}

/* A Fenwick tree over ranks 1..n counting the ranks a window holds: d = 1 in, -1 out. */
static void fen_add(size_t *t, size_t n, size_t r, int d)
{
	for (; r <= n; r += r & -r)
		t[r] += (size_t)d; /* wraps to a decrement for d = -1 */
}

/* The rank of the k-th smallest (from 0) in the window; top is the highest power of 2 <= n. */
static size_t fen_kth(const size_t *t, size_t n, size_t top, size_t k)
{
	size_t r = 0;
	for (size_t b = top; b; b >>= 1)
		if (r + b <= n && t[r + b] <= k) {
			r += b;
			k -= t[r];
		}
	return r + 1;
}

/*
 * out[i]: the median of x over [i - h, i + h], clipped to [0, n); x finite. The rows are
 * ranked once (a sort), and the window is a Fenwick tree of the ranks it holds: a row in, a
 * row out and the middle ranks found in O(log n) each, so that the whole curve costs
 * O(n log n) whatever h is. Keeping the window sorted costs O(h) a row, which made the
 * rows / 50 window of late_climb quadratic in the run's length.
 */
static void rolling_median(const double *x, size_t n, size_t h, double *out)
{
	if (!n)
		return;
	ranked *by = llm_malloc(n * sizeof *by);
	size_t *rank = llm_malloc(n * sizeof *rank), *t = llm_calloc(n + 1, sizeof *t);
	for (size_t i = 0; i < n; i++)
		by[i] = (ranked){ x[i], i };
	qsort(by, n, sizeof *by, cmp_ranked);
	for (size_t r = 0; r < n; r++)
		rank[by[r].row] = r + 1;
	size_t top = 1, in = 0, gone = 0;
	while (2 * top <= n)
		top *= 2;
	for (size_t i = 0; i < n; i++) {
		size_t lo = i > h ? i - h : 0, hi = i + h + 1 < n ? i + h + 1 : n, m = hi - lo;
		for (; in < hi; in++)
			fen_add(t, n, rank[in], 1);
		for (; gone < lo; gone++)
			fen_add(t, n, rank[gone], -1);
		double mid = by[fen_kth(t, n, top, m / 2) - 1].v;
		out[i] = m % 2 ? mid : 0.5 * (by[fen_kth(t, n, top, m / 2 - 1) - 1].v + mid);
	}
	free(by);
	free(rank);
	free(t);
}

/* The finite values of a curve, with their steps and rows. */
typedef struct {
	size_t n;
	double *x;
	int64_t *step;
	size_t *row;
} series;

static void series_release(series *s)
{
	free(s->x);
	free(s->step);
	free(s->row);
}

/* 0 (and an empty series) when the curve is absent. */
static int finite_series(const llm_runlog *rl, const char *key, series *s)
{
	*s = (series){ 0 };
	const double *v = llm_runlog_col(rl, key);
	size_t rows = llm_runlog_rows(rl);
	if (!v)
		return 0;
	const int64_t *st = llm_runlog_steps(rl);
	s->x = llm_malloc(rows * sizeof *s->x);
	s->step = llm_malloc(rows * sizeof *s->step);
	s->row = llm_malloc(rows * sizeof *s->row);
	for (size_t i = 0; i < rows; i++)
		if (isfinite(v[i])) {
			s->x[s->n] = v[i];
			s->step[s->n] = st[i];
			s->row[s->n++] = i;
		}
	return 1;
}

/* "50, 100, 150 and 8 more" */
static void list_steps(llm_buf *b, const int64_t *steps, size_t n, size_t shown)
{
	for (size_t i = 0; i < n && i < shown; i++)
		llm_buf_addf(b, "%s%lld", i ? ", " : "", (long long)steps[i]);
	if (n > shown)
		llm_buf_addf(b, " and %zu more", n - shown);
}

/* The value of a curve at a row (NaN when it has none there). */
static double at(const llm_runlog *rl, const char *key, size_t row)
{
	const double *v = llm_runlog_col(rl, key);
	return v && row < llm_runlog_rows(rl) ? v[row] : NAN;
}

/* ---- stair_steps ------------------------------------------------------------------------ */

/*
 * A stair is a drop of the loss's level that stays. Level shifts are measured at every row as
 * the median of the W rows before minus the median of the W rows from it on; the descent of a
 * healthy run shifts every row alike, so each shift is compared with the median shift around
 * it (the local trend), and a drop is a shift above it by 6 robust sigmas that is the largest
 * within W rows. Drops are stairs when at least 3 lie on one comb of period P (within P/25),
 * and at least 70% of the comb's teeth in the run hold one.
 *
 * Combs are anchored at a drop with the period of the gap to one of the next STAIR_NEXT drops:
 * consecutive stairs are near neighbours among the drops (noise seldom passes 6 sigmas), and a
 * gap of several periods only makes a comb with fewer teeth. Each comb (period and phase) is
 * tried once, smallest periods first, and gives up as soon as it cannot pass or beat the best;
 * the teeth looked at are at most STAIR_BUDGET a row, so that even a run whose every few rows
 * hold a drop costs time linear in its length.
 */
#define STAIR_W 5
#define STAIR_TREND 25
#define STAIR_NEXT 8
#define STAIR_BUDGET 64

typedef struct {
	size_t p, phase, anchor; /* anchor: the drop's row */
} stair_comb;

static int cmp_comb(const void *a, const void *b)
{
	const stair_comb *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	if (x->phase != y->phase)
		return x->phase < y->phase ? -1 : 1;
	return (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

/*
 * The comb of drops drop[0..nd) (rows, ascending, within [lo, hi)) that holds the most:
 * *p, *anchor and its hits; ties go to the smaller period, then the earlier anchor. before[r]:
 * the drops at rows below r, for r in [0, hi]. 0 when no comb holds 3 drops and 70% of its
 * teeth.
 */
static size_t stair_best_comb(const size_t *drop, size_t nd, const size_t *before, size_t lo,
                              size_t hi, size_t w, size_t *best_p, size_t *best_anchor)
{
	stair_comb *c = llm_malloc((nd * STAIR_NEXT + 1) * sizeof *c);
	size_t nc = 0, best_hits = 0;
	for (size_t a = 0; a < nd; a++)
		for (size_t b = a + 1; b < nd && b <= a + STAIR_NEXT; b++) {
			size_t p = drop[b] - drop[a];
			if (p >= 2 * w + 2)
				c[nc++] = (stair_comb){ p, drop[a] % p, drop[a] };
		}
	qsort(c, nc, sizeof *c, cmp_comb);
	uint64_t budget = (uint64_t)STAIR_BUDGET * (hi - lo) + 4096;
	*best_p = *best_anchor = 0;
	for (size_t i = 0; i < nc && budget; i++) {
		if (i && c[i].p == c[i - 1].p && c[i].phase == c[i - 1].phase)
			continue; /* the same teeth; the earlier anchor came first */
		size_t p = c[i].p, tol = p / 25 > 1 ? p / 25 : 1;
		size_t t0 = c[i].phase >= lo ? c[i].phase : c[i].phase + (lo - c[i].phase + p - 1) / p * p;
		size_t teeth = t0 < hi ? (hi - 1 - t0) / p + 1 : 0;
		size_t need = (7 * teeth + 9) / 10;
		need = need > 3 ? need : 3;
		need = need > best_hits ? need : best_hits;
		if (teeth < need)
			continue;
		size_t hits = 0, left = teeth;
		for (size_t t = t0; t < hi && hits + left >= need && budget; t += p, left--, budget--) {
			size_t from = t > tol ? t - tol : 0, to = t + tol + 1 < hi ? t + tol + 1 : hi;
			hits += before[to] > before[from];
		}
		if (left || hits < need)
			continue; /* could not pass, or not beat the best (or the budget ran out) */
		if (hits > best_hits || (p == *best_p && c[i].anchor < *best_anchor))
			best_hits = hits, *best_p = p, *best_anchor = c[i].anchor;
	}
	free(c);
	return best_hits;
}

int llm_diagnose_stair_steps(const llm_runlog *rl, llm_findings *out)
{
	series s;
	finite_series(rl, "loss", &s);
	size_t n = s.n, w = STAIR_W;
	if (n < 12 * w) {
		series_release(&s);
		return 0;
	}
	double *shift = llm_malloc(n * sizeof *shift), *trend = llm_malloc(n * sizeof *trend);
	double *tmp = llm_malloc(w * sizeof *tmp), *res = llm_malloc(n * sizeof *res);
	size_t lo = w, hi = n - w + 1, m = hi - lo; /* rows with W before and W after */
	for (size_t i = lo; i < hi; i++)
		shift[i] = median_of(s.x, i - w, i, tmp) - median_of(s.x, i, i + w, tmp);
	rolling_median(shift + lo, m, STAIR_TREND, trend + lo);
	double mean_abs = 0;
	for (size_t i = lo; i < hi; i++) {
		res[i - lo] = shift[i] - trend[i];
		mean_abs += fabs(res[i - lo]) / (double)m;
	}
	/* Half the residuals exactly 0 (a smooth curve logged with few digits) leaves the median
	 * absolute deviation 0, and every rounding a "drop" of infinite sigmas: the mean absolute
	 * deviation (x 1.2533, a standard deviation for Gaussian noise) still measures it. */
	double sigma = robust_sigma(res, m);
	if (sigma == 0)
		sigma = 1.2533 * mean_abs;
	size_t *drop = llm_malloc(m * sizeof *drop), nd = 0;
	for (size_t i = lo; i < hi; i++) {
		double r = shift[i] - trend[i];
		if (!(r > 6 * sigma) || shift[i] <= 0)
			continue;
		int peak = 1;
		for (size_t j = i > lo + w ? i - w : lo; j < hi && j <= i + w && peak; j++)
			if (j != i && (shift[j] - trend[j] > r || (shift[j] - trend[j] == r && j < i)))
				peak = 0;
		if (peak)
			drop[nd++] = i;
	}
	size_t *before = llm_malloc((hi + 1) * sizeof *before);
	for (size_t r = 0, d = 0; r <= hi; r++) {
		while (d < nd && drop[d] < r)
			d++;
		before[r] = d;
	}
	size_t best_p, best_anchor;
	size_t best_hits = stair_best_comb(drop, nd, before, lo, hi, w, &best_p, &best_anchor);
	free(before);
	int ret = 0;
	if (best_hits) {
		size_t tol = best_p / 25 > 1 ? best_p / 25 : 1, k = 0, d = 0;
		int64_t *at_step = llm_malloc(best_hits * sizeof *at_step);
		double sum = 0;
		for (size_t t = best_anchor % best_p; t < hi; t += best_p) {
			while (d < nd && drop[d] + tol < t)
				d++;
			if (t >= lo && d < nd && drop[d] <= t + tol && k < best_hits) {
				at_step[k++] = s.step[drop[d]];
				sum += shift[drop[d]];
			}
		}
		double mean = sum / (double)k;
		int64_t period = (at_step[k - 1] - at_step[0]) / (int64_t)(k > 1 ? k - 1 : 1);
		llm_buf e = LLM_BUF_INIT;
		llm_buf_addf(&e, "the loss drops by %.3g on average (%.0f times its noise) at steps ",
		             mean, sigma > 0 ? mean / sigma : INFINITY);
		list_steps(&e, at_step, k, 6);
		llm_buf_addf(&e, ": every %lld steps", (long long)period);
		/* A period of one pass over the train split says the data repeats by epoch. */
		double tok = llm_runlog_train_num(rl, "batch") * llm_runlog_train_num(rl, "seq_len") *
		             llm_runlog_train_num(rl, "accum") * llm_runlog_train_num(rl, "world_size");
		double split = llm_runlog_train_num(rl, "train_tokens");
		if (tok > 0 && split > 0)
			llm_buf_addf(&e, " (%.3g tokens, %.2g passes over the train split's %.3g)",
			             tok * (double)period, tok * (double)period / split, split);
		ret = found(out, "stair_steps", at_step[0], at_step[k - 1], llm_buf_detach(&e, NULL),
		            "the data loader repeats batches (a sampler re-seeded at each epoch or "
		            "resume)",
		            "the data order between the drops: batch_id in metrics.jsonl must not repeat, "
		            "and data_rng in the state.json of checkpoints %lld steps apart must differ; "
		            "deduplicate the data (llm-dedup) if documents repeat", (long long)period);
		free(at_step);
	}
	free(drop);
	free(shift);
	free(trend);
	free(tmp);
	free(res);
	series_release(&s);
	return ret;
}

/* ---- sawtooth --------------------------------------------------------------------------- */

/*
 * Over the last 2000 rows (the first tenth of the run left out), the loss minus its rolling
 * median (2 P_MAX + 1 rows: the trend) is a saw-tooth of period P when its autocorrelation at
 * lag P is high (0.3, and 4 standard errors of white noise) and above every shorter lag by
 * 0.25: a trend left over correlates most at lag 1, a saw-tooth at its period.
 */
#define SAW_MAX_P 32
#define SAW_WINDOW 2000

int llm_diagnose_sawtooth(const llm_runlog *rl, llm_findings *out)
{
	series s;
	finite_series(rl, "loss", &s);
	size_t start = s.n / 10;
	if (s.n - start > SAW_WINDOW)
		start = s.n - SAW_WINDOW;
	size_t w = s.n - start;
	if (w < 96) {
		series_release(&s);
		return 0;
	}
	size_t pmax = w / 8 < SAW_MAX_P ? w / 8 : SAW_MAX_P;
	const double *x = s.x + start;
	double *r = llm_malloc(w * sizeof *r);
	rolling_median(x, w, pmax, r);
	double var = 0;
	for (size_t i = 0; i < w; i++) {
		r[i] = x[i] - r[i];
		var += r[i] * r[i];
	}
	double acf[SAW_MAX_P + 1] = { 0 }, best = 0;
	for (size_t k = 1; k <= pmax; k++) {
		double c = 0;
		for (size_t i = 0; i + k < w; i++)
			c += r[i] * r[i + k];
		acf[k] = var > 0 ? c / var : 0;
		if (k >= 2 && acf[k] > best)
			best = acf[k];
	}
	size_t p = 0;
	for (size_t k = 2; k <= pmax && !p; k++)
		if (acf[k] >= 0.8 * best)
			p = k;
	double shorter = -1;
	for (size_t k = 1; k < p; k++)
		shorter = acf[k] > shorter ? acf[k] : shorter;
	int ret = 0;
	if (p && acf[p] >= 0.3 && acf[p] >= 4 / sqrt((double)w) && acf[p] - shorter >= 0.25) {
		/* The mean shape of one period, for its amplitude. */
		double prof[SAW_MAX_P] = { 0 }, lo = INFINITY, hi = -INFINITY;
		size_t cnt[SAW_MAX_P] = { 0 };
		for (size_t i = 0; i < w; i++) {
			prof[i % p] += r[i];
			cnt[i % p]++;
		}
		for (size_t k = 0; k < p; k++) {
			prof[k] /= (double)cnt[k];
			lo = prof[k] < lo ? prof[k] : lo;
			hi = prof[k] > hi ? prof[k] : hi;
		}
		llm_buf e = LLM_BUF_INIT;
		llm_buf_addf(&e, "the loss oscillates by +/-%.3g with a period of %zu steps "
		             "(autocorrelation %.2f at lag %zu)", (hi - lo) / 2, p, acf[p], p);
		double accum = llm_runlog_train_num(rl, "accum"), clip = llm_runlog_train_num(rl, "clip");
		if (accum >= 1)
			llm_buf_addf(&e, ", %s the accumulation of %.0f micro-batches",
			             fmod((double)p, accum) == 0 || fmod(accum, (double)p) == 0 ?
			             "a multiple or divisor of" : "beside", accum);
		series c;
		if (finite_series(rl, "clip_factor", &c) && c.n) {
			size_t clipped = 0, all = 0;
			for (size_t i = 0; i < c.n; i++)
				if (c.step[i] >= s.step[start]) {
					all++;
					clipped += c.x[i] < 1;
				}
			if (all)
				llm_buf_addf(&e, "; the gradient was clipped on %.0f%% of these steps",
				             100.0 * (double)clipped / (double)all);
		}
		series_release(&c);
		if (clip > 0)
			llm_buf_addf(&e, " (clip %.3g)", clip);
		ret = found(out, "sawtooth", s.step[start], s.step[s.n - 1], llm_buf_detach(&e, NULL),
		            "a clip threshold too small for the gradient (or a cycle in the batches)",
		            "grad_norm against the clip threshold over %zu steps; rerun a stretch with "
		            "--clip above the median grad_norm, and with --accum 1", p);
	}
	free(r);
	series_release(&s);
	return ret;
}

/* ---- late_climb ------------------------------------------------------------------------- */

/*
 * The loss's rolling median (half-width H = rows / 50) reaches its low after the first 30% of
 * the run and then climbs to the end, over at least a tenth of it: by 6 standard errors of
 * that median and 2% of the low, mostly upwards (70% of the steps of H rows rise). A collapse
 * is a value that is not finite after the low, or one in the last 5% of rows above the low by
 * three times the climb.
 */
int llm_diagnose_late_climb(const llm_runlog *rl, llm_findings *out)
{
	series s;
	finite_series(rl, "loss", &s);
	size_t n = s.n;
	if (n < 100) {
		series_release(&s);
		return 0;
	}
	size_t h = n / 50 > 5 ? n / 50 : 5;
	double *sm = llm_malloc(n * sizeof *sm), *res = llm_malloc(n * sizeof *res);
	rolling_median(s.x, n, h, sm);
	for (size_t i = 0; i < n; i++)
		res[i] = s.x[i] - sm[i];
	double sigma = robust_sigma(res, n), se = 1.25 * sigma / sqrt((double)(2 * h + 1));
	size_t end = n - 1 - h, low = h;
	for (size_t i = h; i <= end; i++)
		if (sm[i] < sm[low])
			low = i;
	double rise = sm[end] - sm[low];
	size_t ups = 0, hops = 0;
	for (size_t i = low; i + h <= end; i += h, hops++)
		ups += sm[i + h] > sm[i];
	int ret = 0;
	if (10 * low >= 3 * n && end - low >= (n / 10 > 10 ? n / 10 : 10) && rise > 6 * se &&
	    rise > 0.02 * sm[low] && hops >= 3 && 10 * ups >= 7 * hops) {
		llm_buf e = LLM_BUF_INIT;
		llm_buf_addf(&e, "the loss climbs from its low of %.4g at step %lld to %.4g at step "
		             "%lld (+%.2g%%)", sm[low], (long long)s.step[low], sm[end],
		             (long long)s.step[end], 100 * rise / sm[low]);
		/* A collapse after the climb. */
		const double *loss = llm_runlog_col(rl, "loss");
		int64_t bad = -1;
		for (size_t i = s.row[low]; loss && i < llm_runlog_rows(rl) && bad < 0; i++)
			if (isinf(loss[i]))
				bad = llm_runlog_steps(rl)[i];
		for (size_t i = n - n / 20; bad < 0 && i < n; i++)
			if (s.x[i] > sm[low] + 3 * rise)
				bad = s.step[i];
		if (bad >= 0)
			llm_buf_addf(&e, ", then collapses at step %lld", (long long)bad);
		series lr;
		if (finite_series(rl, "lr", &lr) && lr.n) {
			double peak = 0, now = NAN;
			for (size_t i = 0; i < lr.n; i++) {
				peak = lr.x[i] > peak ? lr.x[i] : peak;
				if (lr.step[i] <= s.step[low])
					now = lr.x[i];
			}
			if (isfinite(now) && peak > 0)
				llm_buf_addf(&e, "; the learning rate there was %.3g, %.0f%% of its peak %.3g",
				             now, 100 * now / peak, peak);
		}
		series_release(&lr);
		ret = found(out, "late_climb", s.step[low], bad >= 0 ? bad : s.step[end],
		            llm_buf_detach(&e, NULL),
		            "the learning rate decays too slowly: it stays high while the loss is near "
		            "its floor",
		            "the lr curve from step %lld on; resume from the checkpoint before it with a "
		            "lower --min-lr or an earlier --decay-steps", (long long)s.step[low]);
	}
	free(sm);
	free(res);
	series_release(&s);
	return ret;
}

/* ---- divergence ------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Steps whose loss or gradient is not finite: the rows that log an infinite loss and the
 * nonfinite_skipped events. Named with their batch ids (the events', else the rows'
 * batch_id), and with what came before: a plateau (the median of the last third of the 50
 * rows before within 2% of the first third's) or a climb (above it by 10%).
 */
int llm_diagnose_divergence(const llm_runlog *rl, llm_findings *out)
{
	size_t rows = llm_runlog_rows(rl), nev = llm_runlog_nevents(rl), nb = 0, cap = 16, nbad = 0;
	const double *loss = llm_runlog_col(rl, "loss");
	const int64_t *st = llm_runlog_steps(rl);
	int64_t *bad = llm_malloc((rows + nev + 1) * sizeof *bad);
	uint64_t *batches = llm_malloc(cap * sizeof *batches);
	for (size_t i = 0; loss && i < rows; i++)
		if (isinf(loss[i]))
			bad[nbad++] = st[i];
	for (size_t i = 0; i < nev; i++) {
		const llm_runlog_event *e = llm_runlog_event_at(rl, i);
		if (strcmp(e->name, "nonfinite_skipped") != 0)
			continue;
		bad[nbad++] = e->step;
		for (size_t j = 0; j < e->nbatches; j++) {
			if (nb == cap)
				batches = llm_realloc(batches, (cap *= 2) * sizeof *batches);
			batches[nb++] = e->batches[j];
		}
	}
	qsort(bad, nbad, sizeof *bad, cmp_i64);
	size_t u = 0;
	for (size_t i = 0; i < nbad; i++)
		if (!u || bad[i] != bad[u - 1])
			bad[u++] = bad[i];
	nbad = u;
	int ret = 0;
	if (nbad) {
		int64_t first = bad[0], last = bad[nbad - 1];
		llm_buf e = LLM_BUF_INIT, ids = LLM_BUF_INIT;
		/* The batch ids from the rows when no event gave them: a step trains on
		 * accum x world_size batches from its batch_id on. */
		if (!nb) {
			double per = llm_runlog_train_num(rl, "accum") * llm_runlog_train_num(rl, "world_size");
			per = per >= 1 ? per : 1;
			for (size_t i = 0; i < rows && nb < 64; i++) {
				double b = at(rl, "batch_id", i);
				if (!bsearch(&st[i], bad, nbad, sizeof *bad, cmp_i64) || !isfinite(b) || b < 0)
					continue;
				for (double k = 0; k < per && nb < 64; k++) {
					if (nb == cap)
						batches = llm_realloc(batches, (cap *= 2) * sizeof *batches);
					batches[nb++] = (uint64_t)(b + k);
				}
			}
		}
		for (size_t i = 0; i < nb && i < 8; i++)
			llm_buf_addf(&ids, "%s%llu", i ? "," : "", (unsigned long long)batches[i]);
		llm_buf_addf(&e, "%zu step%s with a loss or gradient that is not finite, first at step "
		             "%lld", nbad, nbad == 1 ? "" : "s", (long long)first);
		/* What came before. */
		series s;
		finite_series(rl, "loss", &s);
		size_t k = 0;
		while (k < s.n && s.step[k] < first)
			k++;
		if (k >= 12) {
			size_t lo = k > 50 ? k - 50 : 0, third = (k - lo) / 3;
			double *tmp = llm_malloc(third * sizeof *tmp);
			double a = median_of(s.x, lo, lo + third, tmp), b = median_of(s.x, k - third, k, tmp);
			free(tmp);
			if (fabs(b - a) <= 0.02 * fabs(a))
				llm_buf_addf(&e, ", after a plateau at %.4g (steps %lld-%lld)", b,
				             (long long)s.step[lo], (long long)s.step[k - 1]);
			else if (b > 1.1 * a)
				llm_buf_addf(&e, ", after the loss rose from %.4g to %.4g (steps %lld-%lld)",
				             a, b, (long long)s.step[lo], (long long)s.step[k - 1]);
		}
		int64_t after = k < s.n ? s.step[s.n - 1] : -1;
		series_release(&s);
		if (after > last)
			llm_buf_addf(&e, "; the run went on to step %lld", (long long)after);
		else
			llm_buf_addf(&e, "; the loss stayed so to the last step logged");
		if (nb)
			llm_buf_addf(&e, "; batch%s %s%s", nb == 1 ? "" : "es", ids.p, nb > 8 ? ",..." : "");
		if (nb)
			ret = found(out, "divergence", first, last, llm_buf_detach(&e, NULL),
			            "bad tokens in a batch (or an overflow of the loss or gradient)",
			            "the tokens of batch%s %s; resume without them: llm-train --resume "
			            "--skip-batches %s", nb == 1 ? "" : "es", ids.p, ids.p);
		else
			ret = found(out, "divergence", first, last, llm_buf_detach(&e, NULL),
			            "bad tokens in a batch (or an overflow of the loss or gradient)",
			            "the batches of step %lld (the log names no batch ids); resume from "
			            "the checkpoint before it, skipping them", (long long)first);
		llm_buf_release(&ids);
	}
	free(bad);
	free(batches);
	return ret;
}

/* ---- rank_desync ------------------------------------------------------------------------ */

/*
 * loss_rank_R, one curve per data-parallel rank. Ranks train on different batches of one
 * distribution, so their losses differ by noise around the same level; desynchronised ranks
 * (different weights) differ persistently. Over the last 1000 rows where every rank logged,
 * each rank's loss minus the mean of the others' has a mean that is 8 standard errors and 2%
 * of the loss away from zero. Ranks whose losses are equal, bit for bit, on 90% of the rows
 * are drawing the same batches.
 */
#define RANKS_MAX 4096

int llm_diagnose_rank_desync(const llm_runlog *rl, llm_findings *out)
{
	const double *col[RANKS_MAX];
	int R = 0;
	for (; R < RANKS_MAX; R++) {
		char key[32];
		snprintf(key, sizeof key, "loss_rank_%d", R);
		if (!(col[R] = llm_runlog_col(rl, key)))
			break;
	}
	size_t rows = llm_runlog_rows(rl), n = 0, same = 0;
	if (R < 2)
		return 0;
	const int64_t *st = llm_runlog_steps(rl);
	size_t *row = llm_malloc(rows * sizeof *row);
	for (size_t i = 0; i < rows; i++) {
		int ok = 1, eq = 1;
		for (int r = 0; r < R && ok; r++) {
			ok = isfinite(col[r][i]);
			eq = eq && col[r][i] == col[0][i];
		}
		if (ok) {
			row[n++] = i;
			same += eq;
		}
	}
	int ret = 0;
	if (n >= 40 && 10 * same >= 9 * n) {
		ret = found(out, "rank_desync", st[row[0]], st[row[n - 1]],
		            format("the %d ranks logged the same loss, bit for bit, on %zu of %zu steps",
		                   R, same, n),
		            "every rank draws the same batches: the data is not split between the ranks",
		            "the ranks' batch ids: each rank must train on its own micro-batches of the "
		            "global sequence");
	} else if (n >= 40) {
		size_t from = n > 1000 ? n - 1000 : 0, m = n - from;
		double *d = llm_malloc(m * sizeof *d), best_z = 0, best_mean = 0, level = 0;
		int worst = -1;
		for (size_t j = from; j < n; j++)
			for (int r = 0; r < R; r++)
				level += col[r][row[j]] / (double)(R * m);
		for (int r = 0; r < (R == 2 ? 1 : R); r++) {
			double mean = 0, var = 0;
			for (size_t j = 0; j < m; j++) {
				double others = 0;
				for (int q = 0; q < R; q++)
					others += q == r ? 0 : col[q][row[from + j]];
				d[j] = col[r][row[from + j]] - others / (R - 1);
				mean += d[j] / (double)m;
			}
			for (size_t j = 0; j < m; j++)
				var += (d[j] - mean) * (d[j] - mean) / (double)(m - 1);
			double z = var > 0 ? mean / sqrt(var / (double)m) : (mean ? INFINITY : 0);
			if (fabs(z) > fabs(best_z))
				best_z = z, best_mean = mean, worst = r;
		}
		free(d);
		if (worst >= 0 && fabs(best_z) >= 8 && fabs(best_mean) >= 0.02 * fabs(level)) {
			size_t last = row[n - 1];
			double others = 0;
			for (int q = 0; q < R; q++)
				others += q == worst ? 0 : col[q][last] / (R - 1);
			char *ev = R == 2 ?
				format("rank 0's loss is %s rank 1's by %.3g on average over steps %lld-%lld "
				       "(%.0f standard errors); at step %lld: %.4g and %.4g",
				       best_mean > 0 ? "above" : "below", fabs(best_mean),
				       (long long)st[row[from]], (long long)st[last], fabs(best_z),
				       (long long)st[last], col[0][last], col[1][last]) :
				format("rank %d's loss is %s the other ranks' by %.3g on average over steps "
				       "%lld-%lld (%.0f standard errors); at step %lld: %.4g against %.4g",
				       worst, best_mean > 0 ? "above" : "below", fabs(best_mean),
				       (long long)st[row[from]], (long long)st[last], fabs(best_z),
				       (long long)st[last], col[worst][last], others);
			ret = found(out, "rank_desync", st[row[from]], st[last], ev,
			            "data-parallel desynchronisation: the ranks' weights differ (a missed "
			            "all-reduce, or another build or options on one node)",
			            "evaluate the newest checkpoint on each node (llm-eval loss --ckpt "
			            "RUN/ckpt/latest gives one number everywhere) and compare the llm-train "
			            "build and command line of every rank");
		}
	}
	free(row);
	return ret;
}

/* ---- memory_jump ------------------------------------------------------------------------ */

/*
 * After the first rows (allocations settle: 2% of the run, at least 5), a step whose memory
 * (mem_mb) is above every earlier step's by 25% and 64 MiB. The longest sequence of the step
 * names the culprit; on its own a jump of it (twice every earlier one) counts only where
 * sequences are not packed into fixed windows: where they are (seq_len known and the longest
 * within it, as in llm-train), memory does not follow it.
 */
int llm_diagnose_memory_jump(const llm_runlog *rl, llm_findings *out)
{
	size_t rows = llm_runlog_rows(rl), warm = rows / 50 > 5 ? rows / 50 : 5;
	const double *mem = llm_runlog_col(rl, "mem_mb"), *lon = llm_runlog_col(rl, "longest_seq");
	const int64_t *st = llm_runlog_steps(rl);
	double seq = llm_runlog_train_num(rl, "seq_len");
	if ((!mem && !lon) || rows <= warm)
		return 0;
	double mmax = -INFINITY, lmax = -INFINITY, best = 0;
	size_t at_row = 0;
	int why = 0; /* 1 memory, 2 longest sequence */
	for (size_t i = 0; i < rows; i++) {
		double m = mem && isfinite(mem[i]) ? mem[i] : NAN, l = lon && isfinite(lon[i]) ? lon[i] : NAN;
		if (i >= warm && m >= 1.25 * mmax && m - mmax >= 64 && m / mmax > best)
			best = m / mmax, at_row = i, why = 1;
		if (i >= warm && why != 1 && l >= 2 * lmax && l - lmax >= 64 && !(seq > 0 && l <= seq) &&
		    l / lmax > best)
			best = l / lmax, at_row = i, why = 2;
		if (m > mmax)
			mmax = m;
		if (l > lmax)
			lmax = l;
	}
	if (!why)
		return 0;
	size_t i = at_row;
	double pm = -INFINITY, pl = -INFINITY;
	for (size_t j = 0; j < i; j++) {
		if (mem && isfinite(mem[j]) && mem[j] > pm)
			pm = mem[j];
		if (lon && isfinite(lon[j]) && lon[j] > pl)
			pl = lon[j];
	}
	llm_buf e = LLM_BUF_INIT;
	if (why == 1)
		llm_buf_addf(&e, "memory jumps to %.0f MiB (at most %.0f before)", mem[i], pm);
	double l = lon ? lon[i] : NAN, b = at(rl, "batch_id", i), t = at(rl, "step_s", i);
	if (isfinite(l))
		llm_buf_addf(&e, "%sthe longest sequence is %.0f tokens (at most %.0f before)",
		             why == 1 ? "; " : "", l, pl);
	if (isfinite(b))
		llm_buf_addf(&e, ", in batch %.0f", b);
	if (isfinite(t))
		llm_buf_addf(&e, "; the step took %.3g s", t);
	int ret = found(out, "memory_jump", st[i], st[i], llm_buf_detach(&e, NULL),
	                "a long sequence in that step's batch",
	                isfinite(b) ? "the documents of batch %.0f (llm-shard --info shows the longest "
	                "per domain); cut long documents (llm-shard --truncate-quantile) or skip the "
	                "batch (llm-train --skip-batches)" : "the documents of step %.0f's batch; cut "
	                "long documents (llm-shard --truncate-quantile)", isfinite(b) ? b : (double)st[i]);
	return ret;
}

/* ---- overfit ---------------------------------------------------------------------------- */

/*
 * Validation is noisy (few batches, a model that moves), so levels are medians: the low is
 * the least of the 3-evaluation rolling medians (the last one, when several are equal), and
 * at least 3 evaluations come after it; the median of the last third of those (at least 3)
 * is above the low by 1% (and 0.005), the median of all of them by 30% of that rise (a climb,
 * not one late excursion), and meanwhile the training loss (smoothed_loss, else a rolling
 * median) fell by 1%.
 */
int llm_diagnose_overfit(const llm_runlog *rl, llm_findings *out)
{
	series v;
	finite_series(rl, "val_loss", &v);
	size_t n = v.n, low = 0;
	if (n < 5) {
		series_release(&v);
		return 0;
	}
	double *v3 = llm_malloc(n * sizeof *v3), *tmp = llm_malloc((n + 11) * sizeof *tmp);
	rolling_median(v.x, n, 1, v3);
	for (size_t i = 1; i < n; i++)
		if (v3[i] <= v3[low])
			low = i;
	size_t after = n - 1 - low, k = after / 3 > 3 ? after / 3 : 3;
	double tail = NAN, mid = NAN, rise = NAN, t0 = NAN, t1 = NAN;
	if (after >= 3) {
		tail = median_of(v.x, n - k, n, tmp);
		mid = median_of(v.x, low + 1, n, tmp);
		rise = tail - v3[low];
	}
	int ret = 0;
	if (after >= 3 && rise > 0.01 * v3[low] && rise > 0.005 && mid > v3[low] + 0.3 * rise) {
		const double *sm = llm_runlog_col(rl, "smoothed_loss");
		if (sm) {
			t0 = sm[v.row[low]];
			t1 = sm[v.row[n - 1]];
		} else {
			series s;
			finite_series(rl, "loss", &s);
			for (size_t i = 0, seen = 0; i < s.n; i++) {
				size_t lo = i > 5 ? i - 5 : 0, hi = i + 6 < s.n ? i + 6 : s.n;
				if (!seen && s.step[i] >= v.step[low])
					t0 = median_of(s.x, lo, hi, tmp), seen = 1;
				if (s.step[i] <= v.step[n - 1])
					t1 = median_of(s.x, lo, hi, tmp);
			}
			series_release(&s);
		}
	}
	if (isfinite(t0) && isfinite(t1) && t1 < t0 - 0.01 * fabs(t0)) {
		llm_buf e = LLM_BUF_INIT;
		llm_buf_addf(&e, "the validation loss rises from %.4g at step %lld to %.4g over the last "
		             "%zu of the %zu evaluations since (to step %lld; medians) while the training "
		             "loss falls from %.4g to %.4g", v3[low], (long long)v.step[low], tail, k,
		             after, (long long)v.step[n - 1], t0, t1);
		double seen = at(rl, "tokens", v.row[n - 1]), split = llm_runlog_train_num(rl, "train_tokens");
		if (seen > 0 && split > 0)
			llm_buf_addf(&e, "; %.3g tokens trained on, %.2g passes over the train split",
			             seen, seen / split);
		ret = found(out, "overfit", v.step[low], v.step[n - 1], llm_buf_detach(&e, NULL),
		            "overfitting (too many passes over too little data), or train/val leakage",
		            "the decontamination check between the splits: llm-dedup --decontaminate "
		            "val.jsonl --decon-report leaks.jsonl train.jsonl on the documents of each; "
		            "then the checkpoint at step %lld, or more data", (long long)v.step[low]);
	}
	free(v3);
	free(tmp);
	series_release(&v);
	return ret;
}

/* ---- all -------------------------------------------------------------------------------- */

const llm_detector llm_detectors[] = {
	{ "stair_steps", llm_diagnose_stair_steps, "drops of the loss at a fixed period" },
	{ "sawtooth", llm_diagnose_sawtooth, "a short-period oscillation of the loss" },
	{ "late_climb", llm_diagnose_late_climb, "a slow climb of the loss late in the run" },
	{ "divergence", llm_diagnose_divergence, "a loss or gradient that is not finite" },
	{ "rank_desync", llm_diagnose_rank_desync, "ranks whose losses run apart" },
	{ "memory_jump", llm_diagnose_memory_jump, "a step whose memory or longest sequence jumps" },
	{ "overfit", llm_diagnose_overfit, "validation loss rising while training loss falls" },
	{ NULL, NULL, NULL },
};

size_t llm_diagnose(const llm_runlog *rl, llm_findings *out)
{
	size_t n = 0;
	for (const llm_detector *d = llm_detectors; d->fn; d++)
		n += (size_t)d->fn(rl, out);
	return n;
}
