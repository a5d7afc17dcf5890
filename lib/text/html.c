/*
 * html.c — HTML to text (see html.h).
 *
 * One pass over the bytes with a stack of open elements (at most 256 deep; deeper nesting is
 * treated as text of the innermost element). Every element opened is a node of a tree kept
 * in an array (a parent always precedes its children), with its own boilerplate mark. Text
 * goes into the current block; a block ends at any block-level tag and belongs to the
 * innermost element open when its text began. The decisions come after the pass, when every
 * node knows how much text it holds: see decide().
 */
#include "html.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/utf8.h"

#include "html_entities.h"

/* Inherited through the stack of open elements. */
enum { F_SKIP = 1, F_PRE = 2, F_LINK = 4, F_SECTION = 8 };

/* Boilerplate marks of an element (see boiler words below). */
enum { MARK_NONE, MARK_WEAK, MARK_STRONG };

typedef struct {
	int parent;          /* node index, -1 at the top */
	unsigned char mark;  /* MARK_* of the element itself */
	uint32_t chars;      /* characters of the blocks under it (after the pass) */
	uint32_t link;       /* of those, inside links */
} node;

typedef struct {
	size_t start, len;   /* bytes in h->text */
	uint32_t chars, link;
	int node;            /* innermost element open when its text began */
} block;

typedef struct {
	char name[12];
	unsigned flags;  /* F_*, inherited */
	unsigned props;  /* P_* of the element */
	int node;
} elem;

struct llm_html {
	elem stack[256];
	int depth;
	llm_buf text;        /* all blocks back to back */
	block *blocks;
	size_t nblocks, cap;
	node *nodes;
	size_t nnodes, ncap;
	size_t cur_start;    /* start of the current block in text */
	uint32_t cur_chars, cur_link;
	int cur_node;        /* the current block's node, -2 before its first text */
	bool space;          /* a space is pending in the current block */
	bool cell;           /* a table cell ended: the next text of the row follows " | " */
	llm_buf title, tmp;
	unsigned char *cls, *nbr; /* per block decision scratch */
	size_t cls_cap, nbr_cap;
	unsigned char *ndec; /* per node decision scratch */
	int *ndepth;
	size_t ndec_cap, ndepth_cap;
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
	free(h->nodes);
	free(h->cls);
	free(h->nbr);
	free(h->ndec);
	free(h->ndepth);
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
/* Elements */

enum {
	P_SKIP = 1 << 0,    /* content is not text (script, svg, form controls, ...) */
	P_RAW = 1 << 1,     /* raw text element: no tags inside */
	P_VOID = 1 << 2,    /* no end tag */
	P_BLOCK = 1 << 3,   /* starts and ends a block */
	P_STRONG = 1 << 4,  /* navigation, footer, form, menu, dialog: boilerplate wherever it is */
	P_WEAK = 1 << 5,    /* aside: boilerplate outside the main content */
	P_PAGE = 1 << 6,    /* html, body, main, article: their class names describe the page */
	P_SECTION = 1 << 7, /* sectioning: a header inside is the section's, not the site's */
	P_HEADER = 1 << 8,
	P_CELL = 1 << 9,    /* td, th: cells of a row, separated by " | " */
	P_PRE = 1 << 10,
	P_LINK = 1 << 11,
};

/* Every element the converter treats specially, sorted for binary search. */
static const struct {
	char name[11];
	unsigned short p;
} tags[] = {
	{ "a", P_LINK }, { "address", P_BLOCK }, { "area", P_VOID },
	{ "article", P_BLOCK | P_PAGE | P_SECTION }, { "aside", P_BLOCK | P_WEAK }, { "base", P_VOID },
	{ "blockquote", P_BLOCK }, { "body", P_BLOCK | P_PAGE }, { "br", P_BLOCK | P_VOID },
	{ "button", P_SKIP }, { "canvas", P_SKIP }, { "caption", P_BLOCK }, { "col", P_VOID },
	{ "dd", P_BLOCK }, { "details", P_BLOCK }, { "dialog", P_BLOCK | P_STRONG }, { "div", P_BLOCK },
	{ "dl", P_BLOCK }, { "dt", P_BLOCK }, { "embed", P_VOID }, { "fieldset", P_BLOCK },
	{ "figcaption", P_BLOCK | P_STRONG }, { "figure", P_BLOCK }, { "footer", P_BLOCK | P_STRONG },
	{ "form", P_BLOCK | P_STRONG }, { "h1", P_BLOCK }, { "h2", P_BLOCK }, { "h3", P_BLOCK },
	{ "h4", P_BLOCK }, { "h5", P_BLOCK }, { "h6", P_BLOCK }, { "head", P_SKIP },
	{ "header", P_BLOCK | P_HEADER }, { "hr", P_BLOCK | P_VOID }, { "html", P_BLOCK | P_PAGE },
	{ "iframe", P_SKIP }, { "img", P_VOID }, { "input", P_VOID }, { "legend", P_BLOCK },
	{ "li", P_BLOCK }, { "link", P_VOID }, { "main", P_BLOCK | P_PAGE | P_SECTION },
	{ "math", P_SKIP }, { "menu", P_BLOCK | P_STRONG }, { "meta", P_VOID },
	{ "nav", P_BLOCK | P_STRONG }, { "noscript", P_SKIP | P_RAW }, { "object", P_SKIP },
	{ "ol", P_BLOCK }, { "p", P_BLOCK }, { "param", P_VOID }, { "pre", P_BLOCK | P_PRE },
	{ "script", P_SKIP | P_RAW }, { "section", P_BLOCK | P_SECTION }, { "select", P_SKIP },
	{ "source", P_VOID }, { "style", P_SKIP | P_RAW }, { "summary", P_BLOCK }, { "svg", P_SKIP },
	{ "table", P_BLOCK }, { "tbody", P_BLOCK }, { "td", P_CELL }, { "template", P_SKIP | P_RAW },
	{ "textarea", P_SKIP | P_RAW }, { "tfoot", P_BLOCK }, { "th", P_CELL }, { "thead", P_BLOCK },
	{ "title", P_RAW }, { "tr", P_BLOCK }, { "track", P_VOID }, { "ul", P_BLOCK },
	{ "wbr", P_VOID }, { "xmp", P_RAW },
};

static unsigned tag_props(const char *name)
{
	size_t lo = 0, hi = sizeof tags / sizeof tags[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(tags[mid].name, name);
		if (c == 0)
			return tags[mid].p;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * Words of class and id attributes that mark boilerplate, matched against the tokens of the
 * value (split at anything but letters and digits, and before an upper-case letter after a
 * lower-case one: "site-header", "navBar"). A word ending in '*' also matches as a prefix
 * ("comment*": commentlist, comments-area). Strong words are boilerplate wherever they are:
 * navigation, footers, cookie and consent banners, share bars, comments, related posts, ads.
 * Weak words name regions that are boilerplate as page furniture but content inside the
 * main text: a DocBook "sidebar" is a box of the chapter, an article's "header" holds its
 * title. Readability, jusText and trafilatura use lists in this spirit.
 */
static const char *const strong_words[] = {
	"nav*", "menu*", "footer*", "breadcrumb*", "cookie*", "consent*", "gdpr", "share*",
	"sharing", "social*", "comment*", "disqus", "respond", "related*", "relatedposts",
	"pagination", "pager", "paging", "subscribe*", "newsletter*", "signup", "signin", "login",
	"advert*", "ads", "sponsor*", "promo*", "popup*", "modal*", "skip", "masthead", "toc",
	"tagcloud", "copyright", "topbar", "search", "caption*", "credit*", "byline*",
	"disclosure", "affiliate*", "outbrain", "taboola", "recirc*", "readmore", "teaser*",
	"trending", "mostread", "mostpopular", NULL
};
static const char *const weak_words[] = { "header*", "sidebar*", "widget*", "banner", "aside",
	                                  NULL };

static bool word_is(const char *t, size_t n, const char *w)
{
	if (tolower((unsigned char)t[0]) != w[0]) /* the words are lower case */
		return false;
	size_t k = strlen(w);
	bool prefix = w[k - 1] == '*';
	if (prefix)
		k--;
	return (prefix ? n >= k : n == k) && strncasecmp(t, w, k) == 0;
}

static bool has_word(const char *v, size_t n, const char *const *words)
{
	for (size_t i = 0; i < n;) {
		while (i < n && !isalnum((unsigned char)v[i]))
			i++;
		size_t j = i;
		while (j < n && isalnum((unsigned char)v[j]) &&
		       !(j > i && islower((unsigned char)v[j - 1]) && isupper((unsigned char)v[j])))
			j++;
		for (int k = 0; words[k] && j > i; k++)
			if (word_is(v + i, j - i, words[k]))
				return true;
		i = j;
	}
	return false;
}

static bool value_is(const char *v, size_t n, const char *s)
{
	return strlen(s) == n && strncasecmp(v, s, n) == 0;
}

/* What the attributes a[0..n) of an element say: hidden, and its boilerplate mark. */
static void scan_attrs(const char *a, size_t n, bool page, bool *hidden, unsigned char *mark)
{
	size_t i = 0;
	while (i < n) {
		while (i < n && (isspace((unsigned char)a[i]) || a[i] == '/'))
			i++;
		size_t k0 = i;
		while (i < n && !isspace((unsigned char)a[i]) && a[i] != '=' && a[i] != '/')
			i++;
		const char *key = a + k0;
		size_t kl = i - k0;
		while (i < n && isspace((unsigned char)a[i]))
			i++;
		const char *v = a + i;
		size_t vl = 0;
		if (i < n && a[i] == '=') {
			i++;
			while (i < n && isspace((unsigned char)a[i]))
				i++;
			char q = i < n && (a[i] == '"' || a[i] == '\'') ? a[i++] : 0;
			v = a + i;
			while (i < n && (q ? a[i] != q : !isspace((unsigned char)a[i])))
				i++;
			vl = (size_t)(a + i - v);
			if (q && i < n)
				i++;
		}
		if (!kl) {
			i++;
			continue;
		}
		if (value_is(key, kl, "hidden")) {
			*hidden = true;
		} else if (value_is(key, kl, "aria-hidden")) {
			if (value_is(v, vl, "true"))
				*hidden = true;
		} else if (value_is(key, kl, "style")) {
			char buf[256];
			size_t k = 0;
			for (size_t j = 0; j < vl && k + 1 < sizeof buf; j++)
				if (!isspace((unsigned char)v[j]))
					buf[k++] = (char)tolower((unsigned char)v[j]);
			buf[k] = 0;
			if (strstr(buf, "display:none") || strstr(buf, "visibility:hidden"))
				*hidden = true;
		} else if (page) {
			continue;
		} else if (value_is(key, kl, "class") || value_is(key, kl, "id")) {
			if (has_word(v, vl, strong_words))
				*mark = MARK_STRONG;
			else if (*mark == MARK_NONE && has_word(v, vl, weak_words))
				*mark = MARK_WEAK;
		} else if (value_is(key, kl, "role")) {
			if (value_is(v, vl, "navigation") || value_is(v, vl, "contentinfo") ||
			    value_is(v, vl, "search") || value_is(v, vl, "menu") ||
			    value_is(v, vl, "menubar") || value_is(v, vl, "dialog") ||
			    value_is(v, vl, "alertdialog"))
				*mark = MARK_STRONG;
			else if (*mark == MARK_NONE &&
			         (value_is(v, vl, "banner") || value_is(v, vl, "complementary")))
				*mark = MARK_WEAK;
		}
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Blocks and nodes */

static void end_block(llm_html *h)
{
	/* a <pre> ends with the newline of its last line */
	while (h->text.len > h->cur_start && (h->text.p[h->text.len - 1] == '\n' ||
	                                      h->text.p[h->text.len - 1] == '\r'))
		llm_buf_truncate(&h->text, h->text.len - 1);
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
		b->link = h->cur_link;
		b->node = h->cur_node < 0 ? -1 : h->cur_node;
	}
	h->cur_start = h->text.len;
	h->cur_chars = h->cur_link = 0;
	h->cur_node = -2;
	h->space = h->cell = false;
}

static unsigned top_flags(const llm_html *h)
{
	return h->depth ? h->stack[h->depth - 1].flags : 0;
}

static int new_node(llm_html *h, int parent, unsigned char mark)
{
	if (h->nnodes == h->ncap) {
		h->ncap = h->ncap ? 2 * h->ncap : 256;
		h->nodes = llm_realloc(h->nodes, h->ncap * sizeof *h->nodes);
	}
	node *n = &h->nodes[h->nnodes];
	n->parent = parent;
	n->mark = mark;
	n->chars = n->link = 0;
	return (int)h->nnodes++;
}

/* Append text t[0..tn), references decoded, to the current block: white space collapsed
 * (kept in <pre>), characters counted. */
static bool is_space(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f';
}

static void add_decoded(llm_html *h, const char *t, size_t tn)
{
	unsigned f = top_flags(h);
	if (f & F_SKIP)
		return;
	size_t i = 0;
	while (i < tn) {
		size_t j;
		if (f & F_PRE) {
			/* the newline after <pre> is not content (HTML §13.2.6.4.7), nor any before
			 * the first line */
			while (i < tn && t[i] == '\n' && h->text.len == h->cur_start)
				i++;
			j = tn;
		} else {
			/* a run of white space is one space, and none at the start of a block */
			for (; i < tn && is_space(t[i]); i++)
				h->space = h->text.len > h->cur_start;
			if (i == tn)
				break;
			for (j = i; j < tn && !is_space(t[j]); j++)
				;
			if (h->cell && h->text.len > h->cur_start)
				llm_buf_add(&h->text, " | ", 3);
			else if (h->space)
				llm_buf_addc(&h->text, ' ');
			h->space = h->cell = false;
		}
		llm_buf_add(&h->text, t + i, j - i);
		uint32_t k = 0;
		for (size_t x = i; x < j; x++)
			k += ((unsigned char)t[x] & 0xC0) != 0x80;
		if (k) {
			if (h->cur_node == -2)
				h->cur_node = h->depth ? h->stack[h->depth - 1].node : -1;
			h->cur_chars += k;
			if (f & F_LINK)
				h->cur_link += k;
		}
		i = j;
	}
}

/* Append the text s[0..n) of the page to the current block. */
static void add_text(llm_html *h, const char *s, size_t n)
{
	if (top_flags(h) & F_SKIP)
		return;
	if (!memchr(s, '&', n)) {
		add_decoded(h, s, n);
		return;
	}
	llm_buf_reset(&h->tmp);
	llm_html_decode_entities(s, n, &h->tmp);
	add_decoded(h, h->tmp.p, h->tmp.len);
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

/* Pop to the open element at stack depth d, if it is named name (the end tag an HTML5 parser
 * implies), searching down from the top and stopping at an element that bounds it. */
static void pop_to(llm_html *h, const char *name, const char *const *bounds, bool block_bounds)
{
	for (int d = h->depth - 1; d >= 0; d--) {
		const elem *e = &h->stack[d];
		if (strcmp(e->name, name) == 0) {
			h->depth = d;
			return;
		}
		for (int k = 0; bounds[k]; k++)
			if (strcmp(e->name, bounds[k]) == 0)
				return;
		if (block_bounds && (e->props & P_BLOCK))
			return;
	}
}

/* The end tags HTML leaves out (HTML §13.1.2.4): a new <li> ends the open one, a block ends
 * an open <p>, a cell ends the open cell, a row the open row, dt/dd the open dt/dd. Without
 * this, the tree nests every item of an unclosed list inside the one before. */
static void close_implied(llm_html *h, const char *name, unsigned p)
{
	static const char *const list[] = { "ul", "ol", "menu", NULL };
	static const char *const row[] = { "tr", "table", NULL };
	static const char *const table[] = { "table", NULL };
	static const char *const dl[] = { "dl", NULL };
	static const char *const none[] = { NULL };
	if (strcmp(name, "li") == 0)
		pop_to(h, "li", list, false);
	else if (p & P_CELL) {
		pop_to(h, "td", row, false);
		pop_to(h, "th", row, false);
	} else if (strcmp(name, "tr") == 0)
		pop_to(h, "tr", table, false);
	else if (strcmp(name, "dt") == 0 || strcmp(name, "dd") == 0) {
		pop_to(h, "dt", dl, false);
		pop_to(h, "dd", dl, false);
	}
	if ((p & P_BLOCK) && strcmp(name, "br") != 0)
		pop_to(h, "p", none, true);
}

/*
 * An element starts: its marks, what it inherits, the end tags it implies, the block it
 * starts. Pushed on the stack unless it is void or self-closed (or the stack is full);
 * returns true when it was pushed and its content is to be skipped. implied: apply the
 * end tags HTML omits (a tree builder that already did gives false).
 */
static bool start_tag(llm_html *h, const char *name, unsigned p, const char *a, size_t an,
                      bool selfclose, bool implied)
{
	unsigned f = top_flags(h);
	bool hidden = false;
	unsigned char mark = (p & P_STRONG) ? MARK_STRONG : (p & P_WEAK) ? MARK_WEAK : MARK_NONE;
	/* a header inside sectioning content is that section's (HTML §4.3.8) */
	if ((p & P_HEADER) && !(f & F_SECTION))
		mark = MARK_STRONG;
	scan_attrs(a, an, p & P_PAGE, &hidden, &mark);
	if ((f & F_SECTION) && mark == MARK_WEAK)
		mark = MARK_NONE;
	if (p & P_SKIP || hidden)
		f |= F_SKIP;
	if (p & P_PRE)
		f |= F_PRE;
	if (p & P_LINK)
		f |= F_LINK;
	if (p & P_SECTION)
		f |= F_SECTION;
	if (implied)
		close_implied(h, name, p);
	if (p & P_BLOCK)
		end_block(h);
	else if ((p & P_CELL) && h->text.len > h->cur_start)
		h->cell = true;
	if ((p & P_VOID) || selfclose || h->depth == (int)(sizeof h->stack / sizeof *h->stack))
		return false;
	elem *e = &h->stack[h->depth++];
	e->node = new_node(h, h->depth > 1 ? h->stack[h->depth - 2].node : -1, mark);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->flags = f;
	e->props = p;
	return (f & F_SKIP) != 0;
}

/* An end tag closes the innermost open element of its name and everything above it. */
static void end_tag(llm_html *h, const char *name, unsigned p)
{
	int d = h->depth - 1;
	while (d >= 0 && strcmp(h->stack[d].name, name) != 0)
		d--;
	if (d >= 0 || (p & P_BLOCK)) {
		if (p & P_BLOCK) /* not an inline end tag inside <pre>: its lines stay one block */
			end_block(h);
		if (d >= 0)
			h->depth = d;
	}
}

/* The tokenizer: fills h->blocks and h->nodes from s[0..n). */
static void reset(llm_html *h)
{
	h->depth = 0;
	llm_buf_reset(&h->text);
	llm_buf_reset(&h->title);
	h->nblocks = h->nnodes = 0;
	h->cur_start = 0;
	h->cur_chars = h->cur_link = 0;
	h->cur_node = -2;
	h->space = h->cell = false;
}

static void parse(llm_html *h, const char *s, size_t n)
{
	reset(h);
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
		unsigned p = tag_props(name);
		if (end) {
			end_tag(h, name, p);
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
		if (start_tag(h, name, p, s + a0, a1 - a0, a1 > a0 && s[a1 - 1] == '/', true) &&
		    (p & P_RAW)) {
			/* a skipped raw-text element: its content is not even tokenized */
			size_t e = raw_end(s, n, i, name);
			const char *gt = e < n ? memchr(s + e, '>', n - e) : NULL;
			i = gt ? (size_t)(gt - s) + 1 : n;
			h->depth--;
		}
	}
	end_block(h);
}

/* ------------------------------------------------------------------------------------------ */
/* Decisions */

enum { C_BAD, C_GOOD, C_SHORT, C_LINK, C_KEEP, C_DROP };
/* The nearest good or bad block on one side of a block: none, or 1 + its class. */
enum { NONE = 0, BAD = 1 + C_BAD, GOOD = 1 + C_GOOD };

static void *grow_scratch(void *p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return p;
	*cap = n + n / 2 + 16;
	return llm_realloc(p, *cap * size);
}

/*
 * Which blocks are main text. With the text of every node known:
 *  1. A mark on an element that holds most of the page's text (half of its characters
 *     outside links, or more) is void: such an element wraps the page (a <form> around
 *     an ASP.NET page, a "header" or "right-sidebar" wrapper left open), and taking it for
 *     boilerplate would drop the article with it.
 *  2. The main content M is the deepest element holding half or more of the text outside
 *     marked regions. Weak marks (sidebar, widget, a class "header") count only outside M:
 *     inside it they are boxes of the text itself.
 *  3. Blocks under a mark are bad. Of the others, a block whose link density exceeds
 *     max_link_density is a link block, one shorter than min_block_chars a short block,
 *     the rest good. Short blocks stay when the nearest decided block on either side is
 *     good (headings, short lines of a paragraph run: jusText's context rule); link blocks
 *     stay only inside M, with a good block inside M on one side and none bad on the
 *     other (the titles of a list of publications, a list of readings, a last paragraph
 *     full of links) - a menu beside the text has boilerplate on its other side.
 *  4. The block with the most text outside links is never dropped.
 */
static bool in_main(const llm_html *h, size_t b)
{
	int n = h->blocks[b].node;
	return n >= 0 && (h->ndec[n] & 2);
}

/* The text under each node (chars, link); returns the page's text outside links, and in
 * *largest the block with the most of it (nblocks when there is none). */
static uint64_t sum_text(llm_html *h, size_t *largest)
{
	size_t nb = h->nblocks;
	uint64_t total = 0;
	*largest = nb;
	for (size_t b = 0; b < nb; b++) {
		block *bl = &h->blocks[b];
		uint32_t good = bl->chars - bl->link;
		total += good;
		if (*largest == nb || good > h->blocks[*largest].chars - h->blocks[*largest].link)
			*largest = b;
		if (bl->node >= 0) {
			h->nodes[bl->node].chars += bl->chars;
			h->nodes[bl->node].link += bl->link;
		}
	}
	for (size_t i = h->nnodes; i-- > 0;) {
		node *n = &h->nodes[i];
		if (n->parent >= 0) {
			h->nodes[n->parent].chars += n->chars;
			h->nodes[n->parent].link += n->link;
		}
	}
	return total;
}

/* Rule 1: void marks; ndec bit 1: under a live mark; the nodes' depths. */
static void void_marks(llm_html *h, uint64_t total)
{
	unsigned char *nd = h->ndec;
	int *depth = h->ndepth;
	for (size_t i = 0; i < h->nnodes; i++) {
		node *n = &h->nodes[i];
		if (n->mark && 2 * (uint64_t)(n->chars - n->link) >= total && total)
			n->mark = MARK_NONE;
		int par = n->parent;
		nd[i] = (n->mark ? 1 : 0) | (par >= 0 ? nd[par] & 1 : 0);
		depth[i] = par >= 0 ? depth[par] + 1 : 0;
	}
}

/* Rule 2: the main content M, from the text outside marked regions per node; -1: none. */
static int main_content(llm_html *h)
{
	size_t nb = h->nblocks, nn = h->nnodes;
	const unsigned char *nd = h->ndec;
	for (size_t i = 0; i < nn; i++)
		h->nodes[i].chars = h->nodes[i].link = 0;
	uint64_t unmarked = 0;
	for (size_t b = 0; b < nb; b++) {
		block *bl = &h->blocks[b];
		if (bl->node >= 0 && (nd[bl->node] & 1))
			continue;
		unmarked += bl->chars - bl->link;
		if (bl->node >= 0)
			h->nodes[bl->node].chars += bl->chars - bl->link;
	}
	for (size_t i = nn; i-- > 0;)
		if (h->nodes[i].parent >= 0)
			h->nodes[h->nodes[i].parent].chars += h->nodes[i].chars;
	int main_node = -1;
	for (size_t i = 0; i < nn; i++)
		if (unmarked && 2 * (uint64_t)h->nodes[i].chars >= unmarked &&
		    (main_node < 0 || h->ndepth[i] > h->ndepth[main_node]))
			main_node = (int)i;
	return main_node;
}

/* Rule 3, first half: ndec bit 2: inside M; bit 4: boilerplate; then every block bad, good,
 * short or link. */
static void classify(llm_html *h, const llm_html_opts *o, int main_node)
{
	unsigned char *nd = h->ndec;
	for (size_t i = 0; i < h->nnodes; i++) {
		node *n = &h->nodes[i];
		int par = n->parent;
		unsigned inside = ((int)i == main_node || (par >= 0 && (nd[par] & 2))) ? 2 : 0;
		unsigned boiler = (par >= 0 && (nd[par] & 4)) || n->mark == MARK_STRONG ||
		                  (n->mark == MARK_WEAK && !inside);
		nd[i] = (unsigned char)((nd[i] & 1) | inside | (boiler ? 4 : 0));
	}
	for (size_t b = 0; b < h->nblocks; b++) {
		block *bl = &h->blocks[b];
		unsigned f = bl->node >= 0 ? nd[bl->node] : (main_node < 0 ? 2 : 0);
		if (f & 4)
			h->cls[b] = C_BAD;
		else if (bl->chars && (double)bl->link > o->max_link_density * (double)bl->chars)
			h->cls[b] = (f & 2) ? C_LINK : C_BAD;
		else if (bl->chars < o->min_block_chars)
			h->cls[b] = C_SHORT;
		else
			h->cls[b] = C_GOOD;
	}
}

/*
 * Rule 3, second half: the nearest good or bad block before each one, in the whole page
 * (low nibble) and inside M (high nibble); then the same after it on the way back, where
 * short and link blocks are decided: linear in the blocks.
 */
static void settle_by_context(llm_html *h)
{
	size_t nb = h->nblocks;
	unsigned char *cls = h->cls;
	unsigned char *before = h->nbr, prev_any = 0, prev_main = 0, next_any = 0, next_main = 0;
	for (size_t b = 0; b < nb; b++) {
		before[b] = (unsigned char)(prev_any | prev_main << 4);
		if (cls[b] == C_GOOD || cls[b] == C_BAD) {
			prev_any = (unsigned char)(1 + cls[b]);
			if (in_main(h, b))
				prev_main = prev_any;
		}
	}
	for (size_t b = nb; b-- > 0;) {
		if (cls[b] == C_GOOD || cls[b] == C_BAD) {
			next_any = (unsigned char)(1 + cls[b]);
			if (in_main(h, b))
				next_main = next_any;
			continue;
		}
		if (cls[b] != C_SHORT && cls[b] != C_LINK)
			continue;
		/* link blocks look at their neighbours inside M only: its edge is no evidence */
		bool link = cls[b] == C_LINK, keep;
		int prev = link ? before[b] >> 4 : before[b] & 15, next = link ? next_main : next_any;
		if (link)
			keep = prev != BAD && next != BAD && (prev == GOOD || next == GOOD);
		else
			keep = prev == GOOD || next == GOOD || (prev == NONE && next == NONE);
		cls[b] = keep ? C_KEEP : C_DROP;
	}
}

static void decide(llm_html *h, const llm_html_opts *o)
{
	size_t nb = h->nblocks, nn = h->nnodes;
	h->cls = grow_scratch(h->cls, &h->cls_cap, nb + 1, 1);
	h->nbr = grow_scratch(h->nbr, &h->nbr_cap, nb + 1, 1);
	h->ndec = grow_scratch(h->ndec, &h->ndec_cap, nn + 1, 1);
	h->ndepth = grow_scratch(h->ndepth, &h->ndepth_cap, nn + 1, sizeof *h->ndepth);
	if (!o->boilerplate) {
		memset(h->cls, C_KEEP, nb);
		return;
	}
	size_t largest;
	uint64_t total = sum_text(h, &largest);
	void_marks(h, total);
	classify(h, o, main_content(h));
	settle_by_context(h);
	/* rule 4 */
	if (largest < nb && h->cls[largest] != C_GOOD && h->cls[largest] != C_KEEP &&
	    h->blocks[largest].chars > h->blocks[largest].link)
		h->cls[largest] = C_KEEP;
}

/* The kept blocks, one line each. */
static void emit(const llm_html *h, llm_buf *out)
{
	bool first = true;
	for (size_t b = 0; b < h->nblocks; b++) {
		if (h->cls[b] != C_GOOD && h->cls[b] != C_KEEP)
			continue;
		if (!first)
			llm_buf_addc(out, '\n');
		first = false;
		llm_buf_add(out, h->text.p + h->blocks[b].start, h->blocks[b].len);
	}
	if (!out->p)
		llm_buf_grow(out, 0);
}

void llm_html_to_text(llm_html *h, const char *s, size_t n, const llm_html_opts *o, llm_buf *out)
{
	parse(h, s, n);
	decide(h, o);
	emit(h, out);
}
