/*
 * normalize.c — one-pass normaliser (see normalize.h).
 *
 * Each code point is first mapped (dropped, folded, or classed as newline / horizontal space /
 * content), then fed to a small writer that holds back pending newlines and pending spaces
 * until the next content character decides whether they survive. Holding back instead of
 * writing and deleting is what makes the result idempotent: the output of the writer never
 * contains a pattern the writer itself would not produce.
 */
#include "normalize.h"

#include <stdint.h>
#include <string.h>

#include "core/err.h"
#include "core/utf8.h"

static const char *const step_names[] = { "repair", "controls", "zero-width", "width",
	                                  "newlines", "spaces", "trim", "blank-lines",
	                                  "width-punct", "ideographic-space" };

int llm_norm_parse(const char *list, unsigned *flags)
{
	*flags = 0;
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ", \t");
		if (n == 0) {
			p++;
			continue;
		}
		if (n == 3 && memcmp(p, "all", 3) == 0) {
			*flags |= LLM_NORM_ALL;
		} else if (n == 7 && memcmp(p, "default", 7) == 0) {
			*flags |= LLM_NORM_DEFAULT;
		} else if (n == 4 && memcmp(p, "none", 4) == 0) {
			/* nothing */
		} else {
			size_t k = 0;
			while (k < sizeof step_names / sizeof *step_names &&
			       !(strlen(step_names[k]) == n && memcmp(step_names[k], p, n) == 0))
				k++;
			if (k == sizeof step_names / sizeof *step_names)
				return llm_fail(LLM_EINVAL, "unknown normalisation step '%.*s'", (int)n, p);
			*flags |= 1u << k;
		}
		p += n;
	}
	return LLM_OK;
}

void llm_norm_format(unsigned flags, llm_buf *out)
{
	size_t start = out->len;
	for (size_t k = 0; k < sizeof step_names / sizeof *step_names; k++) {
		if (!(flags & (1u << k)))
			continue;
		if (out->len > start)
			llm_buf_addc(out, ' ');
		llm_buf_adds(out, step_names[k]);
	}
	if (out->len == start)
		llm_buf_adds(out, "none");
}

enum { C_CONTENT, C_DROP, C_NEWLINE, C_SPACE };

typedef struct {
	const llm_norm_opts *o;
	llm_buf *out;
	size_t nl;            /* pending newlines */
	bool any;             /* something written */
	bool line_content;    /* the current line has content */
	bool prev_space;      /* the last thing written is horizontal space */
	llm_buf ws;           /* TRIM: pending horizontal space */
} writer;

static void flush_newlines(writer *w)
{
	if (!w->nl)
		return;
	if (w->any || !(w->o->flags & LLM_NORM_TRIM)) {
		size_t k = w->nl;
		if ((w->o->flags & LLM_NORM_BLANKS) && k > w->o->max_blank_lines + 1)
			k = w->o->max_blank_lines + 1;
		for (size_t i = 0; i < k; i++)
			llm_buf_addc(w->out, '\n');
		w->any = true;
	}
	w->nl = 0;
}

static void put_space(writer *w, const char *raw, size_t n)
{
	bool collapse = (w->o->flags & LLM_NORM_SPACES) != 0;
	if (w->o->flags & LLM_NORM_TRIM) {
		if (!w->line_content)
			return; /* leading space of a line */
		if (collapse) {
			if (!w->ws.len)
				llm_buf_addc(&w->ws, ' ');
		} else {
			llm_buf_add(&w->ws, raw, n);
		}
		return;
	}
	flush_newlines(w);
	if (collapse) {
		if (w->prev_space)
			return;
		llm_buf_addc(w->out, ' ');
	} else {
		llm_buf_add(w->out, raw, n);
	}
	w->prev_space = true;
	w->any = true;
}

static void put_newline(writer *w)
{
	llm_buf_reset(&w->ws);
	w->nl++;
	w->line_content = false;
	w->prev_space = false;
}

static void put_content(writer *w, const char *raw, size_t n)
{
	flush_newlines(w);
	if (w->ws.len) {
		llm_buf_add(w->out, w->ws.p, w->ws.len);
		llm_buf_reset(&w->ws);
	}
	llm_buf_add(w->out, raw, n);
	w->any = true;
	w->line_content = true;
	w->prev_space = false;
}

/* Horizontal white space: White_Space minus the newline characters. */
static inline bool hspace(uint32_t cp)
{
	if (cp < 0x80)
		return cp == ' ' || cp == '\t';
	return cp != 0x85 && cp != 0x2028 && cp != 0x2029 && llm_uc_is(cp, LLM_UC_SPACE);
}

/* Whether c is outside printable ASCII 0x20..0x7E. */
static inline bool unprintable(unsigned char c)
{
	return c < 0x20 || c >= 0x7F;
}

/*
 * The end of the run s[start..e) that every step leaves as it is, s[start - 1] being
 * printable and not a space: printable ASCII with single spaces between printable
 * characters. It stops at the first unprintable byte (or the end) or at a space before a
 * space, minus a space just before. Eight bytes at a time, by carry-free byte sums.
 */
static size_t plain_run_end(const char *s, size_t start, size_t n)
{
	size_t p = start;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ULL, top = 0x80 * ones, low7 = 0x7F * ones;
	for (; p + 9 <= n; p += 8) {
		uint64_t x;
		memcpy(&x, s + p, 8);
		/* the top bit of each byte: unprintable; a space; a space before a space */
		uint64_t bad = (~((x | top) - 0x20 * ones) | ((x & low7) + ones) | x) & top;
		uint64_t e = x ^ 0x20 * ones;
		uint64_t sp = ~(((e & low7) + low7) | e) & top;
		uint64_t twice = sp & (sp >> 8 | (uint64_t)(s[p + 8] == ' ') << 63);
		if (bad | twice) {
			p += (size_t)__builtin_ctzll(bad | twice) / 8;
			return s[p - 1] == ' ' ? p - 1 : p;
		}
	}
#endif
	while (p < n && !unprintable((unsigned char)s[p]) && !(s[p] == ' ' && p + 1 < n && s[p + 1] == ' '))
		p++;
	return s[p - 1] == ' ' ? p - 1 : p;
}

bool llm_normalize(const char *s, size_t n, const llm_norm_opts *o, llm_buf *out)
{
	unsigned f = o->flags;
	size_t start = out->len;
	writer w = { o, out, 0, false, false, false, LLM_BUF_INIT };
	char enc[4];
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		/* ASCII fast path for the common case: printable, non-space */
		if (c > 0x20 && c < 0x7F) {
			size_t j = plain_run_end(s, i + 1, n);
			put_content(&w, s + i, j - i);
			i = j;
			continue;
		}
		uint32_t cp;
		size_t k = c < 0x80 ? (cp = c, 1) : llm_utf8_decode(s + i, n - i, &cp);
		const char *raw = s + i;
		size_t rawn = k;
		bool invalid = cp == LLM_UTF8_REPLACEMENT && !(k == 3 && memcmp(s + i, "\xEF\xBF\xBD", 3) == 0);
		i += k;
		if (invalid) {
			if (f & LLM_NORM_REPAIR)
				put_content(&w, "\xEF\xBF\xBD", 3);
			else
				put_content(&w, raw, rawn);
			continue;
		}
		int cls = C_CONTENT;
		if (cp == '\n') {
			cls = C_NEWLINE;
		} else if (cp == '\r') {
			if (f & LLM_NORM_NEWLINES) {
				cls = C_NEWLINE;
				if (i < n && s[i] == '\n')
					i++;
			}
		} else if (cp == 0x0B || cp == 0x0C || cp == 0x85 || cp == 0x2028 || cp == 0x2029) {
			if (f & LLM_NORM_NEWLINES)
				cls = C_NEWLINE;
		} else if (cp == 0x3000) {
			if (f & LLM_NORM_IDEO_SPACE) {
				cls = C_SPACE;
				raw = " ";
				rawn = 1;
			}
		} else if (hspace(cp)) {
			cls = C_SPACE;
		} else if ((cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) && (f & LLM_NORM_CONTROLS)) {
			cls = C_DROP;
		} else if ((f & LLM_NORM_ZEROWIDTH) && (cp == 0xAD || llm_uc_is(cp, LLM_UC_ZEROWIDTH))) {
			cls = C_DROP;
		} else if (cp >= 0xFF01 && cp <= 0xFF5E) {
			/* full-width forms: letters and digits are WIDTH, the rest WIDTH_PUNCT */
			uint32_t a = cp - 0xFF01 + 0x21;
			bool alnum = (a >= '0' && a <= '9') || ((a | 0x20) >= 'a' && (a | 0x20) <= 'z');
			if (f & (alnum ? LLM_NORM_WIDTH : LLM_NORM_WIDTH_PUNCT)) {
				enc[0] = (char)a;
				raw = enc;
				rawn = 1;
			}
		}
		switch (cls) {
		case C_CONTENT: put_content(&w, raw, rawn); break;
		case C_SPACE: put_space(&w, raw, rawn); break;
		case C_NEWLINE: put_newline(&w); break;
		default: break;
		}
	}
	if (!(f & LLM_NORM_TRIM)) {
		flush_newlines(&w);
	}
	llm_buf_release(&w.ws);
	if (!out->p)
		llm_buf_grow(out, 0);
	return out->len - start != n || memcmp(out->p + start, s, n) != 0;
}
