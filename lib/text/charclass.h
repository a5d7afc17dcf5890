/*
 * charclass.h — the character classes the quality rules and the word splitter share, defined
 * as the references define them (Python's str methods, datatrove's punctuation sets), so that
 * a rule counts what its reference counts.
 *
 *   llm_charclass_space     Python's str.isspace: White_Space plus U+001C..U+001F
 *   llm_charclass_letter    str.isalpha (General_Category L*)
 *   llm_charclass_digit     Nd;  _lower Ll;  _upper Lu
 *   llm_charclass_cjk       Han ideographs and kana: the characters written without spaces
 *   llm_charclass_punct     datatrove's PUNCTUATION_SET (utils/text.py, commit a649de79): the
 *                           characters of Gopher's "symbol" words
 *   llm_charclass_terminal  datatrove's TERMINAL_PUNCTUATION (also spaCy's sentencizer marks):
 *                           . ! ? and their equivalents in other scripts, including 。！？
 *   llm_charclass_cjk_end   what ends a clause or a sentence in Chinese and Japanese typography:
 *                           。！？；… and the closing quotes 」』” (the C4 line rule for zh/ja)
 *
 * Pure functions of a code point; thread safe.
 */
#ifndef LLM_CHARCLASS_H
#define LLM_CHARCLASS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/utf8.h"

bool llm_charclass_punct(uint32_t cp);
bool llm_charclass_terminal(uint32_t cp);
bool llm_charclass_cjk_end(uint32_t cp);

static inline bool llm_charclass_space(uint32_t cp)
{
	if (cp < 0x80)
		return cp == ' ' || (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x1F);
	return llm_uc_is(cp, LLM_UC_SPACE);
}

static inline bool llm_charclass_letter(uint32_t cp)
{
	if (cp < 0x80)
		return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
	return llm_uc_is(cp, LLM_UC_LETTER);
}

static inline bool llm_charclass_digit(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= '0' && cp <= '9';
	return llm_uc_is(cp, LLM_UC_DIGIT);
}

static inline bool llm_charclass_lower(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'a' && cp <= 'z';
	return llm_uc_is(cp, LLM_UC_LOWER);
}

static inline bool llm_charclass_upper(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'A' && cp <= 'Z';
	return llm_uc_is(cp, LLM_UC_UPPER);
}

static inline bool llm_charclass_cjk(uint32_t cp)
{
	return cp >= 0x2E80 && llm_uc_is(cp, LLM_UC_HAN | LLM_UC_KANA);
}

#endif
