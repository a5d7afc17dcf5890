/*
 * quality.c — the quality rules (see quality.h for the references).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "quality.h"

#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "charclass.h"
#include "filter.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/utf8.h"

/* Open-addressing map from a 61-bit hash to a count and first position; key, count and
 * position share one 16-byte slot so that a probe touches one cache line. */
typedef struct {
	uint64_t key; /* hash + 1, 0 = empty */
	uint32_t count, first;
} hslot;

typedef struct {
	hslot *slot;
	size_t cap, n;
} hmap;

/* Open-addressing set of 61-bit hashes (stored + 1, 0 = empty) for the rules that ask only
 * "seen before?": 8-byte slots, half the memory of the map's, so more of it stays in cache. */
typedef struct {
	uint64_t *key;
	size_t cap, n;
} hset;

/*
 * The bounds that decide whether the exact n-gram counts are needed read 32-bit fingerprints
 * of the hashes, in a map to a count and in a set. Two n-grams that share a fingerprint can
 * only raise a bound (their counts merged, a repeat seen where there is none), never lower
 * it, so the verdicts are those of the exact counts; the slots are a half and a quarter of
 * the exact tables', and the tables of most documents stay in the first-level cache.
 */
typedef struct {
	uint32_t fp, count;
} fslot;

typedef struct {
	fslot *slot;
	size_t cap, n;
} fmap;

typedef struct {
	uint32_t *fp;
	size_t cap, n;
} fset;

/* A line as Python's str.splitlines() cuts the text: [start, end) without its line break,
 * [a, b) the same after str.strip(). */
typedef struct {
	size_t start, end, a, b;
} qline;

/*
 * What the rules need of a document is computed once, on first use, and shared: the words
 * (Gopher quality and repetition, C4's sentences, FineWeb) and the lines (Gopher quality, C4).
 * C4 edits the text by dropping lines; the words of the lines it keeps are those of the
 * original text (words never cross white space, and every line break is white space), so it
 * hands them on with the new text (llm_quality_set_edited) and no rule splits the text twice.
 */
struct llm_quality {
	const char *s;
	size_t n;
	size_t nchars;      /* code points of the text */
	const llm_segmenter *seg; /* words from a segmenter (NULL: spaCy's rules) */
	bool split;         /* words holds the words of s (split on first use) */
	llm_words words;
	llm_words scratch;  /* words of one C4 line */
	llm_words edited;   /* words of the last C4 output, when edited_ok */
	size_t edited_nchars; /* and its code points */
	bool edited_ok;
	qline *lines;       /* the lines of s, when have_lines */
	size_t nlines, lcap;
	bool have_lines;
	hmap map;
	hset set;
	fmap fmap;
	fset fset;
	llm_buf line;
	llm_buf low, cit, citlow; /* C4: the text lower-cased, a line without its citations and
	                           * that lower-cased */
	pcre2_match_data *md; /* the encoded-data patterns of the code rules */
	/* n-gram hashing by prefix: hash of the words' bytes concatenated (ph) and joined by
	 * spaces (phs, when have_phs), their byte lengths, and powers of the base */
	uint64_t *ph, *phs, *pow;
	size_t *plen;
	bool have_phs;
	size_t ncap, powcap;
};

/* Clear the first slots of a table, a power of two at least 2 * want (and 64) of them,
 * growing it when needed; returns how many. Only what the document needs is cleared, so
 * small documents clear little. */
static size_t table_reset(void **slot, size_t *cap, size_t want, size_t size)
{
	size_t n = 64;
	while (n < 2 * want)
		n *= 2;
	if (n > *cap) {
		free(*slot);
		*slot = llm_malloc(n * size);
		*cap = n;
	}
	memset(*slot, 0, n * size);
	return n;
}

static void hmap_reset(hmap *m, size_t want)
{
	void *p = m->slot;
	m->n = table_reset(&p, &m->cap, want, sizeof *m->slot);
	m->slot = p;
}

/* Slot of key (inserted with count 0 and first = pos when new). */
static inline hslot *hmap_slot(hmap *m, uint64_t h, uint32_t pos)
{
	uint64_t k = h + 1;
	size_t mask = m->n - 1;
	size_t i = (size_t)(k * 0x9E3779B97F4A7C15ULL >> 20) & mask;
	for (;; i = (i + 1) & mask) {
		hslot *e = &m->slot[i];
		if (e->key == k)
			return e;
		if (!e->key) {
			e->key = k;
			e->count = 0;
			e->first = pos;
			return e;
		}
	}
}

static void hset_reset(hset *m, size_t want)
{
	void *p = m->key;
	m->n = table_reset(&p, &m->cap, want, sizeof *m->key);
	m->key = p;
}

/* Insert h; whether it was there already. */
static inline bool hset_seen(hset *m, uint64_t h)
{
	uint64_t k = h + 1;
	size_t mask = m->n - 1;
	size_t i = (size_t)(k * 0x9E3779B97F4A7C15ULL >> 20) & mask;
	for (;; i = (i + 1) & mask) {
		if (m->key[i] == k)
			return true;
		if (!m->key[i]) {
			m->key[i] = k;
			return false;
		}
	}
}

/* Start loading the slot where hset_seen(m, h) begins. */
static inline void hset_prefetch(const hset *m, uint64_t h)
{
	__builtin_prefetch(&m->key[(size_t)((h + 1) * 0x9E3779B97F4A7C15ULL >> 20) & (m->n - 1)]);
}

/* The slot of a fingerprint's hash, and the fingerprint (never 0, the empty slot). */
static inline size_t fp_slot(uint64_t h, size_t mask)
{
	return (size_t)(h * 0x9E3779B97F4A7C15ULL >> 20) & mask;
}

static inline uint32_t fp_of(uint64_t h)
{
	return (uint32_t)(h >> 29) | 1;
}

static void fmap_reset(fmap *m, size_t want)
{
	void *p = m->slot;
	m->n = table_reset(&p, &m->cap, want, sizeof *m->slot);
	m->slot = p;
}

/* Count one more of h's fingerprint; the count. */
static inline uint32_t fmap_count(fmap *m, uint64_t h)
{
	uint32_t fp = fp_of(h);
	size_t mask = m->n - 1, i = fp_slot(h, mask);
	while (m->slot[i].fp != fp && m->slot[i].fp)
		i = (i + 1) & mask;
	m->slot[i].fp = fp;
	return ++m->slot[i].count;
}

static void fset_reset(fset *m, size_t want)
{
	void *p = m->fp;
	m->n = table_reset(&p, &m->cap, want, sizeof *m->fp);
	m->fp = p;
}

/* Insert h's fingerprint; whether it was there already. */
static inline bool fset_seen(fset *m, uint64_t h)
{
	uint32_t fp = fp_of(h);
	size_t mask = m->n - 1;
	for (size_t i = fp_slot(h, mask);; i = (i + 1) & mask) {
		if (m->fp[i] == fp)
			return true;
		if (!m->fp[i]) {
			m->fp[i] = fp;
			return false;
		}
	}
}

llm_quality *llm_quality_new(void)
{
	return llm_calloc(1, sizeof(llm_quality));
}

void llm_quality_free(llm_quality *q)
{
	if (!q)
		return;
	llm_words_release(&q->words);
	llm_words_release(&q->scratch);
	llm_words_release(&q->edited);
	free(q->lines);
	free(q->map.slot);
	free(q->set.key);
	free(q->fmap.slot);
	free(q->fset.fp);
	pcre2_match_data_free(q->md);
	free(q->ph);
	free(q->phs);
	free(q->pow);
	free(q->plen);
	llm_buf_release(&q->line);
	llm_buf_release(&q->low);
	llm_buf_release(&q->cit);
	llm_buf_release(&q->citlow);
	free(q);
}

void llm_quality_set_word_rules(llm_quality *q, unsigned rules)
{
	q->words.rules = q->scratch.rules = q->edited.rules = rules;
}

void llm_quality_set_text(llm_quality *q, const char *s, size_t n, const llm_segmenter *seg)
{
	q->s = s;
	q->n = n;
	q->nchars = llm_utf8_count(s, n);
	q->seg = seg;
	q->split = false;
	q->have_lines = false;
	q->edited_ok = false;
}

void llm_quality_set_edited(llm_quality *q, const char *s, size_t n)
{
	q->s = s;
	q->n = n;
	q->nchars = q->edited_nchars;
	q->have_lines = false;
	q->split = q->edited_ok;
	q->edited_ok = false;
	if (q->split) {
		llm_words t = q->words;
		q->words = q->edited;
		q->edited = t;
	}
}

/* The words of the text: only the rules that count words pay for splitting. */
static const llm_words *words(llm_quality *q)
{
	if (!q->split) {
		q->words.n = 0;
		llm_words_split(&q->words, q->s, 0, q->n, q->seg);
		q->split = true;
	}
	return &q->words;
}

size_t llm_quality_nwords(llm_quality *q)
{
	return words(q)->n;
}

const char *llm_quality_word(llm_quality *q, size_t i, size_t *len)
{
	const llm_word *w = &words(q)->w[i];
	*len = w->len;
	return q->s + w->off;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters */

static const char *const gopher_stop[] = { "the", "be", "to", "of", "and", "that", "have", "with",
	                                   NULL };
/* The stop words of each FineWeb-2 language (its config's "stopwords"), in column order */
#define STOP_LIST(name, iso1, alias) \
	static const char *const stop_##name[] = { LLM_FW2_STOP_##name, NULL };
LLM_FW2_LANGS(STOP_LIST)
#undef STOP_LIST
static const struct fw2_lang {
	const char *name, *iso1, *alias, *const *stop;  /* "deu_Latn", "de", another tag */
} fw2_langs[LLM_FW2_NLANGS] = {
#define LANG_ROW(name, iso1, alias) { #name, iso1, alias, stop_##name },
	LLM_FW2_LANGS(LANG_ROW)
#undef LANG_ROW
};

bool llm_quality_is_zh(const char *lang)
{
	static const char *const zh[] = { "cmn", "lzh", "yue", "wuu", "hak", "nan", NULL };
	if (!lang)
		return false;
	if (strncmp(lang, "zh", 2) == 0 && (lang[2] == 0 || lang[2] == '-' || lang[2] == '_'))
		return true;
	for (int i = 0; zh[i]; i++)
		if (strncmp(lang, zh[i], 3) == 0 && (lang[3] == 0 || lang[3] == '-' || lang[3] == '_'))
			return true;
	return false;
}

/* How spaCy's tokenizer for the language differs from the English one beyond the special
 * cases (spacy/lang/LANG/punctuation.py: German, Spanish, Dutch and Portuguese infixes have
 * no hyphen between letters; French and Italian split after an elided article). */
static unsigned word_rules(const char *iso1)
{
	static const char *const no_hyphen[] = { "de", "es", "nl", "pt", NULL };
	static const char *const elision[] = { "fr", "it", NULL };
	unsigned r = 0;
	for (int i = 0; no_hyphen[i]; i++)
		if (strcmp(iso1, no_hyphen[i]) == 0)
			r |= LLM_WORDS_NO_HYPHEN;
	for (int i = 0; elision[i]; i++)
		if (strcmp(iso1, elision[i]) == 0)
			r |= LLM_WORDS_ELISION;
	return r;
}

/* Does the primary subtag of tag (up to '-', '_' or the end) equal code? */
static bool subtag_is(const char *tag, size_t n, const char *code)
{
	return *code && strlen(code) == n && strncasecmp(tag, code, n) == 0;
}

int llm_quality_lang_column(const char *lang, bool *configured)
{
	*configured = true;
	if (!lang || !*lang)
		return LLM_FILTER_EN;
	size_t n = strcspn(lang, "-_");
	if (subtag_is(lang, n, "en") || subtag_is(lang, n, "eng") || subtag_is(lang, n, "und"))
		return LLM_FILTER_EN;
	for (int i = 0; i < LLM_FW2_NLANGS; i++) {
		const struct fw2_lang *l = &fw2_langs[i];
		bool zh = strcmp(l->iso1, "zh") == 0;
		bool code3 = n == 3 && strncasecmp(lang, l->name, 3) == 0;  /* "deu" of deu_Latn */
		if (code3 || subtag_is(lang, n, l->iso1) || subtag_is(lang, n, l->alias) ||
		    (zh && llm_quality_is_zh(lang)))
			return LLM_FILTER_EN + 1 + i;
	}
	*configured = false;
	return LLM_FILTER_EN;
}

void llm_quality_defaults(llm_quality_params *p, const char *lang)
{
	/* The thresholds are the rows of the parameter table (filter.c), one column per
	 * language; what is not a parameter (the stop words, CJK handling) is set here. */
	bool configured;
	int col = llm_quality_lang_column(lang, &configured);
	memset(p, 0, sizeof *p);
	llm_filter_param_defaults(p, col);
	const char *iso1 = col == LLM_FILTER_EN ? "en" : fw2_langs[col - 1].iso1;
	p->cjk = strcmp(iso1, "zh") == 0 || strcmp(iso1, "ja") == 0;
	p->builtin_stop = col == LLM_FILTER_EN ? gopher_stop : fw2_langs[col - 1].stop;
	p->lang_configured = configured;
	p->word_rules = col == LLM_FILTER_EN ? 0 : LLM_WORDS_NO_ENGLISH | word_rules(iso1);
}

static inline bool on(double x)
{
	return x > 0;
}

static bool fail(llm_verdict *v, const char *reason, double value, double threshold)
{
	v->reason = reason;
	v->value = value;
	v->threshold = threshold;
	return false;
}

bool llm_quality_lang(const llm_quality_params *p, llm_verdict *v)
{
	/* Gopher's stop words and word lengths are per language: judging, say, Swedish by
	 * English stop words rejects nearly every page for a reason that does not say why. */
	if (!p->lang_configured && p->reject_unconfigured_lang)
		return fail(v, "lang_not_configured", 0, 0);
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Line helpers */

/* The first byte of s[j..n) that can start a line break (below 0x20, 0xC2 or 0xE2), eight
 * bytes at a time by carry-free byte sums; the last bytes, fewer than eight, are left to the
 * caller (returns the first of them). */
static inline size_t break_candidate(const char *s, size_t j, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ULL, top = 0x80 * ones, low7 = 0x7F * ones;
	for (; j + 8 <= n; j += 8) {
		uint64_t x, c2, e2;
		memcpy(&x, s + j, 8);
		c2 = x ^ 0xC2 * ones;
		e2 = x ^ 0xE2 * ones;
		/* the top bit of each byte: below 0x20; equal to 0xC2; equal to 0xE2 */
		uint64_t m = (~((x | top) - 0x20 * ones) & ~x) | ~(((c2 & low7) + low7) | c2) |
		             ~(((e2 & low7) + low7) | e2);
		if (m & top)
			return j + (size_t)__builtin_ctzll(m & top) / 8;
	}
#endif
	return j;
}

/* Python str.splitlines() boundaries: returns the end of the line starting at i and sets *next
 * to the start of the following one. */
static size_t splitline(const char *s, size_t n, size_t i, size_t *next)
{
	/* the bytes that can start a line break */
	static const unsigned char brk[256] = { ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1,
		                                [0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0xC2] = 1,
		                                [0xE2] = 1 };
	for (size_t j = break_candidate(s, i, n); j < n; j = break_candidate(s, j + 1, n)) {
		unsigned char c = (unsigned char)s[j];
		if (!brk[c])
			continue;
		if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E)) {
			*next = j + 1;
			return j;
		}
		if (c == '\r') {
			*next = (j + 1 < n && s[j + 1] == '\n') ? j + 2 : j + 1;
			return j;
		}
		if (c == 0xC2 && j + 1 < n && (unsigned char)s[j + 1] == 0x85) {
			*next = j + 2;
			return j;
		}
		if (c == 0xE2 && j + 2 < n && (unsigned char)s[j + 1] == 0x80 &&
		    ((unsigned char)s[j + 2] == 0xA8 || (unsigned char)s[j + 2] == 0xA9)) {
			*next = j + 3;
			return j;
		}
	}
	*next = n;
	return n;
}

/* Python str.strip() on a byte span. */
static void py_strip(const char *s, size_t *a, size_t *b)
{
	while (*a < *b) {
		uint32_t cp;
		size_t k = llm_utf8_decode(s + *a, *b - *a, &cp);
		if (!llm_charclass_space(cp))
			break;
		*a += k;
	}
	while (*b > *a) {
		size_t k = 1;
		while (k < 4 && k < *b - *a && ((unsigned char)s[*b - k] & 0xC0) == 0x80)
			k++;
		uint32_t cp;
		if (llm_utf8_decode(s + *b - k, k, &cp) != k || !llm_charclass_space(cp))
			break;
		*b -= k;
	}
}

/* The lines of the text (see qline), on first use. */
static const qline *lines(llm_quality *q, size_t *nlines)
{
	if (!q->have_lines) {
		q->nlines = 0;
		for (size_t i = 0, next; i < q->n; i = next) {
			if (q->nlines == q->lcap) {
				q->lcap = q->lcap ? 2 * q->lcap : 256;
				q->lines = llm_realloc(q->lines, q->lcap * sizeof *q->lines);
			}
			qline *l = &q->lines[q->nlines++];
			l->start = l->a = i;
			l->end = l->b = splitline(q->s, q->n, i, &next);
			py_strip(q->s, &l->a, &l->b);
		}
		q->have_lines = true;
	}
	*nlines = q->nlines;
	return q->lines;
}

static uint32_t last_cp(const char *s, size_t a, size_t b)
{
	if (b == a)
		return 0;
	size_t k = 1;
	while (k < 4 && k < b - a && ((unsigned char)s[b - k] & 0xC0) == 0x80)
		k++;
	uint32_t cp;
	if (llm_utf8_decode(s + b - k, k, &cp) != k)
		return LLM_UTF8_REPLACEMENT;
	return cp;
}

static bool ends_with(const char *s, size_t a, size_t b, const char *lit)
{
	size_t n = strlen(lit);
	return b - a >= n && memcmp(s + b - n, lit, n) == 0;
}

/* Non-overlapping occurrences of lit, as Python's str.count: memchr finds the candidates (the
 * literals are rare characters or short runs of them). */
static size_t count_sub(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit), c = 0;
	const char *p = s, *end = s + n;
	while ((size_t)(end - p) >= m && (p = memchr(p, lit[0], (size_t)(end - p) - m + 1)) != NULL) {
		if (memcmp(p + 1, lit + 1, m - 1) == 0) {
			c++;
			p += m;
		} else {
			p++;
		}
	}
	return c;
}

/* The first '\n' in s[i..n), or n. */
static inline size_t next_nl(const char *s, size_t i, size_t n)
{
	const char *e = i < n ? memchr(s + i, '\n', n - i) : NULL;
	return e ? (size_t)(e - s) : n;
}

static uint64_t span_hash(const char *s, size_t a, size_t b)
{
	return llm_hash64(s + a, b - a, 0x5eed) & LLM_WORDS_MOD;
}

/* ------------------------------------------------------------------------------------------ */
/* Gopher quality */

bool llm_quality_gopher(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const llm_words *ws = words(q);
	const llm_word *w = ws->w;
	size_t nw = ws->n, nsym = 0, nalpha = 0;
	double sumlen = 0;
	for (size_t i = 0; i < nw; i++) {
		if (w[i].flags & LLM_WORD_SYMBOL)
			continue;
		nsym++;
		sumlen += w[i].nchars;
	}
	if (on(p->min_doc_words) && (double)nsym < p->min_doc_words)
		return fail(v, "gopher_short_doc", (double)nsym, p->min_doc_words);
	if (on(p->max_doc_words) && (double)nsym > p->max_doc_words)
		return fail(v, "gopher_long_doc", (double)nsym, p->max_doc_words);
	double avg = nsym ? sumlen / (double)nsym : NAN;
	if (nsym && on(p->min_avg_word_len) && avg < p->min_avg_word_len)
		return fail(v, "gopher_short_words", avg, p->min_avg_word_len);
	if (nsym && on(p->max_avg_word_len) && avg > p->max_avg_word_len)
		return fail(v, "gopher_long_words", avg, p->max_avg_word_len);
	if (nw == 0)
		return fail(v, "gopher_short_doc", 0, p->min_doc_words);
	if (on(p->max_symbol_word_ratio)) {
		double r = (double)count_sub(q->s, q->n, "#") / (double)nw;
		if (r > p->max_symbol_word_ratio)
			return fail(v, "gopher_too_many_hashes", r, p->max_symbol_word_ratio);
		r = (double)(count_sub(q->s, q->n, "...") + count_sub(q->s, q->n, "\xE2\x80\xA6")) /
		    (double)nw;
		if (r > p->max_symbol_word_ratio)
			return fail(v, "gopher_too_many_ellipsis", r, p->max_symbol_word_ratio);
	}
	if (on(p->max_bullet_lines_ratio) || on(p->max_ellipsis_lines_ratio)) {
		size_t nl, bullets = 0, ellipses = 0;
		const qline *ln = lines(q, &nl);
		for (size_t i = 0; i < nl; i++) {
			size_t a = ln[i].a, b = ln[i].b;
			if (b > a && (q->s[a] == '-' || (b - a >= 3 && memcmp(q->s + a, "\xE2\x80\xA2", 3) == 0)))
				bullets++;
			if (ends_with(q->s, a, b, "...") || ends_with(q->s, a, b, "\xE2\x80\xA6"))
				ellipses++;
		}
		if (nl) {
			double r = (double)bullets / (double)nl;
			if (on(p->max_bullet_lines_ratio) && r > p->max_bullet_lines_ratio)
				return fail(v, "gopher_too_many_bullets", r, p->max_bullet_lines_ratio);
			r = (double)ellipses / (double)nl;
			if (on(p->max_ellipsis_lines_ratio) && r > p->max_ellipsis_lines_ratio)
				return fail(v, "gopher_too_many_end_ellipsis", r, p->max_ellipsis_lines_ratio);
		}
	}
	if (on(p->min_alpha_words_ratio)) {
		for (size_t i = 0; i < nw; i++)
			nalpha += (w[i].flags & LLM_WORD_ALPHA) != 0;
		double r = (double)nalpha / (double)nw;
		if (r < p->min_alpha_words_ratio)
			return fail(v, "gopher_few_alpha_words", r, p->min_alpha_words_ratio);
	}
	if (p->min_stop_words > 0) {
		/* distinct stop words present */
		const char *const *builtin = p->builtin_stop ? p->builtin_stop : gopher_stop;
		size_t nstop = 0;
		if (p->stop_words)
			nstop = llm_wordset_size(p->stop_words);
		else
			while (builtin[nstop])
				nstop++;
		unsigned char seen_small[64] = { 0 };
		unsigned char *seen = nstop <= 64 ? seen_small : llm_calloc(nstop, 1);
		int found = 0;
		for (size_t i = 0; i < nw && found < p->min_stop_words; i++) {
			const char *t = q->s + w[i].off;
			int k = -1;
			if (p->stop_words) {
				k = llm_wordset_find(p->stop_words, t, w[i].len);
			} else {
				for (size_t j = 0; j < nstop; j++)
					if (builtin[j][0] == t[0] && strlen(builtin[j]) == w[i].len &&
					    memcmp(builtin[j], t, w[i].len) == 0)
						k = (int)j;
			}
			if (k >= 0 && !seen[k]) {
				seen[k] = 1;
				found++;
			}
		}
		if (seen != seen_small)
			free(seen);
		if (found < p->min_stop_words)
			return fail(v, "gopher_few_stop_words", found, p->min_stop_words);
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Gopher repetition */

/* Duplicates among spans: elements seen before (count) and their code points. */
static void find_duplicates(llm_quality *q, const size_t *ab, size_t nspans, size_t *dups,
                            size_t *dupchars)
{
	hset_reset(&q->set, nspans);
	*dups = *dupchars = 0;
	for (size_t i = 0; i < nspans; i++) {
		size_t a = ab[2 * i], b = ab[2 * i + 1];
		if (hset_seen(&q->set, span_hash(q->s, a, b))) {
			(*dups)++;
			*dupchars += llm_utf8_count(q->s + a, b - a);
		}
	}
}

static size_t *spans_buf(llm_quality *q, size_t need)
{
	llm_buf_reset(&q->line);
	llm_buf_grow(&q->line, need * 2 * sizeof(size_t));
	return (size_t *)(void *)q->line.p;
}

static size_t *grow_spans(llm_quality *q, size_t *ab, size_t n)
{
	size_t need = (n + 1) * 2 * sizeof(size_t);
	if (need + 1 > q->line.cap) {
		q->line.len = n * 2 * sizeof(size_t);
		llm_buf_grow(&q->line, need);
		ab = (size_t *)(void *)q->line.p;
	}
	return ab;
}

/* Prefix hashes of the current words' bytes concatenated (ph) and their byte lengths (plen),
 * and the powers of the base up to the longest maxn-gram joined by spaces. The hashes of the
 * words joined by spaces (phs) wait for a top-n-gram count that needs them (space_hashes). */
static void prefix_hashes(llm_quality *q, size_t maxn)
{
	const llm_word *w = q->words.w;
	size_t nw = q->words.n;
	if (nw + 1 > q->ncap) {
		q->ncap = 2 * (nw + 1);
		q->ph = llm_realloc(q->ph, q->ncap * sizeof *q->ph);
		q->phs = llm_realloc(q->phs, q->ncap * sizeof *q->phs);
		q->plen = llm_realloc(q->plen, q->ncap * sizeof *q->plen);
	}
	q->ph[0] = 0;
	q->plen[0] = 0;
	size_t longest = 0;
	for (size_t k = 0; k < nw; k++) {
		q->ph[k + 1] = llm_words_addmod(llm_words_mulmod(q->ph[k], w[k].pw), w[k].h);
		q->plen[k + 1] = q->plen[k] + w[k].len;
		size_t from = k + 1 >= maxn ? k + 1 - maxn : 0;
		size_t l = q->plen[k + 1] - q->plen[from] + maxn;
		if (l > longest)
			longest = l;
	}
	q->have_phs = false;
	if (longest + 1 > q->powcap) {
		size_t old = q->powcap;
		q->powcap = 2 * (longest + 1);
		q->pow = llm_realloc(q->pow, q->powcap * sizeof *q->pow);
		if (!old)
			q->pow[0] = 1;
		for (size_t x = old ? old : 1; x < q->powcap; x++)
			q->pow[x] = llm_words_mulmod(q->pow[x - 1], LLM_WORDS_BASE);
	}
}

/* The prefix hashes of the words joined by spaces, once per text. */
static void space_hashes(llm_quality *q)
{
	const llm_word *w = q->words.w;
	if (q->have_phs)
		return;
	q->phs[0] = 0;
	for (size_t k = 0; k < q->words.n; k++) {
		uint64_t h = k ? llm_words_addmod(llm_words_mulmod(q->phs[k], LLM_WORDS_BASE), ' ' + 1) : 0;
		q->phs[k + 1] = llm_words_addmod(llm_words_mulmod(h, w[k].pw), w[k].h);
	}
	q->have_phs = true;
}

/* Hash of words [i, i+n) concatenated ("".join) or joined by spaces (" ".join, after
 * space_hashes): the same value make_word would give the joined string. */
static inline uint64_t ngram_hash(const llm_quality *q, size_t i, size_t n, bool space)
{
	size_t j = i + n, L = q->plen[j] - q->plen[i];
	if (!space)
		return llm_words_submod(q->ph[j], llm_words_mulmod(q->ph[i], q->pow[L]));
	L += n - 1;
	if (i == 0)
		return q->phs[j];
	uint64_t h = llm_words_submod(q->phs[j], llm_words_mulmod(q->phs[i], q->pow[L + 1]));
	return llm_words_submod(h, llm_words_mulmod(' ' + 1, q->pow[L]));
}

/* Paragraphs: text.strip() split on \n{2,}; the shares of repeated ones and of their code
 * points. */
static bool rep_paragraphs(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t *ab = spans_buf(q, 64), ns = 0, dups, dupc;
	size_t a = 0, b = q->n;
	py_strip(s, &a, &b);
	for (size_t i = a; i <= b;) {
		size_t j = next_nl(s, i, b);
		while (j < b && !(j + 1 < b && s[j + 1] == '\n'))
			j = next_nl(s, j + 1, b);
		ab = grow_spans(q, ab, ns);
		ab[2 * ns] = i;
		ab[2 * ns + 1] = j;
		ns++;
		if (j >= b)
			break;
		while (j < b && s[j] == '\n')
			j++;
		i = j;
	}
	find_duplicates(q, ab, ns, &dups, &dupc);
	double r = (double)dups / (double)ns;
	if (on(p->dup_para_frac) && r > p->dup_para_frac)
		return fail(v, "gopher_rep_dup_para_frac", r, p->dup_para_frac);
	r = (double)dupc / (double)q->nchars;
	if (on(p->dup_para_char_frac) && r > p->dup_para_char_frac)
		return fail(v, "gopher_rep_dup_para_char_frac", r, p->dup_para_char_frac);
	return true;
}

/* Lines: the whole text split on \n+ (empty first/last elements included). */
static bool rep_lines(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, *ab = spans_buf(q, 64), ns = 0, dups, dupc;
	for (size_t i = 0; i <= n;) {
		size_t j = next_nl(s, i, n);
		ab = grow_spans(q, ab, ns);
		ab[2 * ns] = i;
		ab[2 * ns + 1] = j;
		ns++;
		if (j >= n)
			break;
		while (j < n && s[j] == '\n')
			j++;
		i = j;
	}
	find_duplicates(q, ab, ns, &dups, &dupc);
	double r = (double)dups / (double)ns;
	if (on(p->dup_line_frac) && r > p->dup_line_frac)
		return fail(v, "gopher_rep_dup_line_frac", r, p->dup_line_frac);
	r = (double)dupc / (double)q->nchars;
	if (on(p->dup_line_char_frac) && r > p->dup_line_char_frac)
		return fail(v, "gopher_rep_dup_line_char_frac", r, p->dup_line_char_frac);
	return true;
}

/* An n-gram seen c times covers c * (its words' code points + the spaces) <=
 * n * max over words of (count * code points) + (n - 1) * (highest word count): the two
 * maxima, from one pass over the words. */
static void word_count_bound(llm_quality *q, size_t *maxcov, size_t *maxcount)
{
	const llm_word *w = q->words.w;
	size_t nw = q->words.n;
	*maxcov = *maxcount = 0;
	fmap_reset(&q->fmap, nw);
	for (size_t i = 0; i < nw; i++) {
		size_t c = fmap_count(&q->fmap, w[i].h);
		if (c * w[i].nchars > *maxcov)
			*maxcov = c * w[i].nchars;
		if (c > *maxcount)
			*maxcount = c;
	}
}

/* The code points that the most frequent gn-gram covers, counted (Counter.most_common(1):
 * the highest count, the first inserted among ties). */
static size_t top_ngram_chars(llm_quality *q, size_t gn, bool charwise)
{
	const llm_word *w = q->words.w;
	size_t nw = q->words.n;
	hmap_reset(&q->map, nw);
	uint32_t best = 0, best_first = 0;
	for (size_t i = 0; i + gn <= nw; i++) {
		hslot *e = hmap_slot(&q->map, ngram_hash(q, i, gn, !charwise), (uint32_t)i);
		uint32_t c = ++e->count;
		uint32_t first = e->first;
		if (c > best || (c == best && first < best_first)) {
			best = c;
			best_first = first;
		}
	}
	/* character-wise n-grams are joined without spaces: they are runs of characters */
	size_t chars = charwise ? 0 : gn - 1;
	for (size_t k = 0; k < gn; k++)
		chars += w[best_first + k].nchars;
	return chars * best;
}

/* The top 2-, 3- and 4-gram rules, each counted only when the bound says it can fail. */
static bool rep_top_ngrams(llm_quality *q, const llm_quality_params *p, bool charwise, llm_verdict *v)
{
	static const char *const names[3] = { "gopher_rep_top_2_gram", "gopher_rep_top_3_gram",
	                                      "gopher_rep_top_4_gram" };
	if (!on(p->top_ngram_frac[0]) && !on(p->top_ngram_frac[1]) && !on(p->top_ngram_frac[2]))
		return true;
	size_t scale = charwise ? 2 : 1, maxcov, maxcount;
	double len = (double)q->nchars;
	word_count_bound(q, &maxcov, &maxcount);
	for (size_t g = 0; g < 3; g++) {
		size_t gn = (g + 2) * scale;
		if (!on(p->top_ngram_frac[g]) || q->words.n < gn)
			continue;
		size_t bound = gn * maxcov + (charwise ? 0 : (gn - 1) * maxcount);
		if ((double)bound / len <= p->top_ngram_frac[g])
			continue;
		if (!charwise)
			space_hashes(q);
		double r = (double)top_ngram_chars(q, gn, charwise) / len;
		if (r > p->top_ngram_frac[g])
			return fail(v, names[g], r, p->top_ngram_frac[g]);
	}
	return true;
}

/* Every counted repeat of an n-gram (n >= 5) lies inside repeated 5-gram occurrences: the code
 * points those cover bound the six duplicate-n-gram fractions. */
static size_t repeated_5gram_chars(llm_quality *q, size_t n5)
{
	const llm_word *w = q->words.w;
	size_t nw = q->words.n, covered = 0, upto = 0;
	fset_reset(&q->fset, nw);
	for (size_t i = 0; i + n5 <= nw; i++) {
		if (!fset_seen(&q->fset, ngram_hash(q, i, n5, false)))
			continue;
		for (size_t k = i > upto ? i : upto; k < i + n5; k++)
			covered += w[k].nchars;
		upto = i + n5;
	}
	return covered;
}

/* The code points of the non-overlapping repeats of gn-grams, as datatrove's
 * find_all_duplicate counts them. The table is larger than the first-level cache for most
 * pages and each probe a miss: the n-gram that comes next unless this one is a repeat is
 * hashed and its slot fetched while this one is looked up. */
static size_t dup_ngram_chars(llm_quality *q, size_t gn)
{
	const llm_word *w = q->words.w;
	size_t nw = q->words.n, rep = 0;
	hset_reset(&q->set, nw);
	if (nw < gn)
		return 0;
	uint64_t h = ngram_hash(q, 0, gn, false);
	for (size_t i = 0; i + gn <= nw;) {
		uint64_t next = 0;
		if (i + 1 + gn <= nw) {
			next = ngram_hash(q, i + 1, gn, false);
			hset_prefetch(&q->set, next);
		}
		if (hset_seen(&q->set, h)) {
			for (size_t k = 0; k < gn; k++)
				rep += w[i + k].nchars;
			i += gn;
			if (i + gn <= nw)
				h = ngram_hash(q, i, gn, false);
		} else {
			i++;
			h = next;
		}
	}
	return rep;
}

/* The duplicate 5- to 10-gram rules, counted only when the 5-gram bound says one can fail. */
static bool rep_dup_ngrams(llm_quality *q, const llm_quality_params *p, size_t scale, llm_verdict *v)
{
	static const char *const names[6] = {
		"gopher_rep_dup_5_gram", "gopher_rep_dup_6_gram", "gopher_rep_dup_7_gram",
		"gopher_rep_dup_8_gram", "gopher_rep_dup_9_gram", "gopher_rep_dup_10_gram"
	};
	double len = (double)q->nchars, strictest = INFINITY;
	for (size_t g = 0; g < 6; g++)
		if (on(p->dup_ngram_frac[g]) && p->dup_ngram_frac[g] < strictest)
			strictest = p->dup_ngram_frac[g];
	if (strictest == INFINITY)
		return true;
	size_t n5 = 5 * scale;
	if (q->words.n >= n5 && (double)repeated_5gram_chars(q, n5) / len <= strictest)
		return true;
	for (size_t g = 0; g < 6; g++) {
		if (!on(p->dup_ngram_frac[g]))
			continue;
		double r = (double)dup_ngram_chars(q, (g + 5) * scale) / len;
		if (r > p->dup_ngram_frac[g])
			return fail(v, names[g], r, p->dup_ngram_frac[g]);
	}
	return true;
}

bool llm_quality_repetition(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	if (q->n == 0)
		return fail(v, "empty", 0, 0);
	if (!rep_paragraphs(q, p, v) || !rep_lines(q, p, v))
		return false;
	bool ngrams = false;
	for (int g = 0; g < 3; g++)
		ngrams |= on(p->top_ngram_frac[g]);
	for (int g = 0; g < 6; g++)
		ngrams |= on(p->dup_ngram_frac[g]);
	if (!ngrams)
		return true; /* the words are not needed */
	words(q);
	/* Without a segmenter Chinese and Japanese words are single characters, while FineWeb-2's
	 * thresholds count words of a segmenter (about two characters on average): an n-gram of
	 * words is then taken as a run of 2n characters, joined without spaces. */
	bool charwise = p->cjk && !q->seg;
	size_t scale = charwise ? 2 : 1;
	prefix_hashes(q, 10 * scale);
	return rep_top_ngrams(q, p, charwise, v) && rep_dup_ngrams(q, p, scale, v);
}

/* ------------------------------------------------------------------------------------------ */
/* FineWeb */

bool llm_quality_fineweb(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, *ab = spans_buf(q, 64), ns = 0;
	size_t punct = 0, shortl = 0, newlines = 0;
	for (size_t i = 0; i <= n;) {
		size_t j = next_nl(s, i, n);
		if (j < n)
			newlines++;
		size_t a = i, b = j;
		py_strip(s, &a, &b);
		if (b > a) {
			ab = grow_spans(q, ab, ns);
			ab[2 * ns] = i;
			ab[2 * ns + 1] = j;
			ns++;
			if (llm_charclass_terminal(last_cp(s, i, j)))
				punct++;
			/* a line of L bytes has between L / 4 and L code points */
			size_t L = j - i, max = (size_t)p->fw_short_line_len;
			if (L <= max || (L <= 4 * max && llm_utf8_count(s + i, L) <= max))
				shortl++;
		}
		if (j >= n)
			break;
		i = j + 1;
	}
	if (ns == 0)
		return fail(v, "empty", 0, 0);
	double r = (double)punct / (double)ns;
	if (r < p->fw_line_punct_thr)
		return fail(v, "fineweb_line_punct_ratio", r, p->fw_line_punct_thr);
	r = (double)shortl / (double)ns;
	if (on(p->fw_short_line_thr) && r > p->fw_short_line_thr)
		return fail(v, "fineweb_short_line_ratio", r, p->fw_short_line_thr);
	size_t dups, dupc;
	find_duplicates(q, ab, ns, &dups, &dupc);
	r = (double)dupc / (double)(q->nchars - newlines);
	if (on(p->fw_char_dup_ratio) && r > p->fw_char_dup_ratio)
		return fail(v, "fineweb_char_dup_ratio", r, p->fw_char_dup_ratio);
	if (on(p->fw_new_line_ratio)) {
		size_t nw = words(q)->n;
		r = nw ? (double)newlines / (double)nw : INFINITY;
		if (r > p->fw_new_line_ratio)
			return fail(v, "fineweb_list_ratio", r, p->fw_new_line_ratio);
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* C4 */

const char *const llm_quality_c4_lines[5] = { "too_long_word", "no_terminal_punct", "too_few_words",
	                                   "javascript", "policy" };

/* What C4 does with a line: a line rule drops it (the index of its counter in
 * llm_quality_c4_lines), it is kept, or a page rule drops the document. */
enum { C4_TOO_LONG_WORD, C4_NO_TERMINAL, C4_TOO_FEW_WORDS, C4_JAVASCRIPT, C4_POLICY, C4_KEEP,
       C4_LOREM_IPSUM, C4_CURLY_BRACKET };

/*
 * The first occurrence of a needle in a text at or after the line being judged. Lines are
 * judged in order, so one search serves every line up to the occurrence it found: a needle is
 * looked for about once over the document, not once per line (a memmem call per line and
 * needle cost more than the search itself).
 */
typedef struct {
	const char *needle;
	size_t len;
	size_t at; /* the occurrence; the text's length if none is ahead; SIZE_MAX before a search */
} finder;

static finder finder_of(const char *needle)
{
	return (finder){ needle, strlen(needle), SIZE_MAX };
}

/* Whether t[a..b) holds the needle; a never decreases between the calls on one text t[0..n). */
static bool finder_in(finder *f, const char *t, size_t n, size_t a, size_t b)
{
	if (f->at == SIZE_MAX || f->at < a) {
		const char *p = f->len == 1 ? memchr(t + a, f->needle[0], n - a)
		                            : memmem(t + a, n - a, f->needle, f->len);
		f->at = p ? (size_t)(p - t) : n;
	}
	return f->at + f->len <= b;
}

/* The policy phrases. Four of the six hold "cookie": they are looked for only in the lines
 * that do. */
#define C4_NPOLICY 6
static const char *const policy_phrases[C4_NPOLICY] = { "terms of use", "privacy policy",
	                                                "cookie policy", "uses cookies",
	                                                "use of cookies", "use cookies" };

/* A text that C4 judges line by line, the document or one line that the citation rule edited,
 * with its needles. */
typedef struct {
	const char *s, *low; /* the text and its ASCII lower-case copy (NULL: no phrase rule) */
	size_t n;
	finder bracket, curly, lorem, javascript, cookie, policy[C4_NPOLICY];
} c4_text;

static void c4_text_init(c4_text *t, const char *s, const char *low, size_t n)
{
	t->s = s;
	t->low = low;
	t->n = n;
	t->bracket = finder_of("[");
	t->curly = finder_of("{");
	t->lorem = finder_of("lorem ipsum");
	t->javascript = finder_of("javascript");
	t->cookie = finder_of("cookie");
	for (int k = 0; k < C4_NPOLICY; k++)
		t->policy[k] = finder_of(policy_phrases[k]);
}

/* Whether the lower-cased line t[a..b) holds a policy phrase. */
static bool c4_policy(c4_text *t, size_t a, size_t b)
{
	if (finder_in(&t->policy[0], t->low, t->n, a, b) || finder_in(&t->policy[1], t->low, t->n, a, b))
		return true;
	if (!finder_in(&t->cookie, t->low, t->n, a, b))
		return false;
	for (int k = 2; k < C4_NPOLICY; k++)
		if (finder_in(&t->policy[k], t->low, t->n, a, b))
			return true;
	return false;
}

/* The ASCII lower-case copy of s[0..n) in out, for the phrase rules, eight bytes at a time.
 * The phrases are ASCII; Python's lower() maps no other character to an ASCII letter except
 * U+0130 and the Kelvin and Angstrom signs, which no phrase contains in a way that matters. */
static const char *ascii_lower(llm_buf *out, const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, top = 0x80 * ones;
	llm_buf_reset(out);
	llm_buf_grow(out, n);
	char *d = out->p;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, s + i, 8);
		/* the top bit of each byte: ASCII, at least 'A' and not above 'Z' (no sum carries) */
		uint64_t low7 = x & 0x7F * ones;
		uint64_t upper = (low7 + (0x80 - 'A') * ones) & ~(low7 + (0x80 - 'Z' - 1) * ones) & ~x & top;
		x |= upper >> 2;
		memcpy(d + i, &x, 8);
	}
	for (; i < n; i++)
		d[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	out->len = n;
	return d;
}

/* Remove "[digits]", "[edit]" and "[citation needed]" from s[a..b) into out. */
static void remove_citations(const char *s, size_t a, size_t b, llm_buf *out)
{
	llm_buf_reset(out);
	size_t i = a;
	while (i < b) {
		if (s[i] == '[') {
			size_t j = i + 1;
			while (j < b && s[j] >= '0' && s[j] <= '9')
				j++;
			size_t m = 0;
			if (j < b && s[j] == ']')
				m = j + 1 - i;
			else if (b - i >= 6 && memcmp(s + i, "[edit]", 6) == 0)
				m = 6;
			else if (b - i >= 18 && memcmp(s + i, "[citation needed]", 18) == 0)
				m = 18;
			if (m) {
				i += m;
				continue;
			}
		}
		llm_buf_addc(out, s[i++]);
	}
}

/* Python's str.isspace of the bytes below 0x80. */
static const unsigned char ascii_space[128] = { ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1,
	                                        ['\r'] = 1, [0x1C] = 1, [0x1D] = 1, [0x1E] = 1,
	                                        [0x1F] = 1, [' '] = 1 };

/* Whether the code point at s[k] (k < b) is white space; its length in *len. */
static inline bool space_at(const char *s, size_t k, size_t b, size_t *len)
{
	unsigned char c = (unsigned char)s[k];
	if (c < 0x80) {
		*len = 1;
		return ascii_space[c];
	}
	uint32_t cp;
	*len = llm_utf8_decode(s + k, b - k, &cp);
	return llm_charclass_space(cp);
}

/* The str.split() words of s[a..b), counted up to cap: most lines are read only to their
 * third word. */
static size_t split_words(const char *s, size_t a, size_t b, size_t cap)
{
	size_t nwords = 0, len;
	bool in = false;
	for (size_t k = a; k < b && nwords < cap; k += len) {
		bool space = space_at(s, k, b, &len);
		nwords += !space && !in;
		in = !space;
	}
	return nwords;
}

/* The code points of the longest str.split() word of s[a..b). */
static size_t longest_split_word(const char *s, size_t a, size_t b)
{
	size_t longest = 0, wl = 0, len;
	for (size_t k = a; k < b; k += len) {
		if (space_at(s, k, b, &len))
			wl = 0;
		else if (++wl > longest)
			longest = wl;
	}
	return longest;
}

static bool c4_terminal(const char *s, size_t n, bool cjk)
{
	if (n == 0)
		return false;
	if (ends_with(s, 0, n, "..."))
		return false;
	char c = s[n - 1];
	if (c == '.' || c == '?' || c == '!' || c == '"' || c == '\'')
		return true;
	return cjk && llm_charclass_cjk_end(last_cp(s, 0, n));
}

/* C4's verdict on the stripped line [a, b) of the document (C4_*), in the reference's order
 * of the rules. The line as it would be kept is *l[0..*len): the document's bytes, or a copy
 * in q->cit that the citation rule edited (*edited). */
static int c4_line(llm_quality *q, const llm_quality_params *p, c4_text *doc, size_t a, size_t b,
                   const char **l, size_t *len, bool *edited)
{
	const char *s = doc->s;
	/* a line of at most max bytes has no word of more than max code points */
	size_t max = p->c4_max_word_len > 0 ? (size_t)p->c4_max_word_len : SIZE_MAX;
	if (b - a > max && longest_split_word(s, a, b) > max)
		return C4_TOO_LONG_WORD;
	c4_text *t = doc, cited;
	size_t la = a, lb = b;
	*edited = false;
	if (p->c4_remove_citations && finder_in(&doc->bracket, s, doc->n, a, b)) {
		remove_citations(s, a, b, &q->cit);
		if (q->cit.len != b - a) {
			const char *low = doc->low ? ascii_lower(&q->citlow, q->cit.p, q->cit.len) : NULL;
			c4_text_init(&cited, q->cit.p, low, q->cit.len);
			t = &cited;
			la = 0;
			lb = q->cit.len;
			*edited = true;
		}
	}
	*l = t->s + la;
	*len = lb - la;
	if (p->c4_terminal_punct && !c4_terminal(*l, *len, p->cjk))
		return C4_NO_TERMINAL;
	if (p->c4_min_words_per_line > 0) {
		/* white-space words of the line as read; CJK lines have no spaces: their words are
		 * characters */
		size_t min = (size_t)p->c4_min_words_per_line, words = split_words(s, a, b, min);
		if (p->cjk && words < min)
			words = llm_utf8_count(*l, *len);
		if (words < min)
			return C4_TOO_FEW_WORDS;
	}
	if (p->c4_lorem_ipsum && finder_in(&t->lorem, t->low, t->n, la, lb))
		return C4_LOREM_IPSUM;
	if (p->c4_javascript && finder_in(&t->javascript, t->low, t->n, la, lb))
		return C4_JAVASCRIPT;
	if (p->c4_curly_bracket && finder_in(&t->curly, t->s, t->n, la, lb))
		return C4_CURLY_BRACKET;
	if (p->c4_policy && c4_policy(t, la, lb))
		return C4_POLICY;
	return C4_KEEP;
}

/* Sentences in words w[0..n) of a line, as spaCy's sentencizer counts them: a new sentence
 * after a terminal mark followed by a word. */
static size_t sentences_of(const llm_word *w, size_t n)
{
	size_t sent = n ? 1 : 0;
	bool seen = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t f = w[i].flags;
		if (seen && !(f & LLM_WORD_PUNCT) && !(f & LLM_WORD_TERMINAL)) {
			sent++;
			seen = false;
		} else if (f & LLM_WORD_TERMINAL) {
			seen = true;
		}
	}
	return sent;
}

/* Sentences in s[a..b) over its words as spaCy's rules split them. */
static size_t count_sentences(llm_quality *q, const char *s, size_t a, size_t b)
{
	q->scratch.n = 0;
	llm_words_split(&q->scratch, s, a, b, NULL);
	return sentences_of(q->scratch.w, q->scratch.n);
}

/* Append to q->edited the words of a kept line, now at out[pos..pos+len): the document's own
 * words of its span [a, b) moved there, or, when the line was edited (citations removed) or a
 * word crosses the span (never, for valid text), the line split anew. *wi walks the
 * document's words in order. Returns the index in q->edited of the line's first word. */
static size_t carry_words(llm_quality *q, size_t *wi, size_t a, size_t b, bool edited,
                          const llm_buf *out, size_t pos, size_t len)
{
	const llm_words *ws = &q->words;
	llm_words *ed = &q->edited;
	size_t first = ed->n, i = *wi;
	while (i < ws->n && ws->w[i].off < a)
		i++;
	size_t j = i;
	while (j < ws->n && ws->w[j].off + ws->w[j].len <= b)
		j++;
	bool crossed = (i > 0 && ws->w[i - 1].off + ws->w[i - 1].len > a) ||
	               (j < ws->n && ws->w[j].off < b);
	*wi = j;
	if (edited || crossed) {
		llm_words_split(ed, out->p, pos, pos + len, q->seg);
		return first;
	}
	if (ed->n + (j - i) > ed->cap) {
		ed->cap = 2 * (ed->n + (j - i)) + 256;
		ed->w = llm_realloc(ed->w, ed->cap * sizeof *ed->w);
	}
	for (size_t k = i; k < j; k++) {
		llm_word w = ws->w[k];
		w.off = (uint32_t)(w.off - a + pos);
		ed->w[ed->n++] = w;
	}
	return first;
}

/* C4's output as it is written: the kept lines, their code points, and the sentences the page
 * rule counts. */
typedef struct {
	llm_buf *out;
	size_t nchars;    /* code points of out */
	size_t sentences; /* counted while fewer than the page rule asks */
	size_t wi;        /* the next of the document's words, when carried */
	bool carry;       /* the words of out are the document's (see llm_quality_c4) */
} c4_out;

/* Write the kept line l[0..len), the document's [a, b) as read. */
static void c4_keep(llm_quality *q, const llm_quality_params *p, c4_out *o, size_t a, size_t b,
                    const char *l, size_t len, bool edited)
{
	llm_buf *out = o->out;
	if (out->len) {
		llm_buf_addc(out, '\n');
		o->nchars++;
	}
	o->nchars += llm_utf8_count(l, len);
	size_t pos = out->len;
	llm_buf_add(out, l, len);
	bool count = p->c4_min_sentences > 0 && o->sentences < (size_t)p->c4_min_sentences;
	if (o->carry) {
		size_t first = carry_words(q, &o->wi, a, b, edited, out, pos, len);
		if (count)
			o->sentences += sentences_of(q->edited.w + first, q->edited.n - first);
	} else if (count) {
		o->sentences += count_sentences(q, l, 0, len);
	}
}

/* The kept document: out stripped, the carried words moved with it, for
 * llm_quality_set_edited. */
static void c4_finish(llm_quality *q, c4_out *o)
{
	llm_buf *out = o->out;
	size_t a = 0, b = out->len;
	if (out->p) {
		py_strip(out->p, &a, &b);
		o->nchars -= llm_utf8_count(out->p, a) + llm_utf8_count(out->p + b, out->len - b);
		if (a > 0)
			memmove(out->p, out->p + a, b - a);
		llm_buf_truncate(out, b - a);
	}
	for (size_t k = 0; o->carry && a > 0 && k < q->edited.n; k++)
		q->edited.w[k].off -= (uint32_t)a;
	q->edited_ok = o->carry;
	q->edited_nchars = o->nchars;
}

bool llm_quality_c4(llm_quality *q, const llm_quality_params *p, llm_buf *out, uint64_t stats[5],
                   llm_verdict *v)
{
	size_t nl;
	const qline *ln = lines(q, &nl);
	bool phrases = p->c4_lorem_ipsum || p->c4_javascript || p->c4_policy;
	c4_text doc;
	c4_text_init(&doc, q->s, phrases ? ascii_lower(&q->low, q->s, q->n) : NULL, q->n);
	/* The words of the output come from the document's own when it has been split (and the
	 * sentencizer reads them too); with a segmenter the sentences need spaCy's words, which
	 * are not the document's. */
	c4_out o = { out, 0, 0, 0, q->split && !q->seg };
	q->edited.n = 0;
	llm_buf_reset(out);
	for (size_t li = 0; li < nl; li++) {
		const char *l;
		size_t len;
		bool edited;
		int what = c4_line(q, p, &doc, ln[li].a, ln[li].b, &l, &len, &edited);
		if (what == C4_LOREM_IPSUM)
			return fail(v, "c4_lorem_ipsum", 1, 0);
		if (what == C4_CURLY_BRACKET)
			return fail(v, "c4_curly_bracket", 1, 0);
		if (what == C4_KEEP)
			c4_keep(q, p, &o, ln[li].a, ln[li].b, l, len, edited);
		else if (stats)
			stats[what]++;
	}
	if (p->c4_min_sentences > 0 && o.sentences < (size_t)p->c4_min_sentences)
		return fail(v, "c4_too_few_sentences", (double)o.sentences, p->c4_min_sentences);
	c4_finish(q, &o);
	return true;
}


/* ------------------------------------------------------------------------------------------ */
/* Length */

bool llm_quality_length(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	if (p->min_chars > 0 && q->nchars < (size_t)p->min_chars)
		return fail(v, "too_short", (double)q->nchars, p->min_chars);
	if (p->max_chars > 0 && q->nchars > (size_t)p->max_chars)
		return fail(v, "too_long", (double)q->nchars, p->max_chars);
	if (p->min_words > 0 && words(q)->n < (size_t)p->min_words)
		return fail(v, "too_few_words", (double)words(q)->n, p->min_words);
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* ChineseWebText (CASIA-LM/ChineseWebText preprocess.py) */

bool llm_quality_cwt(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, lines = 1, han = 0;
	for (size_t i = 0; i < n; i++)
		lines += s[i] == '\n';
	/* average_line_length = len(text) / len(text.split('\n')) */
	double r = (double)q->nchars / (double)lines;
	if (on(p->cwt_min_avg_line_len) && r < p->cwt_min_avg_line_len)
		return fail(v, "cwt_short_lines", r, p->cwt_min_avg_line_len);
	/* re.findall(r'[\u4e00-\u9fa5]', text) over len(text) */
	if (on(p->cwt_min_han_ratio)) {
		for (size_t i = 0; i < n;) {
			uint32_t cp;
			i += llm_utf8_decode(s + i, n - i, &cp);
			han += cp >= 0x4E00 && cp <= 0x9FA5;
		}
		r = q->nchars ? (double)han / (double)q->nchars : 0;
		if (r < p->cwt_min_han_ratio)
			return fail(v, "cwt_few_han", r, p->cwt_min_han_ratio);
	}
	if (!on(p->cwt_max_rep_ngram_frac) || p->cwt_ngram <= 0)
		return true;
	/* judge_inner_repeat: text.strip().lower() without ' ', '\n' and '\t'; the n-grams
	 * txt[i:i+n] for i in range(len - n) (the last one is not counted); the share of n-grams
	 * whose text occurs more than once. */
	size_t a = 0, b = n, m = 0, gn = (size_t)p->cwt_ngram;
	py_strip(s, &a, &b);
	if (b - a + 1 > q->ncap) {
		q->ncap = 2 * (b - a + 1);
		q->ph = llm_realloc(q->ph, q->ncap * sizeof *q->ph);
		q->phs = llm_realloc(q->phs, q->ncap * sizeof *q->phs);
		q->plen = llm_realloc(q->plen, q->ncap * sizeof *q->plen);
	}
	uint64_t *h = q->ph, *pw = q->phs; /* prefix hashes of the code points and base powers */
	q->have_phs = false;
	h[0] = 0;
	pw[0] = 1;
	for (size_t i = a; i < b;) {
		uint32_t cp;
		i += llm_utf8_decode(s + i, b - i, &cp);
		if (cp == ' ' || cp == '\n' || cp == '\t')
			continue;
		h[m + 1] = llm_words_addmod(llm_words_mulmod(h[m], LLM_WORDS_BASE), llm_uc_tolower(cp) + 1u);
		pw[m + 1] = llm_words_mulmod(pw[m], LLM_WORDS_BASE);
		m++;
	}
	if (m <= gn)
		return true; /* one n-gram (the whole text) or none: nothing repeats */
	size_t grams = m - gn, rep = 0;
	hmap_reset(&q->map, grams);
	for (size_t i = 0; i < grams; i++) {
		uint64_t g = llm_words_submod(h[i + gn], llm_words_mulmod(h[i], pw[gn]));
		uint32_t c = ++hmap_slot(&q->map, g, (uint32_t)i)->count;
		rep += c == 2 ? 2 : c > 2 ? 1 : 0;
	}
	r = (double)rep / (double)grams;
	if (r > p->cwt_max_rep_ngram_frac)
		return fail(v, "cwt_rep_ngram", r, p->cwt_max_rep_ngram_frac);
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Source code (StarCoder2 §2.1) */

/* The markers of auto-generated files, searched in the first five lines, case-insensitively. */
static const char *const autogen_markers[] = { "auto-generated", "autogenerated",
	                                       "automatically generated", "generated automatically",
	                                       "this file is generated", NULL };

/* The encoded-data patterns, verbatim: base64 runs, hexadecimal byte sequences, \u escapes.
 * (The hexadecimal one does not take "0x12, 0x34": that is how StarCoder2 ran it.) */
static const char encoded_re[] = "[a-zA-Z0-9+/\\n=]{64,}"
                                 "|(?:\\b(?:0x|\\\\x)?[0-9a-fA-F]{2}(?:,|\\b\\s*)){8,}"
                                 "|(?:\\\\u[0-9a-fA-F]{4}){8,}";
static pcre2_code *encoded_code;
static pthread_once_t encoded_once = PTHREAD_ONCE_INIT;

static void encoded_init(void)
{
	int err;
	PCRE2_SIZE off;
	encoded_code = pcre2_compile((PCRE2_SPTR)encoded_re, PCRE2_ZERO_TERMINATED,
	                             PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &off, NULL);
	if (encoded_code)
		pcre2_jit_compile(encoded_code, PCRE2_JIT_COMPLETE);
}

/* Code points of s[0..n) inside matches of the encoded-data patterns, and of the longest. */
static size_t encoded_chars(llm_quality *q, const char *s, size_t n, size_t *longest)
{
	*longest = 0;
	pthread_once(&encoded_once, encoded_init);
	if (!encoded_code)
		return 0;
	if (!q->md)
		q->md = pcre2_match_data_create_from_pattern(encoded_code, NULL);
	size_t total = 0;
	for (PCRE2_SIZE at = 0; at < n;) {
		if (pcre2_match(encoded_code, (PCRE2_SPTR)s, n, at, 0, q->md, NULL) < 0)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(q->md);
		size_t c = llm_utf8_count(s + ov[0], ov[1] - ov[0]);
		total += c;
		if (c > *longest)
			*longest = c;
		at = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return total;
}

bool llm_quality_code(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, lines = 0, longest = 0, linechars = 0, alpha = 0;
	bool autogen = false;
	llm_buf *low = &q->line;
	for (size_t i = 0, next; i < n; i = next) {
		size_t e = splitline(s, n, i, &next), c = 0;
		for (size_t k = i; k < e;) {
			uint32_t cp;
			k += (unsigned char)s[k] < 0x80 ? (cp = (unsigned char)s[k], 1)
			                                : llm_utf8_decode(s + k, e - k, &cp);
			c++;
			alpha += llm_charclass_letter(cp);
		}
		if (p->code_autogenerated && lines < 5 && !autogen) {
			llm_buf_reset(low);
			for (size_t k = i; k < e; k++)
				llm_buf_addc(low, (char)((s[k] >= 'A' && s[k] <= 'Z') ? s[k] + 32 : s[k]));
			for (int m = 0; autogen_markers[m] && !autogen; m++)
				autogen = memmem(low->p ? low->p : "", low->len, autogen_markers[m],
				                 strlen(autogen_markers[m])) != NULL;
		}
		lines++;
		linechars += c;
		if (c > longest)
			longest = c;
	}
	if (p->code_max_lines > 0 && lines > (size_t)p->code_max_lines)
		return fail(v, "code_too_many_lines", (double)lines, p->code_max_lines);
	if (p->code_max_line_len > 0 && longest > (size_t)p->code_max_line_len)
		return fail(v, "code_long_line", (double)longest, p->code_max_line_len);
	double r = lines ? (double)linechars / (double)lines : 0;
	if (on(p->code_max_mean_line_len) && r > p->code_max_mean_line_len)
		return fail(v, "code_long_lines_mean", r, p->code_max_mean_line_len);
	/* str.isalpha over len(text) */
	r = q->nchars ? (double)alpha / (double)q->nchars : 0;
	if (on(p->code_min_alpha_ratio) && r < p->code_min_alpha_ratio)
		return fail(v, "code_low_alpha", r, p->code_min_alpha_ratio);
	if (autogen)
		return fail(v, "code_autogenerated", 1, 0);
	if (on(p->code_max_encoded_frac) || p->code_max_encoded_run > 0) {
		size_t run, enc = encoded_chars(q, s, n, &run);
		if (p->code_max_encoded_run > 0 && run > (size_t)p->code_max_encoded_run)
			return fail(v, "code_encoded_data", (double)run, p->code_max_encoded_run);
		r = q->nchars ? (double)enc / (double)q->nchars : 0;
		if (on(p->code_max_encoded_frac) && r > p->code_max_encoded_frac)
			return fail(v, "code_encoded_data", r, p->code_max_encoded_frac);
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Encoding damage */

/* What a UTF-8 continuation byte 0x80..0xBF looks like when the bytes were read as Latin-1 or
 * Windows-1252: U+0080..U+00BF, or cp1252's letters and marks for 0x80..0x9F. */
static bool continuation_image(uint32_t cp)
{
	if (cp >= 0x80 && cp <= 0xBF)
		return true;
	switch (cp) {
	case 0x20AC: case 0x201A: case 0x0192: case 0x201E: case 0x2026: case 0x2020: case 0x2021:
	case 0x02C6: case 0x2030: case 0x0160: case 0x2039: case 0x0152: case 0x017D: case 0x2018:
	case 0x2019: case 0x201C: case 0x201D: case 0x2022: case 0x2013: case 0x2014: case 0x02DC:
	case 0x2122: case 0x0161: case 0x203A: case 0x0153: case 0x017E: case 0x0178:
		return true;
	}
	return false;
}

bool llm_quality_encoding(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, repl = 0, moji = 0;
	uint32_t prev = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			prev = c;
			i++;
			continue;
		}
		uint32_t cp;
		i += llm_utf8_decode(s + i, n - i, &cp);
		repl += cp == LLM_UTF8_REPLACEMENT;
		/* a lead byte 0xC2..0xEF seen as Â..ï, then a continuation byte's image */
		moji += prev >= 0xC2 && prev <= 0xEF && continuation_image(cp);
		prev = cp;
	}
	double len = q->nchars ? (double)q->nchars : 1;
	double r = (double)repl / len;
	if (on(p->max_replacement_ratio) && r > p->max_replacement_ratio)
		return fail(v, "encoding_replacement", r, p->max_replacement_ratio);
	r = (double)moji / len;
	if (on(p->max_mojibake_ratio) && r > p->max_mojibake_ratio)
		return fail(v, "encoding_mojibake", r, p->max_mojibake_ratio);
	return true;
}
