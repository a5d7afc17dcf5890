/*
 * html.c — HTML to text (see html.h).
 *
 * One pass over the bytes with a stack of open elements (at most 256 deep; deeper nesting is
 * treated as text of the innermost kept element). Text goes into the current block; a block
 * ends at any block-level tag. Each block remembers its characters, the characters inside
 * links and whether an ancestor marks it as boilerplate, so the boilerplate decision can be
 * taken afterwards with both neighbours known (jusText's context rule).
 */
#include "html.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/utf8.h"

#include "html_entities.h"

enum { F_SKIP = 1, F_PRE = 2, F_LINK = 4, F_BOILER = 8 };

typedef struct {
	size_t start, len;   /* bytes in h->text */
	size_t chars, link_chars;
	bool boiler;
} block;

typedef struct {
	char name[12];
	unsigned flags;
} elem;

struct llm_html {
	elem stack[256];
	int depth;
	llm_buf text;     /* all blocks back to back */
	block *blocks;
	size_t nblocks, cap;
	size_t cur_start; /* start of the current block in text */
	size_t cur_chars, cur_link;
	bool cur_boiler;
	bool space;       /* a space is pending in the current block */
	llm_buf title, tmp;
};

llm_html *llm_html_new(void)
{
	return llm_calloc(1, sizeof(llm_html));
}

void llm_html_free(llm_html *h)
{
	if (!h)
		return;
	llm_buf_release(&h->text);
	llm_buf_release(&h->title);
	llm_buf_release(&h->tmp);
	free(h->blocks);
	free(h);
}

const char *llm_html_title(const llm_html *h, size_t *len)
{
	*len = h->title.len;
	return h->title.p ? h->title.p : "";
}

/* ------------------------------------------------------------------------------------------ */
/* Character references */

static const uint16_t win1252[32] = {
	0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
	0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
	0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178
};

static int entity_find(const char *s, size_t n)
{
	int lo = 0, hi = LLM_HTML_ENTITY_COUNT - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const char *e = html_entities[mid].name;
		size_t el = strlen(e);
		int c = memcmp(e, s, el < n ? el : n);
		if (c == 0)
			c = el < n ? -1 : el > n ? 1 : 0;
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Decode the reference at s[0] == '&'; appends to out and returns bytes consumed (0 = not a
 * reference: the caller copies the '&'). */
static size_t decode_ref(const char *s, size_t n, llm_buf *out)
{
	if (n < 2)
		return 0;
	if (s[1] == '#') {
		size_t i = 2;
		bool hex = i < n && (s[i] == 'x' || s[i] == 'X');
		if (hex)
			i++;
		size_t d0 = i;
		uint32_t v = 0;
		bool big = false;
		while (i < n && (hex ? isxdigit((unsigned char)s[i]) : isdigit((unsigned char)s[i]))) {
			int d = isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10);
			if (v > 0x10FFFF)
				big = true;
			else
				v = v * (hex ? 16 : 10) + (uint32_t)d;
			i++;
		}
		if (i == d0)
			return 0;
		if (i < n && s[i] == ';')
			i++;
		if (big || v > 0x10FFFF || v == 0 || (v >= 0xD800 && v <= 0xDFFF))
			v = 0xFFFD;
		else if (v >= 0x80 && v <= 0x9F)
			v = win1252[v - 0x80];
		char buf[4];
		llm_buf_add(out, buf, llm_utf8_encode(v, buf));
		return i;
	}
	size_t m = 1;
	while (m < n && m <= LLM_HTML_ENTITY_MAXLEN && isalnum((unsigned char)s[m]))
		m++;
	if (m < n && s[m] == ';')
		m++;
	/* longest name in the table that is a prefix (legacy names work without ';') */
	for (size_t k = m; k > 1; k--) {
		int e = entity_find(s + 1, k - 1);
		if (e >= 0) {
			llm_buf_adds(out, html_entities[e].value);
			return k;
		}
	}
	return 0;
}

void llm_html_decode_entities(const char *s, size_t n, llm_buf *out)
{
	size_t i = 0;
	while (i < n) {
		const char *amp = memchr(s + i, '&', n - i);
		size_t j = amp ? (size_t)(amp - s) : n;
		llm_buf_add(out, s + i, j - i);
		if (j >= n)
			break;
		size_t k = decode_ref(s + j, n - j, out);
		if (!k) {
			llm_buf_addc(out, '&');
			k = 1;
		}
		i = j + k;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Element classes */

static bool in_list(const char *name, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

static const char *const skip_tags[] = { "script", "style", "noscript", "template", "head", "svg",
	                                 "math", "iframe", "object", "select", "button", "canvas",
	                                 "textarea", NULL };
static const char *const raw_tags[] = { "script", "style", "noscript", "template", "textarea",
	                                "title", "xmp", NULL };
static const char *const void_tags[] = { "area", "base", "br", "col", "embed", "hr", "img",
	                                 "input", "link", "meta", "param", "source", "track", "wbr",
	                                 NULL };
static const char *const block_tags[] = {
	"address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details", "dialog",
	"div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
	"h4", "h5", "h6", "header", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "p",
	"pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul", NULL
};
static const char *const boiler_tags[] = { "nav", "header", "footer", "aside", "form", "menu",
	                                   NULL };
static const char *const boiler_words[] = {
	"nav", "navbar", "navigation", "navheader", "navfooter", "menu", "footer", "header",
	"sidebar", "breadcrumb", "breadcrumbs", "cookie", "cookies", "banner", "share", "social",
	"related", "toc", "pagination", "masthead", NULL
};
/* Containers of the whole page: their class names describe the page, not a block. */
static const char *const page_tags[] = { "html", "body", "main", "article", NULL };

/* ------------------------------------------------------------------------------------------ */
/* Blocks */

static void end_block(llm_html *h)
{
	size_t len = h->text.len - h->cur_start;
	if (len) {
		if (h->nblocks == h->cap) {
			h->cap = h->cap ? 2 * h->cap : 64;
			h->blocks = llm_realloc(h->blocks, h->cap * sizeof *h->blocks);
		}
		block *b = &h->blocks[h->nblocks++];
		b->start = h->cur_start;
		b->len = len;
		b->chars = h->cur_chars;
		b->link_chars = h->cur_link;
		b->boiler = h->cur_boiler;
	}
	h->cur_start = h->text.len;
	h->cur_chars = h->cur_link = 0;
	h->cur_boiler = false;
	h->space = false;
}

static unsigned top_flags(const llm_html *h)
{
	return h->depth ? h->stack[h->depth - 1].flags : 0;
}

/* Append decoded text s[0..n) to the current block. */
static void add_text(llm_html *h, const char *s, size_t n)
{
	unsigned f = top_flags(h);
	if (f & F_SKIP)
		return;
	llm_buf_reset(&h->tmp);
	llm_html_decode_entities(s, n, &h->tmp);
	const char *t = h->tmp.p;
	size_t tn = h->tmp.len;
	if (f & F_BOILER)
		h->cur_boiler = true;
	for (size_t i = 0; i < tn; i++) {
		unsigned char c = (unsigned char)t[i];
		if (f & F_PRE) {
			llm_buf_addc(&h->text, (char)c);
		} else if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f') {
			h->space = h->text.len > h->cur_start;
			continue;
		} else {
			if (h->space)
				llm_buf_addc(&h->text, ' ');
			h->space = false;
			llm_buf_addc(&h->text, (char)c);
		}
		if ((c & 0xC0) != 0x80) {
			h->cur_chars++;
			if (f & F_LINK)
				h->cur_link++;
		}
	}
}

/* Attribute value of name in the tag's attribute text a[0..n), or NULL. */
static const char *attr(const char *a, size_t n, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i + nl <= n; i++) {
		if (strncasecmp(a + i, name, nl) != 0 || (i > 0 && !isspace((unsigned char)a[i - 1])))
			continue;
		size_t j = i + nl;
		if (j < n && (isalnum((unsigned char)a[j]) || a[j] == '-'))
			continue;
		while (j < n && isspace((unsigned char)a[j]))
			j++;
		if (j >= n || a[j] != '=') {
			*vlen = 0;
			return a + j;
		}
		j++;
		while (j < n && isspace((unsigned char)a[j]))
			j++;
		char q = j < n && (a[j] == '"' || a[j] == '\'') ? a[j++] : 0;
		size_t k = j;
		while (k < n && (q ? a[k] != q : !isspace((unsigned char)a[k])))
			k++;
		*vlen = k - j;
		return a + j;
	}
	return NULL;
}

/* Whether an attribute value has one of words as a whole token (tokens split at anything
 * but letters and digits), case-insensitively: "region-navigation" has "navigation", but
 * "no-sidebars" has no "sidebar". */
static bool has_word(const char *v, size_t n, const char *const *words)
{
	for (size_t i = 0; i < n;) {
		while (i < n && !isalnum((unsigned char)v[i]))
			i++;
		size_t j = i;
		while (j < n && isalnum((unsigned char)v[j]))
			j++;
		for (int k = 0; words[k] && j > i; k++)
			if (strlen(words[k]) == j - i && strncasecmp(words[k], v + i, j - i) == 0)
				return true;
		i = j;
	}
	return false;
}

static unsigned open_flags(const char *name, const char *a, size_t an)
{
	unsigned f = 0;
	size_t vl;
	const char *v;
	if (in_list(name, skip_tags))
		f |= F_SKIP;
	if (strcmp(name, "pre") == 0)
		f |= F_PRE;
	if (strcmp(name, "a") == 0)
		f |= F_LINK;
	if (in_list(name, boiler_tags))
		f |= F_BOILER;
	if (attr(a, an, "hidden", &vl))
		f |= F_SKIP;
	if ((v = attr(a, an, "aria-hidden", &vl)) && vl == 4 && strncasecmp(v, "true", 4) == 0)
		f |= F_SKIP;
	if ((v = attr(a, an, "style", &vl))) {
		char buf[256];
		size_t k = 0;
		for (size_t i = 0; i < vl && k + 1 < sizeof buf; i++)
			if (!isspace((unsigned char)v[i]))
				buf[k++] = (char)tolower((unsigned char)v[i]);
		buf[k] = 0;
		if (strstr(buf, "display:none") || strstr(buf, "visibility:hidden"))
			f |= F_SKIP;
	}
	if (in_list(name, page_tags))
		return f;
	if (((v = attr(a, an, "class", &vl)) && has_word(v, vl, boiler_words)) ||
	    ((v = attr(a, an, "id", &vl)) && has_word(v, vl, boiler_words)) ||
	    ((v = attr(a, an, "role", &vl)) && has_word(v, vl, (const char *const[]){ "navigation", "banner", "contentinfo", NULL })))
		f |= F_BOILER;
	return f;
}

/* Skip raw text until "</name" (case-insensitive); returns the index of the '<' or n. */
static size_t raw_end(const char *s, size_t n, size_t i, const char *name)
{
	size_t nl = strlen(name);
	for (; i + 2 + nl <= n; i++)
		if (s[i] == '<' && s[i + 1] == '/' && strncasecmp(s + i + 2, name, nl) == 0 &&
		    (i + 2 + nl == n || !isalnum((unsigned char)s[i + 2 + nl])))
			return i;
	return n;
}

static void collapse_title(llm_html *h, const char *s, size_t n)
{
	llm_buf_reset(&h->tmp);
	llm_html_decode_entities(s, n, &h->tmp);
	llm_buf_reset(&h->title);
	bool sp = false;
	for (size_t i = 0; i < h->tmp.len; i++) {
		char c = h->tmp.p[i];
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f') {
			sp = h->title.len > 0;
			continue;
		}
		if (sp)
			llm_buf_addc(&h->title, ' ');
		sp = false;
		llm_buf_addc(&h->title, c);
	}
}

void llm_html_to_text(llm_html *h, const char *s, size_t n, const llm_html_opts *o, llm_buf *out)
{
	h->depth = 0;
	llm_buf_reset(&h->text);
	llm_buf_reset(&h->title);
	h->nblocks = 0;
	h->cur_start = 0;
	h->cur_chars = h->cur_link = 0;
	h->cur_boiler = false;
	h->space = false;
	size_t i = 0;
	while (i < n) {
		const char *lt = memchr(s + i, '<', n - i);
		size_t j = lt ? (size_t)(lt - s) : n;
		if (j > i)
			add_text(h, s + i, j - i);
		if (j >= n)
			break;
		i = j;
		/* comments, doctype, processing instructions, CDATA */
		if (i + 1 < n && (s[i + 1] == '!' || s[i + 1] == '?')) {
			if (n - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
				const char *e = memmem(s + i + 4, n - i - 4, "-->", 3);
				i = e ? (size_t)(e - s) + 3 : n;
			} else if (n - i >= 9 && memcmp(s + i, "<![CDATA[", 9) == 0) {
				const char *e = memmem(s + i + 9, n - i - 9, "]]>", 3);
				size_t end = e ? (size_t)(e - s) : n;
				if (!(top_flags(h) & F_SKIP))
					add_text(h, s + i + 9, end - i - 9);
				i = e ? end + 3 : n;
			} else {
				const char *e = memchr(s + i, '>', n - i);
				i = e ? (size_t)(e - s) + 1 : n;
			}
			continue;
		}
		bool end = i + 1 < n && s[i + 1] == '/';
		size_t k = i + 1 + end;
		if (k >= n || !isalpha((unsigned char)s[k])) {
			add_text(h, "&lt;", 4); /* a stray '<' is text */
			i++;
			continue;
		}
		char name[12];
		size_t nl = 0;
		while (k < n && !isspace((unsigned char)s[k]) && s[k] != '/' && s[k] != '>') {
			if (nl < sizeof name - 1)
				name[nl++] = (char)tolower((unsigned char)s[k]);
			k++;
		}
		name[nl] = 0;
		/* attributes up to the closing '>' outside quotes */
		size_t a0 = k;
		char q = 0;
		while (k < n && (q || s[k] != '>')) {
			if (q && s[k] == q)
				q = 0;
			else if (!q && (s[k] == '"' || s[k] == '\'') && k > a0 && (s[k - 1] == '=' || isspace((unsigned char)s[k - 1])))
				q = s[k];
			k++;
		}
		size_t a1 = k;
		i = k < n ? k + 1 : n;
		bool is_block = in_list(name, block_tags);
		if (end) {
			int d = h->depth - 1;
			while (d >= 0 && strcmp(h->stack[d].name, name) != 0)
				d--;
			if (d >= 0) {
				if (is_block || (h->stack[d].flags & F_PRE))
					end_block(h);
				h->depth = d;
			} else if (is_block) {
				end_block(h);
			}
			if (strcmp(name, "td") == 0 || strcmp(name, "th") == 0)
				h->space = true;
			continue;
		}
		if (strcmp(name, "title") == 0) {
			size_t e = raw_end(s, n, i, name);
			if (!h->title.len)
				collapse_title(h, s + i, e - i);
			const char *gt = e < n ? memchr(s + e, '>', n - e) : NULL;
			i = gt ? (size_t)(gt - s) + 1 : n;
			continue;
		}
		unsigned f = open_flags(name, s + a0, a1 - a0) | top_flags(h);
		if (in_list(name, raw_tags) && (f & F_SKIP)) {
			size_t e = raw_end(s, n, i, name);
			const char *gt = e < n ? memchr(s + e, '>', n - e) : NULL;
			i = gt ? (size_t)(gt - s) + 1 : n;
			continue;
		}
		if (is_block || strcmp(name, "br") == 0)
			end_block(h);
		bool selfclose = a1 > a0 && s[a1 - 1] == '/';
		if (in_list(name, void_tags) || selfclose)
			continue;
		if (h->depth < (int)(sizeof h->stack / sizeof *h->stack)) {
			elem *e = &h->stack[h->depth++];
			memcpy(e->name, name, nl + 1);
			e->flags = f;
		}
	}
	end_block(h);

	/* boilerplate: marked or link-dense blocks are bad; short blocks take their neighbours' */
	size_t nb = h->nblocks;
	unsigned char *cls = llm_malloc(nb + 1); /* 0 bad, 1 good, 2 short (undecided) */
	for (size_t b = 0; b < nb; b++) {
		block *bl = &h->blocks[b];
		if (!o->boilerplate) {
			cls[b] = 1;
			continue;
		}
		double ld = bl->chars ? (double)bl->link_chars / (double)bl->chars : 0;
		if (bl->boiler || ld > o->max_link_density)
			cls[b] = 0;
		else if (bl->chars < o->min_block_chars)
			cls[b] = 2;
		else
			cls[b] = 1;
	}
	for (size_t b = 0; b < nb; b++) {
		if (cls[b] != 2)
			continue;
		/* a short block stays when the nearest decided block on either side is good */
		int prev = -1, next = -1;
		for (size_t k = b; k-- > 0;)
			if (cls[k] < 2) {
				prev = cls[k];
				break;
			}
		for (size_t k = b + 1; k < nb; k++)
			if (cls[k] < 2) {
				next = cls[k];
				break;
			}
		cls[b] = (prev == 1 || next == 1 || (prev < 0 && next < 0)) ? 3 : 4;
	}
	bool first = true;
	for (size_t b = 0; b < nb; b++) {
		if (cls[b] != 1 && cls[b] != 3)
			continue;
		if (!first)
			llm_buf_addc(out, '\n');
		first = false;
		llm_buf_add(out, h->text.p + h->blocks[b].start, h->blocks[b].len);
	}
	if (!out->p)
		llm_buf_grow(out, 0);
	free(cls);
}
