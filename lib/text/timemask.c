/*
 * timemask.c — one PCRE2 pattern (JIT) for absolute dates and times (see timemask.h).
 *
 * PCRE2 takes the first alternative that matches, not the longest, so the alternatives are
 * ordered from the most to the least specific (a full date before a month-year before a
 * clock time). Boundaries are look-arounds rather than \b: with UCP a CJK character is a
 * word character, and "截至2023年" must still match at the digit.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "timemask.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

#define MONTH "(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept\\.?|Sep\\.?|Oct\\.?|Nov\\.?|Dec\\.?)"
#define ORD "(?:st|nd|rd|th)?"
#define NB "(?<![\\p{L}\\p{N}])"
#define NA "(?![\\p{L}\\p{N}])"
#define CNUM "[〇零一二三四五六七八九十]"
#define YEAR4 "(?:1[5-9]|20|21)\\d\\d"

static const char pattern[] =
	/* ISO date(-time) */
	"(?<!\\d)" YEAR4 "-[01]?\\d-[0-3]?\\d(?:[T ][0-2]?\\d:[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?"
	"(?:Z|[+-][0-2]\\d:?[0-5]\\d)?)?(?!\\d)"
	"|(?<!\\d)" YEAR4 "[/.][01]?\\d[/.][0-3]?\\d(?![\\d.])"
	"|(?<![\\d./])[0-3]?\\d[/.-][0-3]?\\d[/.-]" YEAR4 "(?!\\d)"
	/* Chinese: year-month-day, year-month, month-day, year */
	"|(?:(?<!\\d)" YEAR4 "|" CNUM "{4})\\s?年\\s?(?:[01]?\\d|" CNUM "{1,3})\\s?月(?:\\s?(?:[0-3]?\\d|" CNUM "{1,3})\\s?[日号])?"
	"|(?<!\\d)(?:[01]?\\d|" CNUM "{1,3})月(?:[0-3]?\\d|" CNUM "{1,3})[日号]"
	"|(?:(?<!\\d)" YEAR4 "|" CNUM "{4})年"
	"|(?:上午|下午|早上|晚上|凌晨|中午|傍晚)?(?<!\\d)[0-2]?\\d[点時时](?:[0-5]?\\d分)?(?:[0-5]?\\d秒)?(?![\\d])"
	/* English: month day(, year) / day month( year) / month year */
	"|" NB "(?i:(?:mid|early|late)-)?" MONTH "\\s+[0-3]?\\d" ORD "(?:,?\\s+" YEAR4 ")?" NA
	"|" NB "[0-3]?\\d" ORD "\\s+(?:of\\s+)?" MONTH "(?:,?\\s+" YEAR4 ")?" NA
	"|" NB "(?i:(?:mid|early|late)-)?" MONTH ",?\\s+" YEAR4 NA
	/* clock times */
	"|(?<![\\d:.])[0-2]?\\d:[0-5]\\d(?::[0-5]\\d)?(?:\\s?(?i:[ap]\\.m\\.|[ap]m)" NA ")?(?![\\d:])"
	"|" NB "(?:1[0-2]|0?[1-9])\\s?(?i:[ap]\\.m\\.|[ap]m" NA ")";

static const char years[] = "|(?<![\\p{L}\\p{N}])" YEAR4 "(?![\\p{L}\\p{N}])";

struct llm_timemask {
	pcre2_code *re;
	char *placeholder;
};

struct llm_timemask_scratch {
	pcre2_match_data *md;
};

llm_timemask *llm_timemask_new(const char *placeholder, unsigned flags)
{
	char buf[sizeof pattern + sizeof years];
	memcpy(buf, pattern, sizeof pattern);
	if (flags & LLM_TIME_YEARS)
		strcat(buf, years);
	int err;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)buf, PCRE2_ZERO_TERMINATED,
	                               PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		llm_fail(LLM_EINTERNAL, "time pattern at offset %zu: %s", (size_t)off, (char *)msg);
		return NULL;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	llm_timemask *t = llm_calloc(1, sizeof *t);
	t->re = re;
	t->placeholder = llm_strdup(placeholder ? placeholder : "[TIME]");
	return t;
}

void llm_timemask_free(llm_timemask *t)
{
	if (!t)
		return;
	pcre2_code_free(t->re);
	free(t->placeholder);
	free(t);
}

llm_timemask_scratch *llm_timemask_scratch_new(const llm_timemask *t)
{
	llm_timemask_scratch *s = llm_calloc(1, sizeof *s);
	s->md = pcre2_match_data_create_from_pattern(t->re, NULL);
	return s;
}

void llm_timemask_scratch_free(llm_timemask_scratch *s)
{
	if (!s)
		return;
	pcre2_match_data_free(s->md);
	free(s);
}

size_t llm_timemask_apply(const llm_timemask *t, llm_timemask_scratch *s, const char *str,
                          size_t n, llm_buf *out)
{
	size_t pos = 0, copied = 0, count = 0;
	while (pos <= n) {
		int rc = pcre2_match(t->re, (PCRE2_SPTR)str, n, pos, 0, s->md, NULL);
		if (rc < 0)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
		if (ov[1] == ov[0]) { /* no empty matches in this pattern, but never loop */
			pos = ov[1] + 1;
			continue;
		}
		llm_buf_add(out, str + copied, ov[0] - copied);
		llm_buf_adds(out, t->placeholder);
		copied = pos = ov[1];
		count++;
	}
	llm_buf_add(out, str + copied, n - copied);
	return count;
}
