/* test_normalize.c — each normalisation step, and idempotence on random tricky text. */
#include "text/normalize.h"

#include "core/err.h"
#include "core/hash.h"
#include "unit.h"

static const char *norm(const char *in, unsigned flags)
{
	static llm_buf out;
	llm_norm_opts o = { flags, 1 };
	llm_buf_reset(&out);
	llm_normalize(in, strlen(in), &o, &out);
	return out.p;
}

static void test_steps(void)
{
	CHECK_STR(norm("a\xff" "b", LLM_NORM_ALL), "a\xEF\xBF\xBD" "b");
	CHECK_STR(norm("a\x01" "b\x7f" "c\xc2\x80" "d", LLM_NORM_ALL), "abcd");
	CHECK_STR(norm("zero\xE2\x80\x8Bwidth\xEF\xBB\xBF soft\xC2\xAD" "hy", LLM_NORM_ALL),
	          "zerowidth softhy");
	/* full-width ASCII and the ideographic space */
	CHECK_STR(norm("\xEF\xBC\xA1\xEF\xBC\x91\xE3\x80\x80\xEF\xBC\x8C", LLM_NORM_ALL), "A1 ,");
	CHECK_STR(norm("a\r\nb\rc\xE2\x80\xA8" "d", LLM_NORM_ALL), "a\nb\nc\nd");
	CHECK_STR(norm("a  \t b\xC2\xA0\xC2\xA0" "c", LLM_NORM_ALL), "a b c");
	CHECK_STR(norm("  a b  \n   c  ", LLM_NORM_ALL), "a b\nc");
	CHECK_STR(norm("\n\n\na\n\n\n\n\nb\n \n \nc\n\n", LLM_NORM_ALL), "a\n\nb\n\nc");
	CHECK_STR(norm("", LLM_NORM_ALL), "");
	CHECK_STR(norm(" \n\t\xE3\x80\x80", LLM_NORM_ALL), "");
	/* a removed character between spaces leaves one space, at once */
	CHECK_STR(norm("a \xE2\x80\x8B b", LLM_NORM_ALL), "a b");
	/* with every step, even the full-width punctuation is folded */
	CHECK_STR(norm("\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x81\xE3\x80\x82", LLM_NORM_ALL),
	          "\xE4\xBD\xA0\xE5\xA5\xBD!\xE3\x80\x82");
}

/* The default leaves Chinese typography alone: full-width letters and digits become ASCII,
 * full-width punctuation (，；（）！？) and the ideographic space stay. */
static void test_default_keeps_chinese(void)
{
	/* "（一）ＡＢ１２；" */
	CHECK_STR(norm("\xEF\xBC\x88\xE4\xB8\x80\xEF\xBC\x89\xEF\xBC\xA1\xEF\xBD\x82\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x9B",
	               LLM_NORM_DEFAULT),
	          "\xEF\xBC\x88\xE4\xB8\x80\xEF\xBC\x89" "Ab12" "\xEF\xBC\x9B");
	/* "　　第一条，……！？" : the paragraph indent and every mark kept */
	const char *para = "\xE3\x80\x80\xE3\x80\x80\xE7\xAC\xAC\xE4\xB8\x80\xE6\x9D\xA1\xEF\xBC\x8C"
	                   "\xE2\x80\xA6\xE2\x80\xA6\xEF\xBC\x81\xEF\xBC\x9F";
	CHECK_STR(norm(para, LLM_NORM_DEFAULT), para);
	/* the explicit steps */
	CHECK_STR(norm("\xEF\xBC\x8C\xEF\xBC\xA1", LLM_NORM_WIDTH_PUNCT), ",\xEF\xBC\xA1");
	CHECK_STR(norm("a\xE3\x80\x80\xE3\x80\x80" "b", LLM_NORM_IDEO_SPACE | LLM_NORM_SPACES), "a b");
	CHECK_STR(norm("\xE3\x80\x80" "b", LLM_NORM_IDEO_SPACE | LLM_NORM_TRIM), "b");
	CHECK_STR(norm("\xE3\x80\x80" "b", LLM_NORM_DEFAULT), "\xE3\x80\x80" "b");
}

/* The plain ASCII runs are read eight bytes at a time: a double space, a space before a
 * newline or a non-ASCII space, and a space at the end, at every offset from a run's start. */
static void test_run_edges(void)
{
	char in[64], want[64];
	for (int k = 1; k < 24; k++) {
		memset(in, 'x', (size_t)k);
		memset(want, 'x', (size_t)k);
		strcpy(in + k, "  y z");
		strcpy(want + k, " y z");
		CHECK_STR(norm(in, LLM_NORM_DEFAULT), want);
		CHECK_STR(norm(in, 0), in);
		strcpy(in + k, " \ny ");
		strcpy(want + k, "\ny");
		CHECK_STR(norm(in, LLM_NORM_DEFAULT), want);
		strcpy(in + k, " \xC2\xA0" "y");
		strcpy(want + k, " y");
		CHECK_STR(norm(in, LLM_NORM_DEFAULT), want);
		strcpy(in + k, " ");
		want[k] = 0;
		CHECK_STR(norm(in, LLM_NORM_DEFAULT), want);
		strcpy(in + k, "\x7F" "a b");
		strcpy(want + k, "a b");
		CHECK_STR(norm(in, LLM_NORM_DEFAULT), want);
	}
}

static void test_flags_off(void)
{
	CHECK_STR(norm("a  b\r\n", 0), "a  b\r\n");
	CHECK_STR(norm("a  b\n\n\n\nc", LLM_NORM_SPACES), "a b\n\n\n\nc");
	CHECK_STR(norm("a\n\n\n\nc", LLM_NORM_BLANKS), "a\n\nc");
	CHECK_STR(norm(" a  b ", LLM_NORM_TRIM), "a  b");
	CHECK_STR(norm("a\xff", LLM_NORM_ALL & ~LLM_NORM_REPAIR), "a\xff");
	llm_norm_opts o = { LLM_NORM_ALL, 0 };
	llm_buf out = LLM_BUF_INIT;
	llm_normalize("a\n\n\nb", 5, &o, &out);
	CHECK_STR(out.p, "a\nb");
	llm_buf_release(&out);
}

static void test_parse(void)
{
	unsigned f;
	CHECK_EQ_INT(llm_norm_parse("all", &f), LLM_OK);
	CHECK_EQ_INT(f, LLM_NORM_ALL);
	CHECK_EQ_INT(llm_norm_parse("repair,width,blank-lines", &f), LLM_OK);
	CHECK_EQ_INT(f, LLM_NORM_REPAIR | LLM_NORM_WIDTH | LLM_NORM_BLANKS);
	CHECK_EQ_INT(llm_norm_parse("none", &f), LLM_OK);
	CHECK_EQ_INT(f, 0);
	CHECK_EQ_INT(llm_norm_parse("default width-punct", &f), LLM_OK);
	CHECK_EQ_INT(f, LLM_NORM_DEFAULT | LLM_NORM_WIDTH_PUNCT);
	llm_buf b = LLM_BUF_INIT;
	llm_norm_format(LLM_NORM_REPAIR | LLM_NORM_IDEO_SPACE, &b);
	CHECK_STR(b.p, "repair ideographic-space");
	llm_buf_release(&b);
	CHECK_EQ_INT(llm_norm_parse("repair,bogus", &f), LLM_EINVAL);
}

/* normalize(normalize(x)) == normalize(x) for random strings over the characters that each
 * step touches, under every combination of steps. */
static void test_idempotent(void)
{
	static const char *const atoms[] = {
		"a", "Z", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\x01", "\x7f",
		"\xC2\x80", "\xC2\x85", "\xC2\xA0", "\xC2\xAD", "\xE2\x80\x8B", "\xE2\x80\x8D",
		"\xE2\x80\xA8", "\xE2\x80\xA9", "\xE3\x80\x80", "\xEF\xBB\xBF", "\xEF\xBC\x81",
		"\xEF\xBC\xA1", "\xE4\xB8\xAD", "\xff", "\xE4\xB8", "\xF0\x9F\x98", "\xEF\xBF\xBD",
		"\xE2\x80\x82", "\xE1\xA0\x8E"
	};
	llm_rng r;
	llm_rng_seed(&r, 42);
	llm_buf x = LLM_BUF_INIT, y = LLM_BUF_INIT, z = LLM_BUF_INIT;
	int bad = 0;
	for (int it = 0; it < 20000 && bad < 3; it++) {
		llm_buf_reset(&x);
		int len = (int)llm_rng_below(&r, 24);
		for (int k = 0; k < len; k++)
			llm_buf_adds(&x, atoms[llm_rng_below(&r, sizeof atoms / sizeof *atoms)]);
		llm_norm_opts o = { (unsigned)llm_rng_below(&r, LLM_NORM_ALL + 1), (unsigned)llm_rng_below(&r, 3) };
		llm_buf_reset(&y);
		llm_buf_reset(&z);
		llm_normalize(x.p, x.len, &o, &y);
		bool changed = llm_normalize(y.p, y.len, &o, &z);
		if (changed || y.len != z.len || memcmp(y.p, z.p, y.len) != 0) {
			bad++;
			printf("#   not idempotent (flags %#x, blanks %u): input", o.flags, o.max_blank_lines);
			for (size_t i = 0; i < x.len; i++)
				printf(" %02x", (unsigned char)x.p[i]);
			printf("\n");
		}
	}
	CHECK_EQ_INT(bad, 0);
	llm_buf_release(&x);
	llm_buf_release(&y);
	llm_buf_release(&z);
}

int main(void)
{
	RUN(test_steps);
	RUN(test_default_keeps_chinese);
	RUN(test_flags_off);
	RUN(test_run_edges);
	RUN(test_parse);
	RUN(test_idempotent);
	return unit_done();
}
