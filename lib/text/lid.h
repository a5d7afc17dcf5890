/*
 * lid.h — built-in language identification by script and function words.
 *
 * No model: letters are counted per script; the dominant script decides, and within a script
 * small cues separate languages:
 *   Han + Kana     ja when kana are >= 20 % of the CJK characters, else Chinese: zh-Hant
 *                  (Traditional) when characters written only in Traditional Chinese outnumber
 *                  those written only in Simplified (OpenCC's tables, scripts/
 *                  gen-han-variants.py) and there are at least two, else zh (Simplified)
 *   Hangul         ko
 *   Latin          en when English function words are >= 8 % of the words, else the
 *                  Latin-script language whose function words are most frequent among de,
 *                  fr, es, pt, it, nl, id (falling back to "und")
 *   Cyrillic ru (uk when і/ї/є occur), Greek el, Arabic ar, Hebrew he, Devanagari hi,
 *   Thai th, Armenian hy, Georgian ka, Bengali bn, Tamil ta
 * Scripts are compared by letters, a CJK character weighing three and a Hangul syllable two
 * (one such character carries about a short Latin word), so Chinese pages full of Latin
 * command names stay Chinese.
 * The score is the weighted share of the deciding script, times the evidence of the cue
 * for Latin languages; labels are ISO 639-1 codes as fastText's lid.176 uses them.
 * Good for separating zh/ja/ko/en and scripts; use a fastText model (llm-clean --lang-model)
 * for fine distinctions between languages of one script.
 *
 * Pure and thread safe.
 */
#ifndef LLM_LID_H
#define LLM_LID_H

#include <stddef.h>

typedef struct {
	char lang[8];  /* "en", "zh", "zh-Hant", ..., "und" */
	double score;  /* 0..1 */
} llm_lid_result;

/* Identify s[0..n); looks at most at the first max_bytes bytes (0 = all). */
void llm_lid_detect(const char *s, size_t n, size_t max_bytes, llm_lid_result *r);

#endif
