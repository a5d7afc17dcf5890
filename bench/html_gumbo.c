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
	llm_reader *r;
	if (llm_reader_open(&r, in) != LLM_OK) {
		fprintf(stderr, "html_gumbo: %s\n", llm_last_error());
		return 1;
	}
	size_t npages = 0, cap = 0;
	llm_buf *html = NULL, *url = NULL;
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	char *line;
	size_t len;
	while (llm_reader_line(r, &line, &len) == LLM_OK) {
		if (llm_json_parse(&rec, line, len) != LLM_OK)
			continue;
		if (npages == cap) {
			cap = cap ? 2 * cap : 128;
			html = llm_realloc(html, cap * sizeof *html);
			url = llm_realloc(url, cap * sizeof *url);
		}
		llm_buf_init(&html[npages]);
		llm_buf_init(&url[npages]);
		if (llm_json_get_str(&rec, "text", &html[npages]) != LLM_OK)
			continue;
		llm_json_get_str(&rec, "url", &url[npages]);
		npages++;
	}
	llm_reader_free(r);
	double mb = 0;
	for (size_t i = 0; i < npages; i++)
		mb += html[i].len / 1e6;

	llm_html *h = llm_html_new();
	llm_html_opts o = LLM_HTML_OPTS_DEFAULT;
	llm_buf out = LLM_BUF_INIT, ab = LLM_BUF_INIT;
	double t0 = cpu_now();
	for (int k = 0; k < repeat; k++)
		for (size_t i = 0; i < npages; i++) {
			GumboOutput *g = gumbo_parse_with_options(&kGumboDefaultOptions, html[i].p, html[i].len);
			gumbo_destroy_output(&kGumboDefaultOptions, g);
		}
	double t_parse = cpu_now() - t0;
	t0 = cpu_now();
	for (int k = 0; k < repeat; k++)
		for (size_t i = 0; i < npages; i++) {
			llm_buf_reset(&out);
			gumbo_to_text(h, html[i].p, html[i].len, &o, &out, &ab);
		}
	double t_gumbo = cpu_now() - t0;
	t0 = cpu_now();
	for (int k = 0; k < repeat; k++)
		for (size_t i = 0; i < npages; i++) {
			llm_buf_reset(&out);
			llm_html_to_text(h, html[i].p, html[i].len, &o, &out);
		}
	double t_llm = cpu_now() - t0;
	printf("%zu pages, %.2f MB of HTML, %d passes, MB/s per CPU second:\n", npages, mb, repeat);
	printf("  gumbo parse alone              %7.1f\n", mb * repeat / t_parse);
	printf("  gumbo tree + llmkit decisions  %7.1f\n", mb * repeat / t_gumbo);
	printf("  llmkit llm_html_to_text        %7.1f\n", mb * repeat / t_llm);
	if (outpath) {
		FILE *f = fopen(outpath, "w");
		if (!f) {
			perror(outpath);
			return 1;
		}
		llm_buf b = LLM_BUF_INIT;
		for (size_t i = 0; i < npages; i++) {
			llm_buf_reset(&out);
			gumbo_to_text(h, html[i].p, html[i].len, &o, &out, &ab);
			llm_buf_reset(&b);
			llm_buf_adds(&b, "{\"url\": ");
			llm_json_put_str(&b, url[i].p ? url[i].p : "", url[i].len);
			llm_buf_adds(&b, ", \"text\": ");
			llm_json_put_str(&b, out.p, out.len);
			llm_buf_adds(&b, "}\n");
			fwrite(b.p, 1, b.len, f);
		}
		llm_buf_release(&b);
		fclose(f);
	}
	for (size_t i = 0; i < npages; i++) {
		llm_buf_release(&html[i]);
		llm_buf_release(&url[i]);
	}
	free(html);
	free(url);
	llm_buf_release(&out);
	llm_buf_release(&ab);
	llm_html_free(h);
	llm_json_rec_release(&rec);
	return 0;
}
