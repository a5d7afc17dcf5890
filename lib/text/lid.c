/*
 * lid.c — built-in script and function-word language identification (see lid.h).
 */
#include "lid.h"

#include <stdio.h>
#include <string.h>

#include "core/utf8.h"
#include "hanvariant_tables.h"

/* 1 for a Traditional-only character, -1 for a Simplified-only one, else 0. */
static int han_variant(uint32_t cp)
{
	if (cp < LLM_HAN_FIRST || cp > LLM_HAN_LAST)
		return 0;
	uint32_t i = cp - LLM_HAN_FIRST;
	if (han_traditional[i / 32] >> (i % 32) & 1)
		return 1;
	if (han_simplified[i / 32] >> (i % 32) & 1)
		return -1;
	return 0;
}

enum { S_LATIN, S_HAN, S_KANA, S_HANGUL, S_CYRILLIC, S_GREEK, S_ARABIC, S_HEBREW, S_DEVANAGARI,
	S_THAI, S_ARMENIAN, S_GEORGIAN, S_BENGALI, S_TAMIL, S_NSCRIPTS };

static const char *const script_lang[S_NSCRIPTS] = { "und", "zh", "ja", "ko", "ru", "el", "ar",
	                                             "he", "hi", "th", "hy", "ka", "bn", "ta" };

static int script_of(uint32_t cp)
{
	if (cp < 0x250)
		return S_LATIN;
	unsigned cls = llm_uc_class(cp);
	if (cls & LLM_UC_HAN)
		return S_HAN;
	if (cls & LLM_UC_KANA)
		return S_KANA;
	if (cls & LLM_UC_HANGUL)
		return S_HANGUL;
	if (cp >= 0x400 && cp < 0x530)
		return S_CYRILLIC;
	if (cp >= 0x370 && cp < 0x400)
		return S_GREEK;
	if ((cp >= 0x600 && cp < 0x700) || (cp >= 0x750 && cp < 0x780) || (cp >= 0xFB50 && cp < 0xFE00) ||
	    (cp >= 0xFE70 && cp < 0xFF00))
		return S_ARABIC;
	if (cp >= 0x590 && cp < 0x600)
		return S_HEBREW;
	if (cp >= 0x900 && cp < 0x980)
		return S_DEVANAGARI;
	if (cp >= 0x980 && cp < 0xA00)
		return S_BENGALI;
	if (cp >= 0xB80 && cp < 0xC00)
		return S_TAMIL;
	if (cp >= 0xE00 && cp < 0xE80)
		return S_THAI;
	if (cp >= 0x530 && cp < 0x590)
		return S_ARMENIAN;
	if (cp >= 0x10A0 && cp < 0x1100)
		return S_GEORGIAN;
	if (cp >= 0x1E00 && cp < 0x1F00)
		return S_LATIN;
	return -1;
}

/* Frequent function words of Latin-script languages (lower case). */
static const struct {
	const char *lang;
	const char *words; /* space separated, with spaces around */
} latin[] = {
	{ "en", " the of and to in is that it for was with as on be are by this have from or not at an which but they you his he we were has had their been will would can there "},
	{ "de", " der die und das ist nicht den von zu mit sich des auf für dem ein eine im auch als wird sie er es werden "},
	{ "fr", " le la les de des et est un une du en que qui dans pour pas sur au avec il elle sont ce par "},
	{ "es", " el la los las de y que en un una es por con para del se al lo como su más pero sus "},
	{ "pt", " o os a as de e que em um uma do da dos das para com não por se na no mais como "},
	{ "it", " il lo la gli le di e che in un una per non con del della sono si è anche come "},
	{ "nl", " de het een en van is dat op te in niet met voor zijn er aan ook als bij "},
	{ "id", " yang dan di ini itu dengan untuk dari dalam tidak akan pada juga adalah ke oleh "},
};

#define NLATIN (sizeof latin / sizeof *latin)

/* What the scan of a text counts. */
typedef struct {
	size_t count[S_NSCRIPTS], letters, ukr, trad, simp; /* letters by script, cues */
	size_t words, hits[NLATIN]; /* words, and those that are function words of latin[l] */
} tally;

/* The current word, lower case (len past the buffer: too long to be a function word). */
typedef struct {
	char p[24];
	size_t len;
} word;

static void count_letter(tally *t, uint32_t cp)
{
	int sc = script_of(cp);
	t->letters++;
	if (sc >= 0)
		t->count[sc]++;
	if (cp == 0x456 || cp == 0x457 || cp == 0x454)
		t->ukr++;
	if (sc == S_HAN) {
		int hv = han_variant(cp);
		t->trad += hv > 0;
		t->simp += hv < 0;
	}
}

/* A letter of an ASCII-ish word, for the Latin cues. */
static void add_to_word(word *w, uint32_t cp)
{
	char buf[4];
	size_t m = llm_utf8_encode(llm_uc_tolower(cp), buf);
	if (w->len + m < sizeof w->p - 1) {
		memcpy(w->p + w->len, buf, m);
		w->len += m;
	} else {
		w->len = sizeof w->p;
	}
}

static void end_word(tally *t, word *w)
{
	if (w->len < sizeof w->p - 1) {
		char key[28];
		key[0] = ' ';
		memcpy(key + 1, w->p, w->len);
		key[w->len + 1] = ' ';
		key[w->len + 2] = 0;
		for (size_t l = 0; l < NLATIN; l++)
			if (strstr(latin[l].words, key))
				t->hits[l]++;
	}
	t->words++;
	w->len = 0;
}

/* Every letter of s by script, and the words for the Latin cues. */
static void scan(tally *t, const char *s, size_t n)
{
	word w;
	w.len = 0;
	for (size_t i = 0; i <= n;) {
		uint32_t cp = 0;
		size_t k = 1;
		if (i < n)
			k = (unsigned char)s[i] < 0x80 ? (cp = (unsigned char)s[i], 1)
			                               : llm_utf8_decode(s + i, n - i, &cp);
		bool letter = i < n && llm_uc_is(cp, LLM_UC_LETTER);
		if (letter)
			count_letter(t, cp);
		if (letter && cp < 0x250)
			add_to_word(&w, cp);
		else if (w.len)
			end_word(t, &w);
		i += k;
	}
}

/*
 * The script of most of the text, -1 when none; *score its share. One CJK character
 * carries about as much text as a short Latin word, so CJK characters weigh three letters
 * (and Hangul syllables two) when scripts are compared: Chinese technical pages full of
 * Latin command names are still Chinese.
 */
static int main_script(const tally *t, double *score)
{
	size_t weight[S_NSCRIPTS];
	for (int sc = 0; sc < S_NSCRIPTS; sc++)
		weight[sc] = t->count[sc];
	weight[S_HAN] = 3 * (t->count[S_HAN] + t->count[S_KANA]);
	weight[S_KANA] = 0;
	weight[S_HANGUL] = 2 * t->count[S_HANGUL];
	size_t wsum = 0;
	int best = -1;
	for (int sc = 0; sc < S_NSCRIPTS; sc++) {
		wsum += weight[sc];
		if (best < 0 || weight[sc] > weight[best])
			best = sc;
	}
	if (!t->letters || !weight[best])
		return -1;
	*score = (double)weight[best] / (double)wsum;
	return best;
}

/* The Latin-script language by its function words, "und" below 8 % of the words; scales
 * *score by the evidence. */
static const char *latin_lang(const tally *t, double *score)
{
	size_t bl = 0;
	for (size_t l = 1; l < NLATIN; l++)
		if (t->hits[l] > t->hits[bl])
			bl = l;
	double share = t->words ? (double)t->hits[bl] / (double)t->words : 0;
	if (t->hits[0] * 100 >= t->words * 8 && t->hits[0] >= t->hits[bl])
		bl = 0, share = (double)t->hits[0] / (double)t->words;
	if (share < 0.08) {
		*score *= share / 0.08;
		return "und";
	}
	/* function words are ~40-50 % of running text; 25 % is full evidence */
	double ev = share / 0.25;
	*score *= ev > 1 ? 1 : ev;
	return latin[bl].lang;
}

void llm_lid_detect(const char *s, size_t n, size_t max_bytes, llm_lid_result *r)
{
	if (max_bytes && n > max_bytes)
		n = max_bytes;
	tally t = { 0 };
	scan(&t, s, n);
	int best = main_script(&t, &r->score);
	if (best < 0) {
		snprintf(r->lang, sizeof r->lang, "und");
		r->score = 0;
		return;
	}
	size_t cjk = t.count[S_HAN] + t.count[S_KANA];
	if (best == S_HAN) {
		/* Japanese mixes kanji and kana (kana are usually 40-60 %); Chinese has almost none,
		 * except in quoted Japanese names */
		best = t.count[S_KANA] * 5 >= cjk ? S_KANA : S_HAN;
	}
	const char *lang = script_lang[best];
	/* Traditional Chinese: more characters only Traditional writing uses than characters only
	 * Simplified writing uses (most characters are shared; a page needs a few telling ones) */
	if (best == S_HAN && t.trad > t.simp && t.trad >= 2)
		lang = "zh-Hant";
	if (best == S_CYRILLIC && t.ukr)
		lang = "uk";
	if (best == S_LATIN)
		lang = latin_lang(&t, &r->score);
	snprintf(r->lang, sizeof r->lang, "%s", lang);
}
