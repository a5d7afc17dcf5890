/*
 * sketch.c — DDSketch with dense buckets (see sketch.h).
 *
 * Bucket i holds (gamma^(i-1), gamma^i] and answers with 2 gamma^i / (gamma + 1), the point
 * whose relative distance to both ends is exactly alpha; that is the whole error analysis.
 * Buckets are dense between the lowest and highest used index: token lengths span a few
 * thousand buckets at most, so the collapsing schemes of the paper (for unbounded ranges)
 * are not needed and merging stays exact.
 */
#include "sketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"

struct llm_sketch {
	double alpha, gamma, lg; /* lg = log(gamma) */
	uint64_t count, zeros;
	double sum, min, max;
	uint64_t *bins;
	long offset;             /* bucket index of bins[0] */
	size_t nbins;
};

static void set_alpha(llm_sketch *s, double alpha)
{
	if (!(alpha > 0 && alpha <= 0.5))
		alpha = LLM_SKETCH_ALPHA;
	s->alpha = alpha;
	s->gamma = (1 + alpha) / (1 - alpha);
	s->lg = log(s->gamma);
}

llm_sketch *llm_sketch_new(double alpha)
{
	llm_sketch *s = llm_calloc(1, sizeof *s);
	set_alpha(s, alpha);
	llm_sketch_clear(s);
	return s;
}

void llm_sketch_free(llm_sketch *s)
{
	if (!s)
		return;
	free(s->bins);
	free(s);
}

void llm_sketch_clear(llm_sketch *s)
{
	free(s->bins);
	s->bins = NULL;
	s->nbins = 0;
	s->offset = 0;
	s->count = s->zeros = 0;
	s->sum = 0;
	s->min = s->max = NAN;
}

static long bucket_of(const llm_sketch *s, double v)
{
	return (long)ceil(log(v) / s->lg);
}

/* Make bucket indices [lo, hi] addressable. */
static void cover(llm_sketch *s, long lo, long hi)
{
	if (s->nbins == 0) {
		s->nbins = (size_t)(hi - lo + 1);
		s->bins = llm_calloc(s->nbins, sizeof *s->bins);
		s->offset = lo;
		return;
	}
	long cur_hi = s->offset + (long)s->nbins - 1;
	long nlo = lo < s->offset ? lo : s->offset, nhi = hi > cur_hi ? hi : cur_hi;
	if (nlo == s->offset && nhi == cur_hi)
		return;
	size_t n = (size_t)(nhi - nlo + 1);
	uint64_t *b = llm_calloc(n, sizeof *b);
	memcpy(b + (s->offset - nlo), s->bins, s->nbins * sizeof *b);
	free(s->bins);
	s->bins = b;
	s->nbins = n;
	s->offset = nlo;
}

static void note_extremes(llm_sketch *s, double lo, double hi)
{
	if (isnan(s->min) || lo < s->min)
		s->min = lo;
	if (isnan(s->max) || hi > s->max)
		s->max = hi;
}

int llm_sketch_add(llm_sketch *s, double v, uint64_t count)
{
	if (!(v == 0 || (v >= LLM_SKETCH_MIN && v <= LLM_SKETCH_MAX)))
		return llm_fail(LLM_EINVAL, "sketch value %g is outside 0 or [%g, %g]", v,
		                LLM_SKETCH_MIN, LLM_SKETCH_MAX);
	if (count == 0)
		return LLM_OK;
	if (v == 0) {
		s->zeros += count;
	} else {
		long i = bucket_of(s, v);
		cover(s, i, i);
		s->bins[i - s->offset] += count;
	}
	s->count += count;
	s->sum += v * (double)count;
	note_extremes(s, v, v);
	return LLM_OK;
}

int llm_sketch_merge(llm_sketch *dst, const llm_sketch *src)
{
	if (dst->alpha != src->alpha)
		return llm_fail(LLM_EINVAL, "cannot merge sketches of accuracy %g and %g", dst->alpha,
		                src->alpha);
	if (src->count == 0)
		return LLM_OK;
	if (src->nbins) {
		cover(dst, src->offset, src->offset + (long)src->nbins - 1);
		for (size_t i = 0; i < src->nbins; i++)
			dst->bins[src->offset - dst->offset + (long)i] += src->bins[i];
	}
	dst->zeros += src->zeros;
	dst->count += src->count;
	dst->sum += src->sum;
	note_extremes(dst, src->min, src->max);
	return LLM_OK;
}

double llm_sketch_alpha(const llm_sketch *s) { return s->alpha; }
uint64_t llm_sketch_count(const llm_sketch *s) { return s->count; }
double llm_sketch_min(const llm_sketch *s) { return s->min; }
double llm_sketch_max(const llm_sketch *s) { return s->max; }

double llm_sketch_quantile(const llm_sketch *s, double q)
{
	if (s->count == 0 || !(q >= 0 && q <= 1))
		return NAN;
	/* Nearest rank, ceil(q n). The shrink by 1e-12 keeps q n = 3.0000000000000004 (0.1 * 30
	 * in binary) at rank 3 instead of 4. */
	double t = ceil(q * (double)s->count * (1 - 1e-12));
	uint64_t rank = t < 1 ? 1 : (uint64_t)t;
	if (rank > s->count)
		rank = s->count;
	if (rank <= s->zeros)
		return 0;
	uint64_t seen = s->zeros;
	double v = s->max;
	for (size_t i = 0; i < s->nbins; i++) {
		seen += s->bins[i];
		if (seen >= rank) {
			v = 2 * pow(s->gamma, (double)(s->offset + (long)i)) / (s->gamma + 1);
			break;
		}
	}
	if (v < s->min)
		v = s->min;
	if (v > s->max)
		v = s->max;
	return v;
}

void llm_sketch_rank(const llm_sketch *s, double x, uint64_t *below, uint64_t *same)
{
	*below = *same = 0;
	if (x == 0) {
		*same = s->zeros;
		return;
	}
	if (!(x >= LLM_SKETCH_MIN && x <= LLM_SKETCH_MAX))
		return;
	long i = bucket_of(s, x);
	uint64_t n = s->zeros;
	for (size_t k = 0; k < s->nbins && s->offset + (long)k < i; k++)
		n += s->bins[k];
	*below = n;
	if (s->nbins && i >= s->offset && i < s->offset + (long)s->nbins)
		*same = s->bins[i - s->offset];
}

void llm_sketch_to_json(const llm_sketch *s, llm_buf *out)
{
	llm_buf_adds(out, "{\"type\": \"ddsketch\", \"alpha\": ");
	llm_json_put_f64(out, s->alpha);
	llm_buf_addf(out, ", \"count\": %llu, \"zeros\": %llu, \"min\": ",
	             (unsigned long long)s->count, (unsigned long long)s->zeros);
	llm_json_put_f64(out, s->min);
	llm_buf_adds(out, ", \"max\": ");
	llm_json_put_f64(out, s->max);
	llm_buf_adds(out, ", \"sum\": ");
	llm_json_put_f64(out, s->sum);
	llm_buf_addf(out, ", \"offset\": %ld, \"bins\": [", s->offset);
	for (size_t i = 0; i < s->nbins; i++)
		llm_buf_addf(out, i ? ", %llu" : "%llu", (unsigned long long)s->bins[i]);
	llm_buf_adds(out, "]}");
}

/* A non-negative integer member of a JSON object value. */
static int get_u64(const llm_json_val *obj, const char *key, uint64_t *out)
{
	llm_json_val v = llm_json_member(obj, key);
	int64_t x;
	if (v.type != LLM_JSON_NUMBER || llm_json_i64(&v, &x) != LLM_OK || x < 0)
		return llm_fail(LLM_EFORMAT, "sketch: '%s' is not a non-negative integer", key);
	*out = (uint64_t)x;
	return LLM_OK;
}

/* A number member, or NaN for null. */
static int get_num(const llm_json_val *obj, const char *key, double *out)
{
	llm_json_val v = llm_json_member(obj, key);
	if (v.type == LLM_JSON_NULL) {
		*out = NAN;
		return LLM_OK;
	}
	if (v.type != LLM_JSON_NUMBER || llm_json_num(&v, out) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "sketch: '%s' is not a number", key);
	return LLM_OK;
}

static int from_val(llm_sketch *s, const llm_json_val *obj)
{
	llm_json_val t = llm_json_member(obj, "type");
	if (t.type != LLM_JSON_STRING || !llm_json_str_eq(&t, "ddsketch"))
		return llm_fail(LLM_EFORMAT, "sketch: 'type' is not \"ddsketch\"");
	double alpha;
	uint64_t count, zeros;
	int64_t offset;
	int st;
	if ((st = get_num(obj, "alpha", &alpha)) || (st = get_u64(obj, "count", &count)) ||
	    (st = get_u64(obj, "zeros", &zeros)) || (st = get_num(obj, "min", &s->min)) ||
	    (st = get_num(obj, "max", &s->max)) || (st = get_num(obj, "sum", &s->sum)))
		return st;
	if (!(alpha > 0 && alpha <= 0.5))
		return llm_fail(LLM_EFORMAT, "sketch: alpha %g is not in (0, 0.5]", alpha);
	set_alpha(s, alpha);
	llm_json_val ov = llm_json_member(obj, "offset");
	if (ov.type != LLM_JSON_NUMBER || llm_json_i64(&ov, &offset) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "sketch: 'offset' is not an integer");
	long lo = bucket_of(s, LLM_SKETCH_MIN), hi = bucket_of(s, LLM_SKETCH_MAX);
	llm_json_val bins = llm_json_member(obj, "bins");
	if (bins.type != LLM_JSON_ARRAY)
		return llm_fail(LLM_EFORMAT, "sketch: 'bins' is not an array");
	size_t it = 0, n = 0;
	llm_json_val key, v;
	while (llm_json_next(&bins, &it, &key, &v) == LLM_OK)
		n++;
	if (n && (offset < lo || offset + (int64_t)n - 1 > hi))
		return llm_fail(LLM_EFORMAT, "sketch: buckets %lld..%lld are outside the value range",
		                (long long)offset, (long long)offset + (long long)n - 1);
	if (n) {
		cover(s, (long)offset, (long)offset + (long)n - 1);
		it = 0;
		for (size_t i = 0; llm_json_next(&bins, &it, &key, &v) == LLM_OK; i++) {
			int64_t c;
			if (v.type != LLM_JSON_NUMBER || llm_json_i64(&v, &c) != LLM_OK || c < 0)
				return llm_fail(LLM_EFORMAT, "sketch: bin %zu is not a count", i);
			s->bins[i] = (uint64_t)c;
		}
	}
	uint64_t total = zeros;
	for (size_t i = 0; i < s->nbins; i++) {
		if (total + s->bins[i] < total)
			return llm_fail(LLM_EFORMAT, "sketch: counts overflow");
		total += s->bins[i];
	}
	if (total != count)
		return llm_fail(LLM_EFORMAT, "sketch: bins add up to %llu, not count %llu",
		                (unsigned long long)total, (unsigned long long)count);
	if (count && !(s->min >= 0 && s->min <= s->max && s->max <= LLM_SKETCH_MAX))
		return llm_fail(LLM_EFORMAT, "sketch: min and max are inconsistent");
	s->count = count;
	s->zeros = zeros;
	if (!count)
		s->min = s->max = NAN;
	return LLM_OK;
}

int llm_sketch_from_json(llm_sketch **out, const char *json, size_t len)
{
	*out = NULL;
	llm_json_val obj;
	size_t pos;
	const char *msg;
	if (llm_json_parse_value(json, len, &obj, &pos, &msg) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "sketch: invalid JSON at byte %zu: %s", pos, msg);
	if (obj.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "sketch: not a JSON object");
	llm_sketch *s = llm_sketch_new(LLM_SKETCH_ALPHA);
	int st = from_val(s, &obj);
	if (st != LLM_OK) {
		llm_sketch_free(s);
		return st;
	}
	*out = s;
	return LLM_OK;
}
