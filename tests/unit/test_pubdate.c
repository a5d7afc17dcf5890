/* test_pubdate.c — publication dates of real-shaped pages, English and Chinese, by source. */
#include "text/pubdate.h"

#include <stdlib.h>
#include <string.h>

#include "unit.h"

/* The date found in page (with url), or "" if none. */
static const char *pd(const char *page, const char *url)
{
	static char out[11];
	if (!llm_pubdate_find(page, strlen(page), url, url ? strlen(url) : 0, out))
		return "";
	return out;
}

static const char *parse(const char *s)
{
	static char out[11];
	return llm_pubdate_parse(s, strlen(s), out) ? out : "";
}

static void test_parse(void)
{
	CHECK_STR(parse("2019-11-19T08:03:00-05:00"), "2019-11-19");
	CHECK_STR(parse(" 2023/5/2 10:00"), "2023-05-02");
	CHECK_STR(parse("2023.05.12"), "2023-05-12");
	CHECK_STR(parse("20230512"), "2023-05-12");
	CHECK_STR(parse("2023年5月12日 08:00"), "2023-05-12");
	CHECK_STR(parse("2023 年 5 月 12 日"), "2023-05-12");
	CHECK_STR(parse("Nov. 19, 2019 8:03 am ET"), "2019-11-19");
	CHECK_STR(parse("November 19th, 2019"), "2019-11-19");
	CHECK_STR(parse("19 Sept 2019"), "2019-09-19");
	CHECK_STR(parse("2024-02-29"), "2024-02-29");
	/* not calendar days, not dates, out of range */
	CHECK_STR(parse("2023-02-29"), "");
	CHECK_STR(parse("2023-13-01"), "");
	CHECK_STR(parse("2023-05-12x"), "2023-05-12");
	CHECK_STR(parse("1889-05-12"), "");
	CHECK_STR(parse("202305121"), "");
	CHECK_STR(parse("2023-05/12"), "");
	CHECK_STR(parse("Mayday 12, 2019"), "");
	CHECK_STR(parse(""), "");
}

static void test_meta(void)
{
	/* OpenGraph article:published_time beats a <time> of the comments and the URL */
	CHECK_STR(pd("<html><head><title>T</title>\n"
	             "<meta property=\"og:type\" content=\"article\">\n"
	             "<meta property=\"article:published_time\" content=\"2019-11-19T13:03:00Z\"/>\n"
	             "</head><body><h1>Gaming</h1><time datetime=\"2020-01-02\">Jan 2</time>",
	             "https://example.com/2018/01/01/gaming"),
	          "2019-11-19");
	/* Dublin Core, upper case, unquoted, content before name */
	CHECK_STR(pd("<META CONTENT=2012-03-04 NAME=DC.date.issued>", NULL), "2012-03-04");
	CHECK_STR(pd("<meta name=\"dcterms.created\" content=\"2015-06-07\">", NULL), "2015-06-07");
	CHECK_STR(pd("<meta name='pubdate' content='20160708'>", NULL), "2016-07-08");
	CHECK_STR(pd("<meta itemprop=\"datePublished\" content=\"2017-08-09\">", NULL), "2017-08-09");
	/* a meta that is not a date, then one whose content is not a date, are skipped */
	CHECK_STR(pd("<meta name=\"description\" content=\"2001-01-01 was a day\">"
	             "<meta name=\"date\" content=\"soon\"><meta name=\"date\" content=\"2018-09-10\">",
	             NULL),
	          "2018-09-10");
}

static void test_jsonld(void)
{
	CHECK_STR(pd("<script>var x = {\"datePublished\": \"1999-01-01\"};</script>"
	             "<script type=\"application/ld+json\">{\"@type\":\"NewsArticle\",\"headline\":"
	             "\"A\",\"dateModified\":\"2021-03-04\",\"datePublished\" : \"2021-03-01T09:00\"}"
	             "</script><body><p>2022年1月1日</p>",
	             NULL),
	          "2021-03-01");
	/* a <meta> inside a plain script's string is not markup */
	CHECK_STR(pd("<script>document.write('<meta name=\"date\" content=\"2001-02-03\">')</script>",
	             NULL),
	          "");
}

static void test_time_url(void)
{
	CHECK_STR(pd("<article><time pubdate datetime=\"2014-05-06\">6 May</time></article>",
	             "https://example.com/2013/01/01/x"),
	          "2014-05-06");
	CHECK_STR(pd("<span itemprop=\"datePublished\" datetime=\"2014-05-07\"></span>", NULL),
	          "2014-05-07");
	/* the URL's date path beats a bare <time>, which beats text */
	CHECK_STR(pd("<h1>x</h1><time datetime=\"2020-01-02\"></time>",
	             "https://www.example.com/news/2023/05/12/story-title.html"),
	          "2023-05-12");
	CHECK_STR(pd("<p>x</p>", "https://example.com/2023-05-12-story"), "2023-05-12");
	CHECK_STR(pd("<p>x</p>", "https://example.com/a/20230512/b.html"), "2023-05-12");
	CHECK_STR(pd("<p>x</p>", "https://example.com/2023/05/"), "");
	CHECK_STR(pd("<p>x</p>", "https://example.com/item/2023051299"), "");
	CHECK_STR(pd("<h1>x</h1><time datetime=\"2020-01-02\"></time><p>Posted 2019-01-01</p>",
	             "https://example.com/p/1"),
	          "2020-01-02");
}

static void test_text(void)
{
	/* a Chinese news page: 发布时间 label after the title, a date in a sidebar before it */
	CHECK_STR(pd("<html><body><div class=\"side\">2010年1月1日 旧闻</div>"
	             "<h1>国务院常务会议部署工作</h1>"
	             "<div class=\"info\"><span>来源：新华社</span><span>发布时间：<em>2023-05-12 "
	             "10:30</em></span></div><p>正文……2022年3月4日……</p>",
	             "http://www.gov.cn/xinwen/content_123.htm"),
	          "2023-05-12");
	/* no label: the first 年月日 date after the title */
	CHECK_STR(pd("<h1>标题</h1><p class=\"date\">2023年5月12日 08:00</p><p>2021年1月1日</p>",
	             NULL),
	          "2023-05-12");
	CHECK_STR(pd("<h1>标题</h1><span>日期: 2023/06/01</span>", NULL), "2023-06-01");
	/* English labels */
	CHECK_STR(pd("<h1>Title</h1><p class=\"byline\">By A. Writer | Published on "
	             "<b>March 3, 2020</b></p>",
	             NULL),
	          "2020-03-03");
	CHECK_STR(pd("<h1>T</h1><p>Republished with no date. Updated: 12 May 2021</p>", NULL),
	          "2021-05-12");
	/* nothing dated */
	CHECK_STR(pd("<h1>T</h1><p>In 2023, 5 people came; posted soon.</p>", NULL), "");
	CHECK_STR(pd("", NULL), "");
}

static void test_truncated(void)
{
	/* every prefix of a page is accepted and read only within its bounds */
	static const char page[] = "<meta name=\"date\" content=\"2018-09-10\"><script type="
	                           "\"application/ld+json\">{\"datePublished\":\"2021-03-01\"}"
	                           "</script><time datetime='2020-01-02'><h1>t</h1>发布时间：2023-05-12";
	char out[11];
	for (size_t n = 0; n < sizeof page - 1; n++) {
		char *copy = malloc(n ? n : 1);
		memcpy(copy, page, n);
		llm_pubdate_find(copy, n, "/2023/05/1", 10, out);
		free(copy);
	}
	CHECK_STR(pd(page, NULL), "2018-09-10");
}

int main(void)
{
	RUN(test_parse);
	RUN(test_meta);
	RUN(test_jsonld);
	RUN(test_time_url);
	RUN(test_text);
	RUN(test_truncated);
	return unit_done();
}
