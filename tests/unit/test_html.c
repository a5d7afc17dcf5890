/* test_html.c — HTML to text: entities, dropped elements, blocks, pre, title, boilerplate. */
#include "text/html.h"

#include "core/err.h"
#include "core/io.h"
#include "unit.h"

static llm_html *h;

static const char *conv(const char *in, bool boiler)
{
	static llm_buf out;
	llm_html_opts o = LLM_HTML_OPTS_DEFAULT;
	o.boilerplate = boiler;
	llm_buf_reset(&out);
	llm_html_to_text(h, in, strlen(in), &o, &out);
	return out.p;
}

static const char *dec(const char *in)
{
	static llm_buf out;
	llm_buf_reset(&out);
	llm_html_decode_entities(in, strlen(in), &out);
	return out.p ? out.p : "";
}

/* Expected values: Python's html.unescape (the WHATWG algorithm). */
static void test_entities(void)
{
	CHECK_STR(dec("&amp; &lt;&gt; &quot;&apos; &nbsp;"), "& <> \"' \xC2\xA0");
	CHECK_STR(dec("&eacute;&Eacute; &hellip; &mdash; &euro;"), "\xC3\xA9\xC3\x89 \xE2\x80\xA6 \xE2\x80\x94 \xE2\x82\xAC");
	CHECK_STR(dec("&#65;&#x42;&#X43; &#0; &#x110000; &#xD800; &#128; &#150;"),
	          "ABC \xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD \xE2\x82\xAC \xE2\x80\x93");
	/* legacy names without ';', longest prefix; unknown names stay */
	CHECK_STR(dec("&amp &notit; &copy2020 &bogus; & x"), "& \xC2\xACit; \xC2\xA9" "2020 &bogus; & x");
	/* a name with two code points */
	CHECK_STR(dec("&NotEqualTilde;"), "\xE2\x89\x82\xCC\xB8");
	CHECK_STR(dec("&#x1F600;"), "\xF0\x9F\x98\x80");
	CHECK_STR(dec("&#"), "&#");
}

static void test_structure(void)
{
	CHECK_STR(conv("<html><head><title>T &amp; U</title><style>p{}</style></head><body>"
	               "<p>One <b>two</b>\n three.</p><script>var x = '<p>';</script>"
	               "<div>Four<br>five</div></body></html>", false),
	          "One two three.\nFour\nfive");
	size_t tl;
	const char *t = llm_html_title(h, &tl);
	CHECK_MEM(t, tl, "T & U", 5);
	CHECK_STR(conv("<pre>a  b\n  c</pre><p>x</p>", false), "a  b\n  c\nx");
	CHECK_STR(conv("<p>shown</p><div hidden>no</div><p style=\"display: none\">no</p>"
	               "<span aria-hidden=\"true\">no</span><noscript>no</noscript><template>no</template>",
	               false), "shown");
	CHECK_STR(conv("<!-- c --><![CDATA[raw]]><p>a<!DOCTYPE x>b</p>", false), "raw\nab");
	CHECK_STR(conv("a < b and <3", false), "a < b and <3");
	CHECK_STR(conv("<table><tr><td>a</td><td>b</td></tr></table>", false), "a b");
	CHECK_STR(conv("", false), "");
	CHECK_STR(conv("<p>unclosed <b>bold", false), "unclosed bold");
	CHECK_STR(conv("<SCRIPT>x</script >y", false), "y");
}

static void test_boilerplate(void)
{
	const char *page =
		"<body><nav><a href=/>Home</a> <a href=/a>About</a></nav>"
		"<div class=\"sidebar\">Related links and more stuff here to read</div>"
		"<article><h1>Title</h1><p>This is the main text of the article, long enough to count.</p>"
		"<p>Short one.</p><p>And a second paragraph of real content for the reader.</p></article>"
		"<ul><li><a href=1>Link one is here</a></li><li><a href=2>Link two is here</a></li></ul>"
		"<footer>Copyright 2024 Example Inc. All rights reserved.</footer></body>";
	CHECK_STR(conv(page, true),
	          "Title\nThis is the main text of the article, long enough to count.\nShort one.\n"
	          "And a second paragraph of real content for the reader.");
	CHECK_STR(conv(page, false),
	          "Home About\nRelated links and more stuff here to read\nTitle\n"
	          "This is the main text of the article, long enough to count.\nShort one.\n"
	          "And a second paragraph of real content for the reader.\nLink one is here\n"
	          "Link two is here\nCopyright 2024 Example Inc. All rights reserved.");
}

/* The sample pages: the main text survives, the navigation does not. */
static void test_samples(void)
{
	char *data;
	size_t len;
	CHECK_EQ_INT(llm_read_file(unit_path("samples/corpus/html/python3.11-doc_library_json.html"),
	                           &data, &len), LLM_OK);
	llm_buf out = LLM_BUF_INIT;
	llm_html_opts o = LLM_HTML_OPTS_DEFAULT;
	llm_html_to_text(h, data, len, &o, &out);
	CHECK(strstr(out.p, "JSON (JavaScript Object Notation)") != NULL);
	CHECK(strstr(out.p, "function(") == NULL);   /* no script */
	CHECK(strstr(out.p, "Navigation") == NULL);  /* no navigation block */
	size_t tl;
	const char *t = llm_html_title(h, &tl);
	CHECK(tl > 0 && memmem(t, tl, "json", 4) != NULL);
	free(data);
	llm_buf_release(&out);
}

int main(void)
{
	h = llm_html_new();
	RUN(test_entities);
	RUN(test_structure);
	RUN(test_boilerplate);
	RUN(test_samples);
	llm_html_free(h);
	return unit_done();
}
