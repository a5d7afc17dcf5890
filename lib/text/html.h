/*
 * html.h — HTML to the main text of a page, for training documents.
 *
 * A tolerant single-pass tokenizer in the spirit of the WHATWG tokenizer (tags, attributes,
 * comments, doctypes, CDATA, raw-text elements) that keeps a tree of the elements it opens,
 * with the end tags HTML lets pages leave out (<li>, <p>, cells, rows, dt/dd). What it does:
 *   - drops the content of script, style, noscript, template, head, svg, math, iframe, object,
 *     select, button and of elements with the "hidden" attribute, aria-hidden="true" or an
 *     inline style with display:none / visibility:hidden;
 *   - block elements (p, div, li, h1-h6, tr, br, section, ...) become line breaks, so list
 *     items and headings are lines; a table row is a line with its cells separated by " | ";
 *     <pre> keeps its lines and spaces (minus the newline after <pre>);
 *   - decodes every HTML5 named character reference (the 2231 names of the WHATWG list, table
 *     generated from Python's html.entities.html5 by scripts/gen-html-entities.py) and numeric
 *     references, with the WHATWG rules: legacy names without ';', the Windows-1252 mapping of
 *     &#128;..&#159;, U+FFFD for zero, surrogates and values past U+10FFFF;
 *   - keeps <title> aside (llm_html_title);
 *   - boilerplate removal (when opts.boilerplate), once the text under every element is known:
 *     elements are marked strong (nav, footer, form, menu, dialog, a header outside article/
 *     section/main; class, id or role words such as nav, menu, footer, breadcrumb, cookie,
 *     consent, share, social, comment, related, subscribe, advert, caption, credit, byline,
 *     disclosure, teaser, figcaption elements) or weak (aside; sidebar,
 *     widget, banner, a class "header"). A mark on an element holding half the page's text
 *     or more is void (it wraps the page). The main content is the deepest element holding
 *     half of the text outside marked regions; weak marks count outside it only. Blocks
 *     under a mark go; of the rest, link-dense blocks (links > max_link_density of their
 *     characters) stay only inside the main content next to good text, and short blocks
 *     (< min_block_chars) when a neighbour is good — jusText's context rule. The block with
 *     the most text outside links is never dropped.
 *
 * Memory: output, a block list and an element list proportional to the input. Never reads
 * outside the input; any byte sequence is accepted (invalid UTF-8 is passed through for the
 * normaliser to repair). Thread safety: an llm_html holds scratch state: one per thread.
 */
#ifndef LLM_HTML_H
#define LLM_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

typedef struct {
	bool boilerplate;        /* remove navigation, footers, comments... (default true) */
	double max_link_density; /* 0.5 */
	size_t min_block_chars;  /* 30: shorter blocks survive only next to good blocks */
} llm_html_opts;

#define LLM_HTML_OPTS_DEFAULT { true, 0.5, 30 }

typedef struct llm_html llm_html;
llm_html *llm_html_new(void);
void llm_html_free(llm_html *h);

/* Convert s[0..n) to text, appended to out (lines separated by '\n', no trailing newline). */
void llm_html_to_text(llm_html *h, const char *s, size_t n, const llm_html_opts *o, llm_buf *out);
/* The <title> of the last conversion (entities decoded, white space collapsed), "" if none. */
const char *llm_html_title(const llm_html *h, size_t *len);

/* Decode character references in s[0..n) (text context) and append to out. */
void llm_html_decode_entities(const char *s, size_t n, llm_buf *out);

#endif
