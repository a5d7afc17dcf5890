/*
 * unit.h — the C unit-test harness: TAP output, one line per test function.
 *
 *   static void test_parse(void) { CHECK(x == 1); CHECK_EQ_INT(a, b); CHECK_NEAR(f, 1.0, 1e-6); }
 *   int main(void) { RUN(test_parse); return unit_done(); }
 *
 * A failed check prints "#   file:line: expression" diagnostics and marks the current test
 * failed; the test function keeps running. unit_skip("why") marks it skipped.
 * Test data: unit_path("samples/x") resolves against the source root (LLM_TOP, set by the runner).
 */
#ifndef LLM_UNIT_H
#define LLM_UNIT_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_n, unit_failed_tests, unit_cur_failed, unit_cur_skipped;
static char unit_skip_reason[256];

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			unit_cur_failed = 1;                                          \
		}                                                                     \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                     \
	do {                                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);                            \
		if (a_ != b_) {                                                                \
			printf("#   %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, \
			       #b, a_, b_);                                                    \
			unit_cur_failed = 1;                                                   \
		}                                                                              \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_) {                                                                    \
			printf("#   %s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", __FILE__, \
			       __LINE__, #a, #b, a_, b_);                                          \
			unit_cur_failed = 1;                                                       \
		}                                                                                  \
	} while (0)

/* |a - b| <= tol, NaN never passes. */
#define CHECK_NEAR(a, b, tol)                                                                 \
	do {                                                                                  \
		double a_ = (double)(a), b_ = (double)(b);                                    \
		if (!(fabs(a_ - b_) <= (tol))) {                                              \
			printf("#   %s:%d: %s ~ %s failed: %.9g vs %.9g (tol %g)\n", __FILE__,   \
			       __LINE__, #a, #b, a_, b_, (double)(tol));                      \
			unit_cur_failed = 1;                                                  \
		}                                                                             \
	} while (0)

#define CHECK_STR(a, b)                                                                       \
	do {                                                                                  \
		const char *a_ = (a), *b_ = (b);                                              \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                      \
			printf("#   %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
			       #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");               \
			unit_cur_failed = 1;                                                  \
		}                                                                             \
	} while (0)

#define CHECK_MEM(a, alen, b, blen)                                                          \
	do {                                                                                 \
		size_t al_ = (alen), bl_ = (blen);                                           \
		if (al_ != bl_ || memcmp((a), (b), al_) != 0) {                              \
			printf("#   %s:%d: %s == %s failed: \"%.*s\" != \"%.*s\"\n", __FILE__,  \
			       __LINE__, #a, #b, (int)al_, (const char *)(a), (int)bl_,     \
			       (const char *)(b));                                           \
			unit_cur_failed = 1;                                                 \
		}                                                                            \
	} while (0)

static inline void unit_skip(const char *why)
{
	unit_cur_skipped = 1;
	snprintf(unit_skip_reason, sizeof unit_skip_reason, "%s", why);
}

#define RUN(fn)                                                                          \
	do {                                                                             \
		unit_cur_failed = unit_cur_skipped = 0;                                  \
		fn();                                                                    \
		unit_n++;                                                                \
		if (unit_cur_failed) {                                                   \
			unit_failed_tests++;                                             \
			printf("not ok %d - %s\n", unit_n, #fn);                         \
		} else if (unit_cur_skipped) {                                           \
			printf("ok %d - %s # skip %s\n", unit_n, #fn, unit_skip_reason); \
		} else {                                                                 \
			printf("ok %d - %s\n", unit_n, #fn);                             \
		}                                                                        \
		fflush(stdout);                                                          \
	} while (0)

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed_tests ? 1 : 0;
}

/* Path under the source tree (LLM_TOP, default "."); static buffer, valid until next call. */
static inline const char *unit_path(const char *rel)
{
	static char buf[4096];
	const char *top = getenv("LLM_TOP");
	snprintf(buf, sizeof buf, "%s/%s", top ? top : ".", rel);
	return buf;
}

#endif
