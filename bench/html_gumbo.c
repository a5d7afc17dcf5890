/*
 * html_gumbo.c — would a spec-compliant HTML5 tree (Debian's libgumbo) make llmkit's main-text
 * extraction better, and at what speed?
 *
 * Reads llm-cat's JSONL of HTML pages (text decoded to UTF-8, "url" per page) and, in CPU
 * seconds over --repeat passes, measures: gumbo's parse alone; gumbo's tree fed to llmkit's
 * own decisions (the same marks, blocks, main content and context rules, the tree built by
 * gumbo instead of by the tokenizer with its implied end tags); and llmkit's llm_html_to_text.
 * With -o FILE it writes {"url", "text"} per page of the gumbo variant, for
 * bench/html_eval.py --texts to score.
 *
 * The gumbo front end needs the converter's internals (its element stack, blocks and
 * decisions), so this program includes lib/text/html.c itself rather than linking it: the
 * comparison is of the trees only, everything after them is the same code.
 *
 * usage: html_gumbo [--repeat N] [-o FILE] PAGES.jsonl
 */
#include "../lib/text/html.c"

#include <gumbo.h>
#include <stdio.h>
#include <time.h>

#include "core/io.h"
#include "core/json.h"

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Attributes as the tokenizer sees them: name="value" pairs. */
static void attr_text(const GumboVector *attrs, llm_buf *b)
{
	llm_buf_reset(b);
	for (unsigned i = 0; i < attrs->length; i++) {
		const GumboAttribute *a = attrs->data[i];
		char q = strchr(a->value, '"') ? '\'' : '"';
		llm_buf_addf(b, " %s=%c%s%c", a->name, q, a->value, q);
	}
}

static void walk(llm_html *h, const GumboNode *n, llm_buf *ab)
{
	if (n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE ||
	    n->type == GUMBO_NODE_CDATA) {
		add_decoded(h, n->v.text.text, strlen(n->v.text.text));
		return;
	}
	if (n->type != GUMBO_NODE_ELEMENT && n->type != GUMBO_NODE_TEMPLATE)
		return;
	const GumboElement *e = &n->v.element;
	char name[12];
	const char *tag = gumbo_normalized_tagname(e->tag);
	if (!*tag) {
		GumboStringPiece orig = e->original_tag;
		gumbo_tag_from_original_text(&orig);
		snprintf(name, sizeof name, "%.*s", (int)orig.length, orig.data);
		for (char *c = name; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	} else {
		snprintf(name, sizeof name, "%s", tag);
	}
	if (strcmp(name, "title") == 0) {
		if (!h->title.len && e->children.length &&
		    ((GumboNode *)e->children.data[0])->type == GUMBO_NODE_TEXT) {
			const char *t = ((GumboNode *)e->children.data[0])->v.text.text;
			collapse_title(h, t, strlen(t));
		}
		return;
	}
	unsigned p = tag_props(name);
	attr_text(&e->attributes, ab);
	int depth = h->depth;
	bool pushed = h->depth < (int)(sizeof h->stack / sizeof *h->stack) && !(p & P_VOID);
	bool skip = start_tag(h, name, p, ab->p ? ab->p : "", ab->len, false, false);
	if (!skip)
		for (unsigned i = 0; i < e->children.length; i++)
			walk(h, e->children.data[i], ab);
	if (pushed)
		h->depth = depth;
	if (p & P_BLOCK)
		end_block(h);
}

static void gumbo_to_text(llm_html *h, const char *s, size_t n, const llm_html_opts *o,
                          llm_buf *out, llm_buf *ab)
{
	GumboOutput *g = gumbo_parse_with_options(&kGumboDefaultOptions, s, n);
	reset(h);
	walk(h, g->root, ab);
	end_block(h);
	decide(h, o);
	emit(h, out);
	gumbo_destroy_output(&kGumboDefaultOptions, g);
}

/* The pages of a JSONL file: their HTML ("text") and "url". */
typedef struct {
	llm_buf *html, *url;
	size_t n, cap;
} pages;

static int load_pages(pages *pg, const char *in)
{
	llm_reader *r;
	if (llm_reader_open(&r, in) != LLM_OK) {
		fprintf(stderr, "html_gumbo: %s\n", llm_last_error());
		return 1;
	}
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	char *line;
	size_t len;
	while (llm_reader_line(r, &line, &len) == LLM_OK) {
		if (llm_json_parse(&rec, line, len) != LLM_OK)
			continue;
		if (pg->n == pg->cap) {
			pg->cap = pg->cap ? 2 * pg->cap : 128;
			pg->html = llm_realloc(pg->html, pg->cap * sizeof *pg->html);
			pg->url = llm_realloc(pg->url, pg->cap * sizeof *pg->url);
		}
		llm_buf_init(&pg->html[pg->n]);
		llm_buf_init(&pg->url[pg->n]);
		if (llm_json_get_str(&rec, "text", &pg->html[pg->n]) != LLM_OK)
			continue;
		llm_json_get_str(&rec, "url", &pg->url[pg->n]);
		pg->n++;
	}
	llm_reader_free(r);
	llm_json_rec_release(&rec);
	return 0;
}

static void pages_release(pages *pg)
{
	for (size_t i = 0; i < pg->n; i++) {
		llm_buf_release(&pg->html[i]);
		llm_buf_release(&pg->url[i]);
	}
	free(pg->html);
	free(pg->url);
}

enum { GUMBO_PARSE, GUMBO_TEXT, LLMKIT_TEXT };

/* CPU seconds of `repeat` passes of one way over every page. */
static double time_passes(int way, const pages *pg, int repeat, llm_html *h,
                          const llm_html_opts *o, llm_buf *out, llm_buf *ab)
{
	double t0 = cpu_now();
	for (int k = 0; k < repeat; k++)
		for (size_t i = 0; i < pg->n; i++) {
			const llm_buf *p = &pg->html[i];
			if (way == GUMBO_PARSE) {
				gumbo_destroy_output(&kGumboDefaultOptions,
				                     gumbo_parse_with_options(&kGumboDefaultOptions, p->p, p->len));
				continue;
			}
			llm_buf_reset(out);
			if (way == GUMBO_TEXT)
				gumbo_to_text(h, p->p, p->len, o, out, ab);
			else
				llm_html_to_text(h, p->p, p->len, o, out);
		}
	return cpu_now() - t0;
}

/* The texts of gumbo's tree with llmkit's decisions, {"url", "text"} per page. */
static int write_texts(const char *path, const pages *pg, llm_html *h, const llm_html_opts *o,
                       llm_buf *out, llm_buf *ab)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	llm_buf b = LLM_BUF_INIT;
	for (size_t i = 0; i < pg->n; i++) {
		llm_buf_reset(out);
		gumbo_to_text(h, pg->html[i].p, pg->html[i].len, o, out, ab);
		llm_buf_reset(&b);
		llm_buf_adds(&b, "{\"url\": ");
		llm_json_put_str(&b, pg->url[i].p ? pg->url[i].p : "", pg->url[i].len);
		llm_buf_adds(&b, ", \"text\": ");
		llm_json_put_str(&b, out->p, out->len);
		llm_buf_adds(&b, "}\n");
		fwrite(b.p, 1, b.len, f);
	}
	llm_buf_release(&b);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int repeat = 3;
	const char *outpath = NULL, *in = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			outpath = argv[++i];
		else
			in = argv[i];
	}
	if (!in) {
		fprintf(stderr, "usage: html_gumbo [--repeat N] [-o FILE] PAGES.jsonl\n");
		return 2;
	}
	pages pg = { 0 };
	if (load_pages(&pg, in))
		return 1;
	double mb = 0;
	for (size_t i = 0; i < pg.n; i++)
		mb += pg.html[i].len / 1e6;
	llm_html *h = llm_html_new();
	llm_html_opts o = LLM_HTML_OPTS_DEFAULT;
	llm_buf out = LLM_BUF_INIT, ab = LLM_BUF_INIT;
	double t_parse = time_passes(GUMBO_PARSE, &pg, repeat, h, &o, &out, &ab);
	double t_gumbo = time_passes(GUMBO_TEXT, &pg, repeat, h, &o, &out, &ab);
	double t_llm = time_passes(LLMKIT_TEXT, &pg, repeat, h, &o, &out, &ab);
	printf("%zu pages, %.2f MB of HTML, %d passes, MB/s per CPU second:\n", pg.n, mb, repeat);
	printf("  gumbo parse alone              %7.1f\n", mb * repeat / t_parse);
	printf("  gumbo tree + llmkit decisions  %7.1f\n", mb * repeat / t_gumbo);
	printf("  llmkit llm_html_to_text        %7.1f\n", mb * repeat / t_llm);
	int rc = outpath ? write_texts(outpath, &pg, h, &o, &out, &ab) : 0;
	pages_release(&pg);
	llm_buf_release(&out);
	llm_buf_release(&ab);
	llm_html_free(h);
	return rc;
}
