/*
 * wordlist.c — word lists as one Aho-Corasick automaton plus boundary rules.
 *
 * Why not PCRE2 (what this module compiled lists into before): an alternation, even factored
 * into a prefix tree, is compiled into one program that must fit PCRE2's pattern size limit
 * (Debian's build refuses lists of about 10^4 entries) and whose matching tries the
 * alternatives that pass its first-character filter at every position. The automaton reads
 * each byte once, whatever the size of the list.
 *
 * The text is fed to the automaton lower-cased, with each run of white space as one space
 * and each invalid byte as 0xFF (which no entry holds, so no match spans it). Entries are
 * lower-cased and collapsed the same way when added. Positions below are in that folded
 * stream ("fp"); a ring of the last few folded bytes remembers, for each, the offset in the
 * text of the code point it came from and whether that code point is a word character.
 *
 * A candidate the automaton reports ends at the code point just fed; whether a word
 * character follows is known one code point later, so candidates wait in a short list until
 * then and are checked against their entry's boundary rules. A valid candidate records, at
 * the ring slot of its start, the longest valid end seen for that start. A start is settled
 * once the scan is a longest entry past it (no later candidate can start there); settling in
 * order, each start that is not inside the last match taken and has a valid end is a match.
 * That is leftmost-longest without overlap, in memory bounded by the longest entry.
 */
#include "wordlist.h"

#include <stdlib.h>
#include <string.h>

#include "aho.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "core/utf8.h"

/* What an entry asks of the text around it. */
enum {
	F_CJK = 1,   /* the CJK rule: boundaries are the caller's word boundaries, if given */
	F_LEFT = 2,  /* a boundary before it */
	F_RIGHT = 4  /* a boundary after it */
};

#define INVALID_BYTE 0xFF

typedef struct {
	uint64_t off;
	const char *p; /* bytes + off, set when compiling (the buffer no longer moves) */
	uint32_t len;
	uint8_t flags;
} entry;

struct llm_wordlist {
	llm_buf bytes; /* the folded entries, back to back (until compile) */
	entry *ent;
	size_t nent, cap, cjk_min, size;
	uint8_t *flags; /* by entry id (the automaton's value) */
	llm_aho *ac;
	int compiled, has_cjk;
};

typedef struct {
	size_t start, end; /* folded positions; end inclusive */
	uint8_t flags;
} cand;

typedef struct {
	size_t orig;   /* text offset of the code point this folded byte came from */
	size_t oend;   /* for a start: the text offset where its longest valid match ends */
	uint32_t best; /* for a start: the folded length of that match, 0 none */
	uint8_t word;  /* the code point is a word character */
} slot;

struct llm_wordlist_scratch {
	slot *ring;
	size_t mask;
	cand *pend;
	size_t npend, cappend;
};

static int is_word_class(uint32_t cp, unsigned cls)
{
	return (cls & (LLM_UC_LETTER | LLM_UC_MARK | LLM_UC_NUMBER)) && !(cls & LLM_UC_CJK) &&
	       cp != LLM_UTF8_REPLACEMENT;
}

llm_wordlist *llm_wordlist_new(void)
{
	llm_wordlist *w = llm_calloc(1, sizeof *w);
	w->cjk_min = 1;
	llm_buf_init(&w->bytes);
	return w;
}

void llm_wordlist_free(llm_wordlist *w)
{
	if (!w)
		return;
	llm_buf_release(&w->bytes);
	free(w->ent);
	free(w->flags);
	llm_aho_free(w->ac);
	free(w);
}

size_t llm_wordlist_size(const llm_wordlist *w) { return w->compiled ? w->size : w->nent; }
void llm_wordlist_set_cjk_min(llm_wordlist *w, size_t n) { w->cjk_min = n; }
int llm_wordlist_has_cjk(const llm_wordlist *w) { return w->has_cjk; }

/* Append code point cp as the automaton sees it (the text's folding, see above). */
static void fold_cp(llm_buf *b, uint32_t cp)
{
	char u[4];
	llm_buf_add(b, u, llm_utf8_encode(llm_uc_tolower(cp), u));
}

void llm_wordlist_add(llm_wordlist *w, const char *word, size_t len)
{
	if (w->compiled)
		return;
	/* Trim, then take the "*" off either end. */
	while (len > 0 && (word[0] == ' ' || word[0] == '\t'))
		word++, len--;
	while (len > 0 && (word[len - 1] == ' ' || word[len - 1] == '\t' || word[len - 1] == '\r'))
		len--;
	int open_left = len > 0 && word[0] == '*', open_right = len > 1 && word[len - 1] == '*';
	word += open_left;
	len -= (size_t)open_left + (size_t)open_right;
	/* Decode, lower-case, collapse white space runs to one space, trim. */
	size_t at = w->bytes.len, chars = 0;
	int cjk = 0, space = 1;
	uint32_t first = 0, last = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		i += llm_utf8_decode(word + i, len - i, &cp);
		unsigned cls = llm_uc_class(cp);
		if (cls & LLM_UC_SPACE) {
			if (!space)
				llm_buf_addc(&w->bytes, ' ');
			space = 1;
			continue;
		}
		if (!chars++)
			first = cp;
		last = cp;
		space = 0;
		cjk |= (cls & LLM_UC_CJK) != 0;
		fold_cp(&w->bytes, cp);
	}
	if (w->bytes.len > at && w->bytes.p[w->bytes.len - 1] == ' ')
		w->bytes.len--;
	if (chars == 0 || (cjk && chars < w->cjk_min) || w->bytes.len - at > LLM_AHO_MAX_LEN) {
		w->bytes.len = at;
		return;
	}
	uint8_t f = cjk ? F_CJK : 0;
	if (!open_left && (cjk || is_word_class(first, llm_uc_class(first))))
		f |= F_LEFT;
	if (!open_right && (cjk || is_word_class(last, llm_uc_class(last))))
		f |= F_RIGHT;
	if (w->nent == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->ent = llm_realloc(w->ent, w->cap * sizeof *w->ent);
	}
	w->ent[w->nent++] = (entry){ at, NULL, (uint32_t)(w->bytes.len - at), f };
}

int llm_wordlist_load(llm_wordlist *w, const char *path)
{
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc)
		return rc;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - data) : len, b = i;
		i = e + 1;
		while (b < e && (data[b] == ' ' || data[b] == '\t'))
			b++;
		if (b == e || data[b] == '#')
			continue;
		llm_wordlist_add(w, data + b, e - b);
	}
	free(data);
	return LLM_OK;
}

static int cmp_entry(const void *x, const void *y)
{
	const entry *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->p, b->p, n);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

int llm_wordlist_compile(llm_wordlist *w)
{
	if (w->compiled)
		return LLM_OK;
	if (w->nent == 0)
		return llm_fail(LLM_EINVAL, "word list is empty");
	/* Sort to merge duplicates: one entry id per folded string, the rules of all its
	 * copies relaxed together (a "*" on any copy lifts that boundary). */
	for (size_t i = 0; i < w->nent; i++)
		w->ent[i].p = w->bytes.p + w->ent[i].off;
	qsort(w->ent, w->nent, sizeof *w->ent, cmp_entry);
	w->flags = llm_malloc(w->nent);
	w->ac = llm_aho_new();
	size_t id = 0;
	for (size_t i = 0; i < w->nent; id++) {
		entry e = w->ent[i];
		uint8_t f = e.flags;
		size_t j = i + 1;
		for (; j < w->nent && cmp_entry(&w->ent[j], &e) == 0; j++)
			f = (uint8_t)(f & w->ent[j].flags);
		w->flags[id] = f;
		w->has_cjk |= (f & F_CJK) != 0;
		llm_aho_add(w->ac, e.p, e.len, (uint32_t)id);
		i = j;
	}
	w->size = id;
	free(w->ent);
	w->ent = NULL;
	w->nent = w->cap = 0;
	llm_buf_release(&w->bytes);
	int rc = llm_aho_compile(w->ac);
	if (rc)
		return rc;
	w->compiled = 1;
	return LLM_OK;
}

llm_wordlist_scratch *llm_wordlist_scratch_new(const llm_wordlist *w)
{
	llm_wordlist_scratch *s = llm_calloc(1, sizeof *s);
	/* Slots live from a start until it is settled: a longest entry, the code point being
	 * fed (4 bytes) and the one before a start (for its left boundary). */
	size_t need = (w->ac ? llm_aho_max_len(w->ac) : 0) + 16, n = 16;
	while (n < need)
		n *= 2;
	s->ring = llm_calloc(n, sizeof *s->ring);
	s->mask = n - 1;
	return s;
}

void llm_wordlist_scratch_free(llm_wordlist_scratch *s)
{
	if (!s)
		return;
	free(s->ring);
	free(s->pend);
	free(s);
}

static int bit(const uint8_t *b, size_t i)
{
	return (b[i >> 3] >> (i & 7)) & 1;
}

typedef struct {
	const llm_wordlist *w;
	llm_wordlist_scratch *s;
	const uint8_t *bounds;
	llm_wordlist_hit *hits;
	size_t max_hits, nhits;
	size_t next_free; /* folded position after the last match taken */
} scan_state;

/* Check the waiting candidates now that the code point after them is known: at text offset
 * next (len at the end), a word character or not. */
static void check_pending(scan_state *st, size_t next, int next_word, int at_end)
{
	llm_wordlist_scratch *s = st->s;
	for (size_t k = 0; k < s->npend; k++) {
		const cand *c = &s->pend[k];
		slot *first = &s->ring[c->start & s->mask];
		int ok = 1;
		if (c->flags & F_CJK) {
			if (st->bounds) {
				if ((c->flags & F_LEFT) && !bit(st->bounds, first->orig))
					ok = 0;
				if ((c->flags & F_RIGHT) && !bit(st->bounds, next))
					ok = 0;
			}
		} else {
			if ((c->flags & F_LEFT) && c->start > 0 && s->ring[(c->start - 1) & s->mask].word)
				ok = 0;
			if ((c->flags & F_RIGHT) && !at_end && next_word)
				ok = 0;
		}
		uint32_t n = (uint32_t)(c->end + 1 - c->start);
		if (ok && first->best < n) {
			first->best = n;
			first->oend = next;
		}
	}
	s->npend = 0;
}

/* Settle start position p: a match when it has a valid end and is past the last match. */
static void settle(scan_state *st, size_t p)
{
	slot *sl = &st->s->ring[p & st->s->mask];
	if (sl->best && p >= st->next_free) {
		if (st->nhits < st->max_hits) {
			st->hits[st->nhits].off = sl->orig;
			st->hits[st->nhits].len = sl->oend - sl->orig;
		}
		st->nhits++;
		st->next_free = p + sl->best;
	}
}

size_t llm_wordlist_scan(const llm_wordlist *w, llm_wordlist_scratch *s, const char *text,
                         size_t len, const uint8_t *bounds, llm_wordlist_hit *hits,
                         size_t max_hits)
{
	if (!w->ac || llm_aho_patterns(w->ac) == 0)
		return 0;
	scan_state st = { w, s, bounds, hits, max_hits, 0, 0 };
	const llm_aho *ac = w->ac;
	size_t maxlen = llm_aho_max_len(ac), fp = 0, settled = 0;
	uint32_t state = LLM_AHO_START;
	int space = 0;
	s->npend = 0;
	for (size_t i = 0;;) {
		int at_end = i >= len;
		uint32_t cp = 0;
		size_t cl = 0;
		unsigned char u[4];
		size_t nu;
		int word;
		unsigned char b = at_end ? 0 : (unsigned char)text[i];
		if (at_end) {
			word = 0;
			nu = 0;
		} else if (b < 0x80) {
			/* ASCII without decoding or tables: letters and digits are word characters,
			 * controls and space are white space. */
			cl = 1;
			unsigned char lc = (unsigned char)(b | 0x20);
			int alpha = lc >= 'a' && lc <= 'z';
			word = alpha || (b >= '0' && b <= '9');
			if (b == ' ' || (b >= '\t' && b <= '\r')) {
				nu = space ? 0 : 1;
				u[0] = ' ';
				space = 1;
			} else {
				u[0] = alpha ? lc : b;
				nu = 1;
				space = 0;
			}
		} else if (b >= 0xE4 && b <= 0xE9 && i + 2 < len && ((unsigned char)text[i + 1] & 0xC0) == 0x80 &&
		           ((unsigned char)text[i + 2] & 0xC0) == 0x80 &&
		           (b > 0xE4 || (unsigned char)text[i + 1] >= 0xB8)) {
			/* U+4E00..U+9FFF, most of Chinese text: Han, no case, no word character. */
			cl = nu = 3;
			memcpy(u, text + i, 3);
			word = 0;
			space = 0;
		} else {
			cl = llm_utf8_decode(text + i, len - i, &cp);
			unsigned cls = llm_uc_class(cp);
			word = is_word_class(cp, cls);
			if (cp == LLM_UTF8_REPLACEMENT && !(cl == 3 && memcmp(text + i, "\xef\xbf\xbd", 3) == 0)) {
				u[0] = INVALID_BYTE;
				nu = 1;
				space = 0;
			} else if (cls & LLM_UC_SPACE) {
				nu = space ? 0 : 1;
				u[0] = ' ';
				space = 1;
			} else {
				/* Lower-case letters and CJK have no other lower case: skip the lookup. */
				if (!(cls & (LLM_UC_LOWER | LLM_UC_CJK)))
					cp = llm_uc_tolower(cp);
				nu = llm_utf8_encode(cp, (char *)u);
				space = 0;
			}
		}
		if (s->npend)
			check_pending(&st, at_end ? len : i, word, at_end);
		while (settled < fp && (at_end || settled + maxlen <= fp))
			settle(&st, settled++);
		if (at_end)
			break;
		for (size_t k = 0; k < nu; k++) {
			slot *sl = &s->ring[fp & s->mask];
			sl->orig = i;
			sl->word = (uint8_t)word;
			sl->best = 0;
			for (uint32_t m = llm_aho_step(ac, &state, u[k]); m != LLM_AHO_NONE;
			     m = llm_aho_next(ac, m)) {
				if (s->npend == s->cappend) {
					s->cappend = s->cappend ? s->cappend * 2 : 16;
					s->pend = llm_realloc(s->pend, s->cappend * sizeof *s->pend);
				}
				/* Entries are whole code points of valid UTF-8, so a match starts and
				 * ends on code point boundaries of the folded stream. */
				s->pend[s->npend++] = (cand){ fp + 1 - llm_aho_len(ac, m), fp,
					                      w->flags[llm_aho_value(ac, m)] };
			}
			fp++;
		}
		i += cl;
	}
	return st.nhits;
}
