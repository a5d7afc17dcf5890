/*
 * charset.h — bytes in any encoding of the web to UTF-8, decided as a browser decides.
 *
 * The encoding of a page or text file is taken from, in this order:
 *   1. forced:   a name the user gave (llm-cat --encoding NAME) overrides everything;
 *   2. bom:      a byte order mark (UTF-8, UTF-16LE, UTF-16BE): as in the WHATWG "decode"
 *                algorithm, a BOM wins over every label, since it is the bytes themselves;
 *   3. http:     the charset parameter of the HTTP Content-Type (given by the caller);
 *   4. meta:     for HTML, <meta charset=...> or <meta http-equiv="Content-Type"
 *                content="...; charset=..."> in the head (the WHATWG prescan, run over the
 *                whole head rather than its first 1024 bytes: browsers reparse when a later
 *                <meta> changes the encoding, and an archive is not a stream);
 *   5. detected: bytes that are valid UTF-8 are UTF-8; others go to uchardet's statistical
 *                detector (GB18030, Big5, Shift_JIS, EUC-JP, EUC-KR, windows-1250...1258,
 *                ISO-8859-x, KOI8-R and more) over their first 64 KiB;
 *   6. default:  windows-1252 when nothing else decides (as browsers do for Western locales).
 * A label names an encoding as the WHATWG Encoding Standard maps it: gb2312, GBK and x-gbk
 * are decoded as GB18030 (a superset), iso-8859-1 and us-ascii as windows-1252, iso-8859-9
 * as windows-1254, tis-620 as windows-874, shift_jis as windows-31j, euc-kr as windows-949,
 * big5 as Big5-HKSCS. A label that is wrong in a way the bytes prove is overruled: a page
 * declared in a legacy encoding whose non-ASCII bytes are all valid UTF-8 sequences is UTF-8
 * (legacy text of any length practically never is), and a page declared UTF-8 that is not
 * valid UTF-8 goes to detection.
 *
 * Conversion is iconv (the C library's). A byte sequence the encoding cannot decode becomes
 * U+FFFD, so the result is always valid UTF-8, and the number of such sequences is reported.
 * Memory: the output plus a small conversion buffer. Thread safety: an llm_charset holds
 * the detector and the open converters: one per thread.
 */
#ifndef LLM_CHARSET_H
#define LLM_CHARSET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

enum { LLM_CHARSET_FORCED, LLM_CHARSET_BOM, LLM_CHARSET_HTTP, LLM_CHARSET_META,
       LLM_CHARSET_DETECTED, LLM_CHARSET_DEFAULT };

/* "forced", "bom", "http", "meta", "detected", "default". */
const char *llm_charset_source_name(int source);

typedef struct {
	const char *encoding; /* what the bytes were decoded as: "utf-8", "gb18030", "big5",
	                       * "windows-1251", ... (lower case, WHATWG names where they exist) */
	int source;           /* LLM_CHARSET_* */
	size_t replaced;      /* undecodable sequences, each now U+FFFD */
} llm_charset_result;

typedef struct llm_charset llm_charset;
llm_charset *llm_charset_new(void);
void llm_charset_free(llm_charset *c);

/*
 * Decode s[0..n) to UTF-8, appended to out (the BOM is not copied). forced: a name that
 * overrides everything (NULL for auto); http/http_len: the transport label, or NULL;
 * html: look for <meta> labels. Never fails: bytes that nothing decodes become U+FFFD.
 */
void llm_charset_decode(llm_charset *c, const char *s, size_t n, const char *forced,
                        const char *http, size_t http_len, bool html, llm_buf *out,
                        llm_charset_result *r);

/*
 * The decision alone, for a file that is decoded in pieces (llm-cat --lines): choose on its
 * head, then decode each piece with forced = r->encoding.
 */
void llm_charset_choose(llm_charset *c, const char *s, size_t n, const char *http,
                        size_t http_len, bool html, llm_charset_result *r);

/* The canonical name of a label ("GBK" -> "gb18030", " Latin1 " -> "windows-1252"), or NULL
 * when the label is not one of the WHATWG labels. */
const char *llm_charset_canonical(const char *label, size_t n);
/* Whether name can be used as a forced encoding: a WHATWG label or a name iconv knows. */
bool llm_charset_known(const char *name);

/* The label of a <meta> charset declaration in the head of an HTML document, or NULL;
 * *len receives its length. Exposed for tests. */
const char *llm_charset_meta(const char *s, size_t n, size_t *len);

#endif
