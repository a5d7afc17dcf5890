/*
 * scoresketch.c — named two-sided score sketches and their buckets (see scoresketch.h).
 *
 * Why two sketches: a DDSketch's error is relative to the value, so one sketch of p would
 * resolve 1e-4 from 2e-4 but lump 0.995 to 1.0 into one bucket, which is where a confident
 * classifier puts the documents a selection keeps. Sketching 1 - p (from the top, so that
 * fastText's 1.00001 is the sketch's exact zero) for the upper half mirrors the resolution.
 */
#include "scoresketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "core/sketch.h"

#define FILE_TYPE "llm-score-sketch"
#define FILE_VERSION 1

typedef struct {
	char *name;
	int value;              /* a value score: low holds -v of the negatives, high the others */
	llm_sketch *low, *high; /* scores < 0.5; TOP - score for the others */
} entry;

struct llm_scoresketch {
	entry *v;
	size_t n, cap;
};

llm_scoresketch *llm_scoresketch_new(void)
{
	return llm_calloc(1, sizeof(llm_scoresketch));
}

void llm_scoresketch_free(llm_scoresketch *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->n; i++) {
		free(ss->v[i].name);
		llm_sketch_free(ss->v[i].low);
		llm_sketch_free(ss->v[i].high);
	}
	free(ss->v);
	free(ss);
}

/* Where name sorts: its index when *found, else where it would be inserted. */
static size_t position(const llm_scoresketch *ss, const char *name, size_t len, int *found)
{
	size_t lo = 0, hi = ss->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = ss->v[mid].name;
		size_t ml = strlen(m);
		int c = memcmp(m, name, ml < len ? ml : len);
		if (c == 0)
			c = (ml > len) - (ml < len);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

static entry *get_or_add(llm_scoresketch *ss, const char *name, size_t len, int value)
{
	int found;
	size_t at = position(ss, name, len, &found);
	if (found)
		return &ss->v[at];
	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? 2 * ss->cap : 4;
		ss->v = llm_realloc(ss->v, ss->cap * sizeof *ss->v);
	}
	memmove(ss->v + at + 1, ss->v + at, (ss->n - at) * sizeof *ss->v);
	ss->n++;
	entry *e = &ss->v[at];
	e->name = llm_strndup(name, len);
	e->value = value;
	e->low = llm_sketch_new(LLM_SKETCH_ALPHA);
	e->high = llm_sketch_new(LLM_SKETCH_ALPHA);
	return e;
}

/* The value a score is sketched as in its half, with 1 for the upper half; -1 when it is no
 * score. A distance to the top below the sketch's range is the top itself. */
static double side_value(double v, int *upper)
{
	if (!(v >= 0 && v <= LLM_SCORESKETCH_TOP))
		return -1;
	*upper = v >= 0.5;
	if (!*upper)
		return v < LLM_SKETCH_MIN ? 0 : v;
	double d = LLM_SCORESKETCH_TOP - v;
	return d < LLM_SKETCH_MIN ? 0 : d;
}

/* A value score's magnitude in its half (1: high, v >= 0); -1 when it is no value. */
static double value_side(double v, int *upper)
{
	if (!(fabs(v) <= LLM_SKETCH_MAX))
		return -1;
	*upper = v >= 0;
	double x = fabs(v);
	return x < LLM_SKETCH_MIN ? 0 : x;
}

static int kind_error(const char *name, size_t len, int value)
{
	return llm_fail(LLM_EINVAL, "score '%.*s' is sketched as a %s, not a %s", (int)len, name,
	                value ? "value" : "probability", value ? "probability" : "value");
}

int llm_scoresketch_add(llm_scoresketch *ss, const char *name, size_t len, double v)
{
	int upper;
	double x = side_value(v, &upper);
	if (x < 0)
		return llm_fail(LLM_EINVAL, "score '%.*s' is %g, not a probability in [0, %g]", (int)len,
		                name, v, LLM_SCORESKETCH_TOP);
	entry *e = get_or_add(ss, name, len, 0);
	if (e->value)
		return kind_error(name, len, 1);
	return llm_sketch_add(upper ? e->high : e->low, x, 1);
}

int llm_scoresketch_add_value(llm_scoresketch *ss, const char *name, size_t len, double v)
{
	int upper;
	double x = value_side(v, &upper);
	if (x < 0)
		return llm_fail(LLM_EINVAL, "score '%.*s' is %g, not a number within +-%g", (int)len,
		                name, v, LLM_SKETCH_MAX);
	entry *e = get_or_add(ss, name, len, 1);
	if (!e->value)
		return kind_error(name, len, 0);
	return llm_sketch_add(upper ? e->high : e->low, x, 1);
}

int llm_scoresketch_is_value(const llm_scoresketch *ss, size_t i) { return ss->v[i].value; }

int llm_scoresketch_merge(llm_scoresketch *dst, const llm_scoresketch *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const char *name = src->v[i].name;
		entry *e = get_or_add(dst, name, strlen(name), src->v[i].value);
		if (e->value != src->v[i].value)
			return kind_error(name, strlen(name), e->value);
		int rc = llm_sketch_merge(e->low, src->v[i].low);
		if (rc == LLM_OK)
			rc = llm_sketch_merge(e->high, src->v[i].high);
		if (rc != LLM_OK)
			return llm_fail(rc, "score '%s': %s", e->name, llm_last_error());
	}
	return LLM_OK;
}

size_t llm_scoresketch_count(const llm_scoresketch *ss) { return ss->n; }
const char *llm_scoresketch_name(const llm_scoresketch *ss, size_t i) { return ss->v[i].name; }

int llm_scoresketch_find(const llm_scoresketch *ss, const char *name, size_t len)
{
	int found;
	size_t at = position(ss, name, len, &found);
	return found ? (int)at : -1;
}

uint64_t llm_scoresketch_documents(const llm_scoresketch *ss, size_t i)
{
	return llm_sketch_count(ss->v[i].low) + llm_sketch_count(ss->v[i].high);
}

int llm_scoresketch_bucket(const llm_scoresketch *ss, size_t i, double v, int nbuckets)
{
	const entry *e = &ss->v[i];
	int upper;
	double x = e->value ? value_side(v, &upper) : side_value(v, &upper);
	uint64_t nlow = llm_sketch_count(e->low), nhigh = llm_sketch_count(e->high);
	uint64_t n = nlow + nhigh, below, same;
	if (x < 0 || n == 0 || nbuckets < 1)
		return 0;
	if (e->value) {
		/* below a negative value: the negatives of larger magnitude; below the others:
		 * every negative and the smaller non-negatives */
		llm_sketch_rank(upper ? e->high : e->low, x, &below, &same);
		below = upper ? nlow + below : nlow - below - same;
	} else if (!upper) {
		llm_sketch_rank(e->low, x, &below, &same);
	} else {
		/* The upper half counts from the top: below v lie the whole lower half and the
		 * upper scores farther from the top than v's bucket. */
		llm_sketch_rank(e->high, x, &below, &same);
		below = nlow + (nhigh - below - same);
	}
	uint64_t b = (uint64_t)((unsigned __int128)below * (unsigned)nbuckets / n);
	return b >= (uint64_t)nbuckets ? nbuckets : (int)b + 1;
}

void llm_scoresketch_to_json(const llm_scoresketch *ss, llm_buf *out)
{
	llm_buf_addf(out, "{\"type\": \"%s\", \"version\": %d, \"scores\": {", FILE_TYPE, FILE_VERSION);
	for (size_t i = 0; i < ss->n; i++) {
		const entry *e = &ss->v[i];
		if (i)
			llm_buf_adds(out, ", ");
		llm_json_put_str(out, e->name, strlen(e->name));
		llm_buf_addf(out, ": {\"documents\": %llu, %s\"low\": ",
		             (unsigned long long)llm_scoresketch_documents(ss, i),
		             e->value ? "\"kind\": \"value\", " : "");
		llm_sketch_to_json(e->low, out);
		llm_buf_adds(out, ", \"high\": ");
		llm_sketch_to_json(e->high, out);
		llm_buf_addc(out, '}');
	}
	llm_buf_adds(out, "}}\n");
}

int llm_scoresketch_save(const llm_scoresketch *ss, const char *path)
{
	llm_buf b = LLM_BUF_INIT;
	llm_scoresketch_to_json(ss, &b);
	int rc = llm_write_file(path, b.p, b.len);
	llm_buf_release(&b);
	return rc;
}

/* One half of a name's entry from its member key of obj. */
static int load_half(llm_sketch **out, const llm_json_val *obj, const char *key, const char *path,
                     const char *name, int value)
{
	llm_json_val v = llm_json_member(obj, key);
	if (v.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: score '%s' has no '%s' sketch", path, name, key);
	if (llm_sketch_from_json(out, v.p, v.len) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "%s: score '%s': %s", path, name, llm_last_error());
	if (llm_sketch_alpha(*out) != LLM_SKETCH_ALPHA)
		return llm_fail(LLM_EFORMAT, "%s: score '%s': sketch accuracy %g, not %g", path, name,
		                llm_sketch_alpha(*out), LLM_SKETCH_ALPHA);
	/* The lower half holds scores below 0.5, the upper one distances to the top from 0.5. */
	double bound = value ? LLM_SKETCH_MAX : strcmp(key, "low") == 0 ? 0.5
	                                                                : LLM_SCORESKETCH_TOP - 0.5;
	if (llm_sketch_count(*out) && !(llm_sketch_max(*out) <= bound))
		return llm_fail(LLM_EFORMAT, "%s: score '%s': '%s' sketch holds %g, above %g", path,
		                name, key, llm_sketch_max(*out), bound);
	return LLM_OK;
}

static int load_entries(llm_scoresketch *ss, const llm_json_val *top, const char *path)
{
	llm_json_val t = llm_json_member(top, "type"), ver = llm_json_member(top, "version");
	int64_t version;
	if (t.type != LLM_JSON_STRING || !llm_json_str_eq(&t, FILE_TYPE))
		return llm_fail(LLM_EFORMAT, "%s: not a score sketch (no \"type\": \"%s\")", path,
		                FILE_TYPE);
	if (ver.type != LLM_JSON_NUMBER || llm_json_i64(&ver, &version) != LLM_OK ||
	    version != FILE_VERSION)
		return llm_fail(LLM_EFORMAT, "%s: score sketch version is not %d", path, FILE_VERSION);
	llm_json_val scores = llm_json_member(top, "scores");
	if (scores.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: 'scores' is not an object", path);
	size_t it = 0;
	llm_json_val key, val;
	while (llm_json_next(&scores, &it, &key, &val) == LLM_OK) {
		size_t nlen;
		char *name = llm_json_dup_str(&key, &nlen);
		int rc = LLM_OK, found;
		if (!name || !nlen)
			rc = llm_fail(LLM_EFORMAT, "%s: a score without a name", path);
		else if (val.type != LLM_JSON_OBJECT)
			rc = llm_fail(LLM_EFORMAT, "%s: score '%s' is not an object", path, name);
		else if (position(ss, name, nlen, &found), found)
			rc = llm_fail(LLM_EFORMAT, "%s: score '%s' appears twice", path, name);
		llm_sketch *low = NULL, *high = NULL;
		llm_json_val kind = rc == LLM_OK ? llm_json_member(&val, "kind") : (llm_json_val){ 0 };
		int value = kind.type == LLM_JSON_STRING && llm_json_str_eq(&kind, "value");
		if (rc == LLM_OK && kind.type != LLM_JSON_INVALID && !value)
			rc = llm_fail(LLM_EFORMAT, "%s: score '%s': kind is not \"value\"", path, name);
		if (rc == LLM_OK && (rc = load_half(&low, &val, "low", path, name, value)) == LLM_OK &&
		    (rc = load_half(&high, &val, "high", path, name, value)) == LLM_OK) {
			llm_json_val d = llm_json_member(&val, "documents");
			int64_t docs;
			if (d.type != LLM_JSON_NUMBER || llm_json_i64(&d, &docs) != LLM_OK ||
			    (uint64_t)docs != llm_sketch_count(low) + llm_sketch_count(high))
				rc = llm_fail(LLM_EFORMAT, "%s: score '%s': 'documents' is not the count of "
				              "its sketches", path, name);
		}
		if (rc == LLM_OK) {
			entry *e = get_or_add(ss, name, nlen, value);
			llm_sketch_free(e->low);
			llm_sketch_free(e->high);
			e->low = low;
			e->high = high;
		} else {
			llm_sketch_free(low);
			llm_sketch_free(high);
		}
		free(name);
		if (rc != LLM_OK)
			return rc;
	}
	return LLM_OK;
}

int llm_scoresketch_load_mem(llm_scoresketch **out, const char *data, size_t len,
                             const char *name)
{
	*out = NULL;
	llm_json_val top;
	size_t pos;
	const char *msg;
	if (llm_json_parse_value(data, len, &top, &pos, &msg) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "%s: invalid JSON at byte %zu: %s", name, pos + 1, msg);
	if (top.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: not a score sketch (not a JSON object)", name);
	llm_scoresketch *ss = llm_scoresketch_new();
	int rc = load_entries(ss, &top, name);
	if (rc != LLM_OK) {
		llm_scoresketch_free(ss);
		return rc;
	}
	*out = ss;
	return LLM_OK;
}

int llm_scoresketch_load(llm_scoresketch **out, const char *path)
{
	*out = NULL;
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc == LLM_OK) {
		rc = llm_scoresketch_load_mem(out, data, len, path);
		free(data);
	}
	return rc;
}
