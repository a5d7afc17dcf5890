/*
 * zhseg.c — jieba's segmentation (jieba/__init__.py cut, __cut_DAG, calc; finalseg) in C.
 *
 * Exactness: the scores are the doubles jieba computes, added in jieba's order
 * ((log(freq) - log(total)) + route[x + 1], (V + trans) + emit), and every max breaks ties
 * as Python's max over tuples does (the larger end index; the larger state letter), so equal
 * inputs give jieba's path, not merely a path of the same score.
 *
 * The dictionary is a trie over character classes: the word characters (ASCII a-z A-Z 0-9
 * + # & . _ % - and U+4E00..U+9FD5, the only ones that can be in a run) are numbered
 * 0..NCLASS-1, the root's children sit in a dense array indexed by class, and every other
 * edge is one 64-bit slot of an open-addressing hash table that packs parent, class and
 * child. Finding the words that start at a character is then one array load and a hash
 * probe per further character, with no string hashing or comparison.
 */
#include "zhseg.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"
#include "core/utf8.h"
#include "zhseg_hmm.h"

#define HAN_LO 0x4E00u /* jieba's re_han_default: U+4E00..U+9FD5 (and ASCII below) */
#define HAN_HI 0x9FD5u
#define NCLASS (128 + (HAN_HI - HAN_LO + 1))
#define CLASS_NONE 0xFFFFu
/* Slot layout: parent (25 bits) | class (15 bits) | child (24 bits); 0 is an empty slot,
 * which no edge can be because edges in the table never leave the root (node 0). */
#define CHILD_BITS 24
#define CLASS_BITS 15
#define MAX_NODES (1u << CHILD_BITS)
/* The score of a prefix that is not a word: words score log(freq / total) <= 0. */
#define NOT_WORD 1.0

/* Table of ASCII word characters: a-z A-Z 0-9 + # & . _ % - */
static const unsigned char ascii_word[128] = {
	['#'] = 1, ['%'] = 1, ['&'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['_'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
	['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
	['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
	['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
	['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

static inline unsigned cp_class(uint32_t cp)
{
	if (cp < 128)
		return ascii_word[cp] ? cp : CLASS_NONE;
	if (cp >= HAN_LO && cp <= HAN_HI)
		return 128 + (cp - HAN_LO);
	return CLASS_NONE;
}

static inline bool is_alnum(unsigned c) /* c: a class, i.e. ASCII below 128 */
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* Python's \s (str.isspace: bidirectional class WS, B or S, or category Zs). */
static bool py_space(uint32_t cp)
{
	switch (cp) {
	case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D:
	case 0x1C: case 0x1D: case 0x1E: case 0x1F: case 0x20:
	case 0x85: case 0xA0: case 0x1680:
	case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
		return true;
	default:
		return cp >= 0x2000 && cp <= 0x200A;
	}
}

/* ---- the dictionary ---- */

struct llm_zhseg_dict {
	uint32_t root[NCLASS];  /* child of the root per class; 0: none */
	uint64_t *slot;         /* the other edges */
	size_t nslot_bits;
	uint32_t nnodes;        /* node 0 is the root */
	double *score;          /* per node: log(freq) - log(total), or NOT_WORD */
	uint64_t *freq;         /* per node, during loading and for llm_zhseg_dict_freq */
	uint8_t *inner;         /* per node: 1 when it has a child (a longer word may follow) */
	uint32_t cap;           /* of score, freq and inner */
	double logtotal;
	uint64_t total;
	size_t nwords;
	char *path;
};

static inline size_t slot_hash(uint32_t parent, unsigned cls, size_t bits)
{
	uint64_t k = (uint64_t)parent << CLASS_BITS | cls;
	return (size_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static inline uint32_t child(const llm_zhseg_dict *d, uint32_t parent, unsigned cls)
{
	if (parent == 0)
		return d->root[cls];
	uint64_t want = ((uint64_t)parent << CLASS_BITS | cls) << CHILD_BITS;
	size_t mask = ((size_t)1 << d->nslot_bits) - 1;
	for (size_t i = slot_hash(parent, cls, d->nslot_bits);; i = (i + 1) & mask) {
		uint64_t s = d->slot[i];
		if (s == 0)
			return 0;
		if ((s & ~(uint64_t)(MAX_NODES - 1)) == want)
			return (uint32_t)(s & (MAX_NODES - 1));
	}
}

static void slot_put(uint64_t *slot, size_t bits, uint64_t s)
{
	size_t mask = ((size_t)1 << bits) - 1;
	uint32_t parent = (uint32_t)(s >> (CLASS_BITS + CHILD_BITS));
	unsigned cls = (unsigned)(s >> CHILD_BITS) & ((1u << CLASS_BITS) - 1);
	size_t i = slot_hash(parent, cls, bits);
	while (slot[i])
		i = (i + 1) & mask;
	slot[i] = s;
}

/* The child of parent for cls, created when missing. */
static int add_child(llm_zhseg_dict *d, uint32_t parent, unsigned cls, uint32_t *out)
{
	uint32_t c = child(d, parent, cls);
	if (c) {
		*out = c;
		return LLM_OK;
	}
	if (d->nnodes == MAX_NODES - 1)
		return llm_fail(LLM_EUNSUPPORTED, "more than %u dictionary prefixes", MAX_NODES - 2);
	if (d->nnodes == d->cap) {
		d->cap *= 2;
		d->score = llm_realloc(d->score, d->cap * sizeof *d->score);
		d->freq = llm_realloc(d->freq, d->cap * sizeof *d->freq);
		d->inner = llm_realloc(d->inner, d->cap);
	}
	c = d->nnodes++;
	d->freq[c] = 0;
	d->inner[c] = 0;
	d->inner[parent] = 1;
	if (parent == 0) {
		d->root[cls] = c;
	} else {
		/* Keep the table at most half full: probes stay short. */
		if ((size_t)(d->nnodes * 2) > ((size_t)1 << d->nslot_bits)) {
			size_t bits = d->nslot_bits + 1;
			uint64_t *ns = llm_calloc((size_t)1 << bits, sizeof *ns);
			for (size_t i = 0; i < ((size_t)1 << d->nslot_bits); i++)
				if (d->slot[i])
					slot_put(ns, bits, d->slot[i]);
			free(d->slot);
			d->slot = ns;
			d->nslot_bits = bits;
		}
		slot_put(d->slot, d->nslot_bits,
		         ((uint64_t)parent << CLASS_BITS | cls) << CHILD_BITS | c);
	}
	*out = c;
	return LLM_OK;
}

static inline uint32_t han_at(const unsigned char *s, size_t avail);

/* Classes of s[0..n) into cls (room for n); the count, or -1 when a character is not a word
 * character or s is not valid UTF-8. ASCII and the Han block, nearly every character of a
 * dictionary, are decoded inline. */
static long classes(const char *s, size_t n, uint16_t *cls)
{
	const unsigned char *u = (const unsigned char *)s;
	long k = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len;
		unsigned c;
		if (u[i] < 128) {
			c = cp_class(u[i]);
			len = 1;
		} else if ((cp = han_at(u + i, n - i)) != 0) {
			c = 128 + (cp - HAN_LO);
			len = 3;
		} else {
			len = llm_utf8_decode(s + i, n - i, &cp);
			c = cp_class(cp);
		}
		if (c == CLASS_NONE)
			return -1;
		cls[k++] = (uint16_t)c;
		i += len;
	}
	return k;
}

static uint32_t walk(const llm_zhseg_dict *d, const uint16_t *cls, size_t n)
{
	uint32_t node = 0;
	for (size_t i = 0; i < n && (node = child(d, node, cls[i])) != 0; i++)
		;
	return node;
}

/* One line "word freq [tag]" (bytes.strip()'d as jieba does, then split at single spaces). */
/* What the previous line left for the next: jieba's dict.txt lists words with a common
 * prefix together (half of its characters repeat the previous word's), so the trie walk
 * starts where the previous word's path and the new word part. */
typedef struct {
	uint16_t *cls, *prev;  /* the word's classes, the previous word's */
	uint32_t *path;        /* path[i]: the node of the previous word's first i + 1 classes */
	size_t cap, nprev;
} dict_scratch;

static int dict_line(llm_zhseg_dict *d, char *line, size_t len, const char *file, uint64_t lineno,
                     dict_scratch *sc)
{
	static const char ws[] = " \t\n\r\v\f";
	while (len && strchr(ws, line[len - 1]))
		len--;
	size_t b = 0;
	while (b < len && strchr(ws, line[b]))
		b++;
	if (b == len)
		return LLM_OK;
	char *w = line + b;
	len -= b;
	if (!llm_utf8_valid(w, len))
		return llm_fail(LLM_EFORMAT, "%s:%llu: invalid UTF-8", file, (unsigned long long)lineno);
	char *sp = memchr(w, ' ', len);
	size_t wl = sp ? (size_t)(sp - w) : len;
	const char *f = w + wl + 1, *end = w + len;
	uint64_t freq = 0;
	const char *p = f;
	if (!sp)
		p = f = end;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		unsigned digit = (unsigned)(*p - '0');
		if (freq > (UINT64_MAX - digit) / 10)
			return llm_fail(LLM_EFORMAT, "%s:%llu: frequency over 2^64", file,
			                (unsigned long long)lineno);
		freq = freq * 10 + digit;
	}
	if (p == f || (p < end && *p != ' '))
		return llm_fail(LLM_EFORMAT, "%s:%llu: expected 'word frequency [tag]', got '%.*s'",
		                file, (unsigned long long)lineno, (int)(len < 80 ? len : 80), w);
	if (freq > UINT64_MAX - d->total)
		return llm_fail(LLM_EFORMAT, "%s:%llu: frequencies add up to more than 2^64", file,
		                (unsigned long long)lineno);
	/* jieba adds every entry to the total, also the ones that a run can never contain. */
	d->total += freq;
	d->nwords++;
	if (wl > sc->cap) {
		sc->cap = wl;
		sc->cls = llm_realloc(sc->cls, wl * sizeof *sc->cls);
		sc->prev = llm_realloc(sc->prev, wl * sizeof *sc->prev);
		sc->path = llm_realloc(sc->path, wl * sizeof *sc->path);
	}
	long n = classes(w, wl, sc->cls);
	if (n < 0) {
		sc->nprev = 0;
		return LLM_OK;
	}
	size_t k = 0;
	while (k < sc->nprev && k < (size_t)n && sc->cls[k] == sc->prev[k])
		k++;
	uint32_t node = k ? sc->path[k - 1] : 0;
	for (size_t i = k; i < (size_t)n; i++) {
		int rc = add_child(d, node, sc->cls[i], &node);
		if (rc) {
			sc->nprev = 0;
			return rc;
		}
		sc->path[i] = node;
	}
	memcpy(sc->prev, sc->cls, (size_t)n * sizeof *sc->prev);
	sc->nprev = (size_t)n;
	d->freq[node] = freq; /* a repeated word: the last frequency wins, as in jieba */
	return LLM_OK;
}

static int dict_read(llm_zhseg_dict *d, const char *path)
{
	llm_reader *r;
	int rc = llm_reader_open(&r, path);
	if (rc)
		return rc;
	/* Size the tables for the file at once (jieba's dict.txt: a trie node per 10 bytes),
	 * rather than growing them from empty: they still grow if that was short. */
	int64_t size = llm_reader_size(r);
	if (size > 0) {
		size_t want = (size_t)(size / 11) + 1;
		if (want > MAX_NODES)
			want = MAX_NODES;
		while (d->cap < want)
			d->cap *= 2;
		d->score = llm_realloc(d->score, d->cap * sizeof *d->score);
		d->freq = llm_realloc(d->freq, d->cap * sizeof *d->freq);
		d->inner = llm_realloc(d->inner, d->cap);
		size_t bits = d->nslot_bits;
		while (((size_t)1 << bits) < 2 * want)
			bits++;
		if (bits != d->nslot_bits) {
			free(d->slot);
			d->slot = llm_calloc((size_t)1 << bits, sizeof *d->slot);
			d->nslot_bits = bits;
		}
	}
	dict_scratch sc = { 0 };
	char *line;
	size_t len;
	while ((rc = llm_reader_line(r, &line, &len)) == LLM_OK) {
		rc = dict_line(d, line, len, path, llm_reader_lineno(r), &sc);
		if (rc)
			break;
	}
	if (rc == LLM_ETOOLONG)
		rc = llm_fail(LLM_EFORMAT, "%s:%llu: line too long", path,
		              (unsigned long long)llm_reader_lineno(r));
	free(sc.cls);
	free(sc.prev);
	free(sc.path);
	llm_reader_free(r);
	if (rc != LLM_EOF)
		return rc;
	if (d->total == 0)
		return llm_fail(LLM_EFORMAT, "%s: no word with a frequency above 0", path);
	return LLM_OK;
}

/* The place of the dictionary when none is named (see zhseg.h); NULL with the detail set. */
static const char *dict_find(char *buf, size_t cap)
{
	const char *env = getenv("LLM_ZHSEG_DICT");
	if (env && *env)
		return env;
	env = getenv("LLMKIT_DATA");
	if (env && *env && snprintf(buf, cap, "%s/%s", env, LLM_ZHSEG_DATA_DICT) < (int)cap &&
	    access(buf, R_OK) == 0)
		return buf;
	static const char up[] = "../share/llmkit/";
	ssize_t n = readlink("/proc/self/exe", buf, cap - sizeof up - sizeof LLM_ZHSEG_DATA_DICT);
	if (n > 0) {
		buf[n] = 0;
		char *slash = strrchr(buf, '/');
		if (slash) {
			strcpy(slash + 1, up);
			strcat(slash + 1, LLM_ZHSEG_DATA_DICT);
			if (access(buf, R_OK) == 0)
				return buf;
		}
	}
	if (access(LLM_ZHSEG_DEBIAN_DICT, R_OK) == 0)
		return LLM_ZHSEG_DEBIAN_DICT;
	llm_fail(LLM_ENOTFOUND, "no Chinese dictionary: install Debian's python3-jieba (make deps), "
	         "or set LLM_ZHSEG_DICT to a jieba dict.txt");
	return NULL;
}

/* The HMM's emission scores of every character of U+4E00..U+9FD5, [(cp - HAN_LO) * 4 + state]:
 * the generated table is sparse, the Viterbi wants one load per character. The same for
 * every dictionary, so built once. */
static double emit[(HAN_HI - HAN_LO + 1) * 4];
static pthread_once_t emit_once = PTHREAD_ONCE_INIT;

static void emit_init(void)
{
	for (size_t i = 0; i < sizeof emit / sizeof *emit; i++)
		emit[i] = LLM_ZHSEG_MIN;
	for (size_t i = 0; i < LLM_ZHSEG_EMIT_COUNT; i++)
		memcpy(emit + (zhseg_emit[i].cp - HAN_LO) * 4, zhseg_emit[i].p, sizeof zhseg_emit[i].p);
}

int llm_zhseg_dict_load(llm_zhseg_dict **out, const char *path)
{
	*out = NULL;
	char buf[PATH_MAX];
	if (!path && !(path = dict_find(buf, sizeof buf)))
		return LLM_ENOTFOUND;
	llm_zhseg_dict *d = llm_calloc(1, sizeof *d);
	d->cap = 1u << 10;
	d->score = llm_malloc(d->cap * sizeof *d->score);
	d->freq = llm_malloc(d->cap * sizeof *d->freq);
	d->inner = llm_malloc(d->cap);
	d->nnodes = 1;
	d->freq[0] = 0;
	d->inner[0] = 0;
	d->nslot_bits = 10;
	d->slot = llm_calloc((size_t)1 << d->nslot_bits, sizeof *d->slot);
	d->path = llm_strdup(path);
	int rc = dict_read(d, path);
	if (rc) {
		llm_zhseg_dict_free(d);
		return rc;
	}
	d->logtotal = log((double)d->total);
	/* Most frequencies are small and repeat (jieba's are mostly under 100): their logs are
	 * taken once each. */
	double small[1024];
	small[0] = 0.0; /* unused: a frequency of 0 is no word */
	for (size_t f = 1; f < sizeof small / sizeof *small; f++)
		small[f] = log((double)f);
	for (uint32_t i = 0; i < d->nnodes; i++) {
		uint64_t f = d->freq[i];
		double lf = f < sizeof small / sizeof *small ? small[f] : log((double)f);
		d->score[i] = f ? lf - d->logtotal : NOT_WORD;
	}
	pthread_once(&emit_once, emit_init);
	*out = d;
	return LLM_OK;
}

void llm_zhseg_dict_free(llm_zhseg_dict *d)
{
	if (!d)
		return;
	free(d->slot);
	free(d->score);
	free(d->freq);
	free(d->inner);
	free(d->path);
	free(d);
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static llm_zhseg_dict *default_dict;
static int default_rc;
static char default_err[512];

static void default_load(void)
{
	default_rc = llm_zhseg_dict_load(&default_dict, NULL);
	if (default_rc)
		snprintf(default_err, sizeof default_err, "%s", llm_last_error());
}

int llm_zhseg_dict_default(const llm_zhseg_dict **out)
{
	pthread_once(&default_once, default_load);
	*out = default_dict;
	/* The detail belongs to the thread that loaded; every caller gets it. */
	return default_rc ? llm_fail(default_rc, "%s", default_err) : LLM_OK;
}

const char *llm_zhseg_dict_path(const llm_zhseg_dict *d) { return d->path; }
size_t llm_zhseg_dict_size(const llm_zhseg_dict *d) { return d->nwords; }
uint64_t llm_zhseg_dict_total(const llm_zhseg_dict *d) { return d->total; }

uint64_t llm_zhseg_dict_freq(const llm_zhseg_dict *d, const char *s, size_t n)
{
	uint16_t small[64];
	uint16_t *cls = n <= 64 ? small : llm_malloc(n * sizeof *cls);
	long k = classes(s, n, cls);
	uint64_t f = k > 0 ? d->freq[walk(d, cls, (size_t)k)] : 0;
	if (cls != small)
		free(cls);
	return f;
}

/* ---- segmentation ---- */

struct llm_zhseg {
	const llm_zhseg_dict *d;
	/* the text being segmented */
	const char *text;
	size_t n, pos;
	/* the current run: run_cls[i] is the class of its character i, which spans
	 * text[run_off + off[i] .. run_off + off[i + 1]); its tokens end at characters end[] */
	size_t run_off;
	uint16_t *cls;
	uint32_t *off, *rx, *end;
	double *rp;
	uint8_t *bp, *st;   /* Viterbi back pointers (4 per character) and states */
	size_t cap;         /* characters the arrays hold (<= LLM_ZHSEG_MAX_RUN) */
	size_t ntok, itok;  /* tokens of the run, and the next one to return */
	/* llm_zhseg_cut's result */
	llm_zhseg_span *toks;
	size_t tokcap;
};

llm_zhseg *llm_zhseg_new(const llm_zhseg_dict *d)
{
	llm_zhseg *z = llm_calloc(1, sizeof *z);
	z->d = d;
	return z;
}

void llm_zhseg_free(llm_zhseg *z)
{
	if (!z)
		return;
	free(z->cls);
	free(z->off);
	free(z->rx);
	free(z->end);
	free(z->rp);
	free(z->bp);
	free(z->st);
	free(z->toks);
	free(z);
}

static void reserve(llm_zhseg *z, size_t need)
{
	if (need <= z->cap)
		return;
	size_t c = z->cap ? z->cap : 256;
	while (c < need)
		c *= 2;
	if (c > LLM_ZHSEG_MAX_RUN)
		c = LLM_ZHSEG_MAX_RUN;
	z->cls = llm_realloc(z->cls, c * sizeof *z->cls);
	z->off = llm_realloc(z->off, (c + 1) * sizeof *z->off);
	z->rx = llm_realloc(z->rx, c * sizeof *z->rx);
	z->end = llm_realloc(z->end, c * sizeof *z->end);
	z->rp = llm_realloc(z->rp, (c + 1) * sizeof *z->rp);
	z->bp = llm_realloc(z->bp, c * 4);
	z->st = llm_realloc(z->st, c);
	z->cap = c;
}

static inline void token(llm_zhseg *z, size_t e)
{
	z->end[z->ntok++] = (uint32_t)e;
}

enum { B, E, M, S }; /* the HMM's states, in the order of the tables */

/*
 * finalseg's __cut on the Han characters [a, b) of the run: Viterbi over B M E S, then a word
 * per B..E and per S. Each state's best predecessor is the larger of the two allowed
 * (finalseg's PrevStatus), ties to the later letter, as max over (score, state) tuples.
 */
static void viterbi(llm_zhseg *z, size_t a, size_t b)
{
	static const uint8_t prev[4][2] = { [B] = { E, S }, [E] = { B, M }, [M] = { B, M }, [S] = { E, S } };
	double v[4], nv[4];
	const double *em = emit + (size_t)(z->cls[a] - 128) * 4;
	for (int s = 0; s < 4; s++)
		v[s] = zhseg_start[s] + em[s];
	for (size_t t = a + 1; t < b; t++) {
		em = emit + (size_t)(z->cls[t] - 128) * 4;
		uint8_t *bp = z->bp + (t - a) * 4;
		for (int y = 0; y < 4; y++) {
			int p0 = prev[y][0], p1 = prev[y][1];
			double s0 = v[p0] + zhseg_trans[p0][y] + em[y];
			double s1 = v[p1] + zhseg_trans[p1][y] + em[y];
			if (s1 >= s0) {
				nv[y] = s1;
				bp[y] = (uint8_t)p1;
			} else {
				nv[y] = s0;
				bp[y] = (uint8_t)p0;
			}
		}
		memcpy(v, nv, sizeof v);
	}
	size_t n = b - a;
	uint8_t *st = z->st;
	st[n - 1] = v[S] >= v[E] ? S : E;
	for (size_t t = n - 1; t > 0; t--)
		st[t - 1] = z->bp[t * 4 + st[t]];
	/* finalseg yields text[begin .. i] at each E (begin: the last B) and text[i] at each S.
	 * The allowed transitions put a B only after an E or an S, so begin is always where the
	 * previous token ended, and a token is known by its end alone. */
	size_t next = 0;
	for (size_t i = 0; i < n; i++) {
		if (st[i] == E || st[i] == S) {
			token(z, a + i + 1);
			next = i + 1;
		}
	}
	if (next < n)
		token(z, b);
}

/* finalseg.cut on the characters [a, b) that jieba's path left as single characters and that
 * are not a dictionary word together: Han runs by the HMM; the rest (ASCII) by
 * re_skip = [a-zA-Z0-9]+(?:\.\d+)?%?, with the text between matches as tokens. */
static void finalseg(llm_zhseg *z, size_t a, size_t b)
{
	const uint16_t *c = z->cls;
	size_t i = a;
	while (i < b) {
		size_t j = i;
		if (c[i] >= 128) {
			while (j < b && c[j] >= 128)
				j++;
			viterbi(z, i, j);
		} else if (is_alnum(c[i])) {
			while (j < b && c[j] < 128 && is_alnum(c[j]))
				j++;
			if (j + 1 < b && c[j] == '.' && c[j + 1] >= '0' && c[j + 1] <= '9') {
				j += 2;
				while (j < b && c[j] >= '0' && c[j] <= '9')
					j++;
			}
			if (j < b && c[j] == '%')
				j++;
			token(z, j);
		} else {
			while (j < b && c[j] < 128 && !is_alnum(c[j]))
				j++;
			token(z, j);
		}
		i = j;
	}
}

/* __cut_DAG's handling of a stretch [a, b) of single characters. */
static void singles(llm_zhseg *z, size_t a, size_t b)
{
	if (b - a == 1) {
		token(z, b);
	} else if (z->d->freq[walk(z->d, z->cls + a, b - a)] == 0) {
		finalseg(z, a, b);
	} else {
		for (size_t i = a + 1; i <= b; i++)
			token(z, i);
	}
}

/* The run's N characters are in cls/off: jieba's calc (right to left), then its path. */
static void segment_run(llm_zhseg *z, size_t N)
{
	const llm_zhseg_dict *d = z->d;
	const uint16_t *cls = z->cls;
	const double *score = d->score;
	const uint8_t *inner = d->inner;
	double *rp = z->rp;
	uint32_t *rx = z->rx;
	rp[N] = 0.0;
	for (size_t i = N; i-- > 0;) {
		double best = -INFINITY;
		size_t bx = i;
		uint32_t node = d->root[cls[i]];
		/* The walk's first two loads (the score of the word's first character and the
		 * probe for its second) miss the cache on most characters, and the next
		 * character's do not depend on this one's walk: start them now. */
		if (i > 0) {
			uint32_t nx = d->root[cls[i - 1]];
			if (nx) {
				__builtin_prefetch(&score[nx]);
				__builtin_prefetch(&d->slot[slot_hash(nx, cls[i], d->nslot_bits)]);
			}
		}
		for (size_t j = i; node;) {
			double s = score[node];
			if (s <= 0.0) {
				double p = s + rp[j + 1];
				if (p >= best) { /* ties go to the longer word */
					best = p;
					bx = j;
				}
			}
			/* a leaf has no longer word: no probe for one */
			if (++j == N || !inner[node])
				break;
			node = child(d, node, cls[j]);
		}
		if (best == -INFINITY) /* no word starts here: the character alone, freq 1 */
			best = -d->logtotal + rp[i + 1];
		rp[i] = best;
		rx[i] = (uint32_t)bx;
	}
	z->ntok = z->itok = 0;
	size_t buf = SIZE_MAX; /* start of the pending single characters */
	for (size_t x = 0; x < N;) {
		size_t y = rx[x] + 1;
		if (y - x == 1) {
			if (buf == SIZE_MAX)
				buf = x;
		} else {
			if (buf != SIZE_MAX) {
				singles(z, buf, x);
				buf = SIZE_MAX;
			}
			token(z, y);
		}
		x = y;
	}
	if (buf != SIZE_MAX)
		singles(z, buf, N);
}

/* A Han character at s (3 bytes in UTF-8), or 0. */
static inline uint32_t han_at(const unsigned char *s, size_t avail)
{
	if (avail < 3 || (s[0] & 0xF0) != 0xE0 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
		return 0;
	uint32_t cp = (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
	return cp >= HAN_LO && cp <= HAN_HI ? cp : 0;
}

/* Read the run of word characters at z->pos (at least one) and segment it. */
static void run_at(llm_zhseg *z)
{
	const unsigned char *s = (const unsigned char *)z->text;
	size_t p = z->pos, n = z->n, k = 0;
	z->run_off = p;
	for (;;) {
		if (k == z->cap) {
			if (k == LLM_ZHSEG_MAX_RUN)
				break;
			reserve(z, k + 1);
		}
		unsigned c;
		size_t len;
		uint32_t cp;
		if (p < n && s[p] < 128 && ascii_word[s[p]]) {
			c = s[p];
			len = 1;
		} else if (p < n && (cp = han_at(s + p, n - p)) != 0) {
			c = 128 + (cp - HAN_LO);
			len = 3;
		} else {
			break;
		}
		z->cls[k] = (uint16_t)c;
		z->off[k++] = (uint32_t)(p - z->run_off);
		p += len;
	}
	z->off[k] = (uint32_t)(p - z->run_off);
	z->pos = p;
	segment_run(z, k);
}

void llm_zhseg_start(llm_zhseg *z, const char *text, size_t n)
{
	z->text = text;
	z->n = n;
	z->pos = 0;
	z->ntok = z->itok = 0;
}

bool llm_zhseg_next(llm_zhseg *z, llm_zhseg_span *tok)
{
	if (z->itok == z->ntok) {
		if (z->pos >= z->n)
			return false;
		const unsigned char *s = (const unsigned char *)z->text + z->pos;
		size_t avail = z->n - z->pos;
		if ((s[0] < 128 && ascii_word[s[0]]) || han_at(s, avail)) {
			run_at(z);
		} else {
			uint32_t cp;
			size_t len = llm_utf8_decode((const char *)s, avail, &cp);
			tok->off = z->pos;
			tok->kind = LLM_ZHSEG_OTHER;
			if (cp == '\r' && avail >= 2 && s[1] == '\n') {
				len = 2;
				tok->kind = LLM_ZHSEG_SPACE;
			} else if (py_space(cp)) {
				tok->kind = LLM_ZHSEG_SPACE;
			} else if (cp == LLM_UTF8_REPLACEMENT &&
			           !(len == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] == 0xBD)) {
				tok->kind = LLM_ZHSEG_INVALID;
			}
			tok->len = (uint32_t)len;
			z->pos += len;
			return true;
		}
	}
	size_t a = z->itok ? z->end[z->itok - 1] : 0, b = z->end[z->itok++];
	tok->off = z->run_off + z->off[a];
	tok->len = z->off[b] - z->off[a];
	tok->kind = LLM_ZHSEG_WORD;
	return true;
}

size_t llm_zhseg_cut(llm_zhseg *z, const char *text, size_t n, const llm_zhseg_span **toks)
{
	size_t k = 0;
	llm_zhseg_start(z, text, n);
	for (;;) {
		if (k == z->tokcap) {
			z->tokcap = z->tokcap ? 2 * z->tokcap : 1024;
			z->toks = llm_realloc(z->toks, z->tokcap * sizeof *z->toks);
		}
		if (!llm_zhseg_next(z, &z->toks[k]))
			break;
		k++;
	}
	*toks = z->toks;
	return k;
}

/* The words of a run without white space are all its tokens: every byte is in one. */
static size_t segmenter_cut(void *self, const char *s, size_t n, uint32_t *lens)
{
	const llm_zhseg_span *t;
	size_t k = llm_zhseg_cut(self, s, n, &t);
	for (size_t i = 0; i < k; i++)
		lens[i] = t[i].len;
	return k;
}

llm_segmenter llm_zhseg_segmenter(llm_zhseg *z)
{
	return (llm_segmenter){ segmenter_cut, z };
}

size_t llm_zhseg_join(llm_zhseg *z, const char *text, size_t n, llm_buf *out)
{
	size_t words = 0;
	bool line_start = true;
	llm_zhseg_span t;
	llm_zhseg_start(z, text, n);
	while (llm_zhseg_next(z, &t)) {
		if (t.kind == LLM_ZHSEG_SPACE) {
			if (text[t.off] == '\n' || text[t.off] == '\r') {
				llm_buf_addc(out, '\n');
				line_start = true;
			}
			continue;
		}
		if (!line_start)
			llm_buf_addc(out, ' ');
		llm_buf_add(out, text + t.off, t.len);
		line_start = false;
		words++;
	}
	return words;
}
