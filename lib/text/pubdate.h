/*
 * pubdate.h — the publication date of a web page, from the page itself (htmldate's sources).
 *
 * A crawl's WARC-Date says when a page was fetched, not when it was written; freshness weights
 * want the latter. The sources, most trusted first (the first that gives a valid date wins):
 *   1. markup that names the publication date: <meta> whose property, name, itemprop or
 *      http-equiv is article:published_time, og:published_time, DC.date, DC.date.issued,
 *      DC.date.created, dcterms.created, dcterms.issued, dcterms.date, pubdate, publishdate,
 *      publish-date, date, datePublished, parsely-pub-date, sailthru.date, citation_date,
 *      citation_publication_date (case-insensitive), its content the date; any element with
 *      itemprop="datePublished" (content or datetime); <time pubdate datetime=...>; the
 *      "datePublished" member of JSON-LD (<script type="application/ld+json">);
 *   2. the URL's date path: /2023/05/12/, /2023-05-12/, /20230512/ between slashes or
 *      before a '-' or '_' of the slug;
 *   3. the first <time datetime=...>;
 *   4. dated text, the first one after the first <h1> (else anywhere in the page): a date
 *      labelled 发布时间, 发布日期, 发表时间, 发表于, 时间, 日期, Published, Posted, Updated
 *      (with ':' or '：'), then Chinese dates 2023年5月12日.
 * A date is read as YYYY-MM-DD, YYYY/MM/DD, YYYY.MM.DD (time and zone after it ignored),
 * YYYYMMDD, YYYY年M月D日, "May 12, 2023", "12 May 2023" (English month names, abbreviated or
 * not); it must be a real calendar day of a year 1990..2099.
 *
 * Work: one pass over the page for sources 1 and 3 plus one bounded pass over the text for 4
 * (each byte looked at a constant number of times); no allocation. Thread safe (no state).
 */
#ifndef LLM_PUBDATE_H
#define LLM_PUBDATE_H

#include <stdbool.h>
#include <stddef.h>

/* The publication date of the page html[0..n) fetched from url[0..ulen) (url may be NULL),
 * written to out as "YYYY-MM-DD" with its terminating NUL; false, out untouched, if none. */
bool llm_pubdate_find(const char *html, size_t n, const char *url, size_t ulen, char out[11]);

/* The date at the start of s[0..n) in one of the forms above, as "YYYY-MM-DD"; false if none. */
bool llm_pubdate_parse(const char *s, size_t n, char out[11]);

#endif
