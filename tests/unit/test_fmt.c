/* Unit tests for lib/core/fmt: the shortest text of a double that reads back. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/fmt.h"
#include "unit.h"

static const char *fmt(double x)
{
	static char s[LLM_FMT_DOUBLE_MAX];
	size_t n = llm_fmt_double(s, sizeof s, x);
	CHECK_EQ_INT(n, strlen(s));
	return s;
}

static void test_shortest(void)
{
	CHECK_STR(fmt(0.9), "0.9");
	CHECK_STR(fmt(0.1), "0.1");
	CHECK_STR(fmt(3), "3");
	CHECK_STR(fmt(-2.5), "-2.5");
	CHECK_STR(fmt(1e-4), "0.0001");
	CHECK_STR(fmt(3e-4), "0.0003");
	CHECK_STR(fmt(1e22), "1e+22");
	CHECK_STR(fmt(0.1 + 0.2), "0.30000000000000004");
	CHECK_STR(fmt(1.0 / 3), "0.3333333333333333");
	CHECK_STR(fmt(-0.0), "-0");
	CHECK_STR(fmt(NAN), "nan");
	CHECK_STR(fmt(INFINITY), "inf");
	CHECK_STR(fmt(-INFINITY), "-inf");
	CHECK_STR(fmt(5e-324), "4.94065645841247e-324");
}

/* Every double reads back, bit for bit: random bit patterns over the whole range. */
static void test_round_trip(void)
{
	uint64_t r = 0x9e3779b97f4a7c15ull;
	size_t bad = 0;
	for (int i = 0; i < 200000; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		double x;
		memcpy(&x, &r, sizeof x);
		if (!isfinite(x))
			continue;
		const char *s = fmt(x);
		double y = strtod(s, NULL);
		if (memcmp(&x, &y, sizeof x) != 0 && bad++ < 3)
			printf("#   %a printed as %s\n", x, s);
	}
	CHECK_EQ_INT(bad, 0);
}

/* A buffer too small is cut, NUL-terminated, and the length says what it holds. */
static void test_small_buffer(void)
{
	char s[4];
	CHECK_EQ_INT(llm_fmt_double(s, sizeof s, 0.30000000000000004), 3);
	CHECK_STR(s, "0.3");
}

int main(void)
{
	RUN(test_shortest);
	RUN(test_round_trip);
	RUN(test_small_buffer);
	return unit_done();
}
