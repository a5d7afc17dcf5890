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
	CHECK_STR(conv("<table><tr><td>a</td><td>b</td></tr></table>", false), "a | b");
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

/* Tables as rows, <pre> with its lines, list items as lines: with the end tags HTML lets
 * pages leave out. */
static void test_layout(void)
{
	CHECK_STR(conv("<table><tr><th>Name<th>Year<tr><td>Alpha<td>2001<tr><td>Beta</td>"
	               "<td><b>2</b>003</td></table>", false),
	          "Name | Year\nAlpha | 2001\nBeta | 2003");
	CHECK_STR(conv("<pre>\n<span class=k>int</span> <b>x</b> = 1;\n  <i>y</i>++;\n</pre><p>after</p>",
	               false), "int x = 1;\n  y++;\nafter");
	CHECK_STR(conv("<ul><li>one<li>two <b>bold</b><li>three</ul><p>a<p>b<div>c</div>", false),
	          "one\ntwo bold\nthree\na\nb\nc");
	CHECK_STR(conv("<dl><dt>term<dd>definition<dt>t2<dd>d2</dl>", false), "term\ndefinition\nt2\nd2");
}

/* The article of a page, repeated so that it outweighs the furniture around it. */
#define ARTICLE                                                                                \
	"<p>The committee met on Tuesday to discuss the new budget for the coming year.</p>"    \
	"<p>Members agreed that the library and the school would receive more money.</p>"       \
	"<p>A final vote is planned for the next meeting, which is open to the public.</p>"
#define NAV "<nav><a href=/>Home</a> <a href=/news>News</a> <a href=/about>About us</a></nav>"

/* An ancestor whose id or class looks like boilerplate must not take the article with it:
 * the wrappers seen to empty whole pages, closed or left open. */
static void test_ancestors(void)
{
	const char *want = "The committee met on Tuesday to discuss the new budget for the coming year.\n"
	                   "Members agreed that the library and the school would receive more money.\n"
	                   "A final vote is planned for the next meeting, which is open to the public.";
	CHECK_STR(conv("<body><div class=header>" NAV "<div class=content>" ARTICLE "</div></div>"
	               "<footer>Copyright 2024</footer></body>", true), want);
	CHECK_STR(conv("<body><div id=\"head-wrap\" class=\"header-wrap\">" NAV ARTICLE, true), want);
	CHECK_STR(conv("<body><div class=\"right-sidebar\"><div class=main>" ARTICLE "</div>"
	               "<ul class=widget><li><a href=1>Archive link one</a></li></ul></div>", true), want);
	CHECK_STR(conv("<body><form id=aspnetForm>" NAV ARTICLE "</form>", true), want);
	/* the block with the most text is never dropped, whatever wraps it */
	CHECK_STR(conv("<nav><p>A page that is nothing but one long navigation paragraph of text.</p>"
	               "<a href=1>x</a></nav>", true),
	          "A page that is nothing but one long navigation paragraph of text.");
}

/* What goes: navigation, footers, cookie banners, share bars, comments, related posts; what
 * stays: the title, list items and headings of the text, a section's own header, boxes
 * inside the text, and link lists inside the text. */
static void test_furniture(void)
{
	CHECK_STR(conv("<html><head><title>Budget vote</title></head><body>" NAV
	               "<div class=\"cookie-notice\">This site uses cookies to improve your experience.</div>"
	               "<article><header><h1>Budget vote next week</h1>"
	               "<p class=lede>The town council will vote on the budget next week.</p></header>"
	               ARTICLE "<ul><li>Library: more money for books</li><li>School: a new roof</li></ul>"
	               "<div class=\"share-buttons\"><a href=t>Share on Twitter</a> <a href=f>Facebook</a></div>"
	               "<footer>Posted in Local news</footer></article>"
	               "<div id=comments><h3>2 comments</h3><p>I think the roof should have been fixed years ago.</p></div>"
	               "<aside class=sidebar><h3>Popular</h3><p>Another story about the weather this weekend.</p></aside>"
	               "<div class=related><a href=r1>Council approves the new road plan</a></div>"
	               "<footer>Copyright 2024 Town News. All rights reserved.</footer></body></html>", true),
	          "Budget vote next week\nThe town council will vote on the budget next week.\n"
	          "The committee met on Tuesday to discuss the new budget for the coming year.\n"
	          "Members agreed that the library and the school would receive more money.\n"
	          "A final vote is planned for the next meeting, which is open to the public.\n"
	          "Library: more money for books\nSchool: a new roof");
	size_t tl;
	const char *t = llm_html_title(h, &tl);
	CHECK_MEM(t, tl, "Budget vote", 11);
	/* a box of the text (DocBook's sidebar) stays; the site's sidebar does not */
	CHECK_STR(conv("<body><div class=sidebar><p>Links to other pages of this site, and more.</p></div>"
	               "<div class=chapter>" ARTICLE "<div class=sidebar><p>Tip: the minutes of every "
	               "meeting are on the web site.</p></div></div></body>", true),
	          "The committee met on Tuesday to discuss the new budget for the coming year.\n"
	          "Members agreed that the library and the school would receive more money.\n"
	          "A final vote is planned for the next meeting, which is open to the public.\n"
	          "Tip: the minutes of every meeting are on the web site.");
	/* a list of links inside the text stays; a menu before it does not */
	CHECK_STR(conv("<body><ul><li><a href=a>Home page</a></li><li><a href=b>All our news</a></li></ul>"
	               "<div class=post>" ARTICLE "<ul><li><a href=r>Minutes of the March meeting</a> by the clerk</li>"
	               "<li><a href=s>The budget draft</a> (PDF)</li></ul>"
	               "<p>Questions can be sent to the town clerk before the meeting begins.</p></div></body>", true),
	          "The committee met on Tuesday to discuss the new budget for the coming year.\n"
	          "Members agreed that the library and the school would receive more money.\n"
	          "A final vote is planned for the next meeting, which is open to the public.\n"
	          "Minutes of the March meeting by the clerk\nThe budget draft (PDF)\n"
	          "Questions can be sent to the town clerk before the meeting begins.");
	/* the asides inside an article: photo captions and credits, the byline box, an
	 * affiliate disclosure, teasers of other articles */
	CHECK_STR(conv("<body><article><h1>Budget vote next week</h1>" ARTICLE
	               "<div class=\"byline-block\">By Ann Reporter, Staff Writer. Ann covers the "
	               "council and schools.</div>"
	               "<figure><img src=a.jpg><figcaption>Council members at the March meeting, "
	               "in the town hall.</figcaption></figure>"
	               "<p class=\"photo-credit\">Photo: John Smith, Town News Agency</p>"
	               "<p class=disclosure>This post may contain affiliate links; we may "
	               "earn a commission.</p>"
	               "<div class=\"teaser-list\"><h3>Road plan approved after a long debate</h3>"
	               "<p>The council approved the road plan on Monday after three hours of talk.</p>"
	               "</div></article></body>", true),
	          "Budget vote next week\n"
	          "The committee met on Tuesday to discuss the new budget for the coming year.\n"
	          "Members agreed that the library and the school would receive more money.\n"
	          "A final vote is planned for the next meeting, which is open to the public.");
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
	RUN(test_layout);
	RUN(test_ancestors);
	RUN(test_furniture);
	RUN(test_samples);
	llm_html_free(h);
	return unit_done();
}
