/*
 * test_cast.c — bf16/fp16 conversions against an independent reference: exact rational
 * rounding in double (every float and every 16-bit value is exact in double), over all 65536
 * half patterns and a sweep of floats with the ties and boundaries spelled out.
 */
#include "model/cast.h"
#include "unit.h"

/* Nearest representable value of a format with `mant` fraction bits, minimum normal exponent
 * emin and largest finite value maxv, ties to even, computed in double. */
static double round_ref(double x, int mant, int emin, double maxv, int *overflow)
{
	double a = fabs(x);
	int e;
	frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
	e -= 1;
	if (e < emin)
		e = emin; /* subnormal: fixed quantum */
	double q = ldexp(1.0, e - mant), k = floor(a / q), r = a - k * q;
	if (r > q / 2 || (r == q / 2 && fmod(k, 2) == 1))
		k += 1;
	double y = k * q;
	/* Overflow: beyond the largest finite value by half a quantum or more. */
	*overflow = y > maxv;
	return x < 0 ? -y : y;
}

static void test_f16_all_patterns_round_trip(void)
{
	for (uint32_t h = 0; h < 65536; h++) {
		float f = llm_f16_to_f32((uint16_t)h);
		if (isnan(f)) {
			CHECK(isnan(llm_f16_to_f32(llm_f32_to_f16(f))));
			continue;
		}
		CHECK_EQ_INT(llm_f32_to_f16(f), h);
	}
}

static void test_bf16_all_patterns_round_trip(void)
{
	for (uint32_t h = 0; h < 65536; h++) {
		float f = llm_bf16_to_f32((uint16_t)h);
		if (isnan(f)) {
			CHECK(isnan(llm_bf16_to_f32(llm_f32_to_bf16(f))));
			continue;
		}
		CHECK_EQ_INT(llm_f32_to_bf16(f), h);
	}
}

static float sweep(uint64_t i)
{
	/* Bit patterns spread over all exponents, plus exact ties: every 4096th pattern has the
	 * low 13 bits 0x1000 (an fp16 tie) and every 8192nd the low 16 bits 0x8000 (a bf16 tie). */
	uint32_t b = (uint32_t)(i * 2654435761u);
	if (i % 4096 == 0)
		b = (b & ~0x1fffu) | 0x1000u;
	if (i % 8192 == 1)
		b = (b & ~0xffffu) | 0x8000u;
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

static void test_f16_rounding_matches_reference(void)
{
	int bad = 0;
	for (uint64_t i = 0; i < 2000000 && bad < 5; i++) {
		float x = sweep(i);
		if (isnan(x) || isinf(x))
			continue;
		int ovf;
		double want = round_ref(x, 10, -14, 65504.0, &ovf);
		float got = llm_f16_to_f32(llm_f32_to_f16(x));
		if (ovf ? !(isinf(got) && (got > 0) == (x > 0)) : (double)got != want) {
			printf("#   f16(%.9g) = %.9g, want %.9g%s\n", x, got, want, ovf ? " (inf)" : "");
			bad++;
		}
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(isinf(llm_round_f16(65520.0f)) && llm_round_f16(65519.0f) == 65504.0f);
	CHECK(llm_round_f16(ldexpf(1, -25)) == 0 && llm_round_f16(ldexpf(1.5f, -25)) == ldexpf(1, -24));
	CHECK(llm_round_f16(-0.0f) == 0 && signbit(llm_round_f16(-0.0f)));
}

static void test_bf16_rounding_matches_reference(void)
{
	int bad = 0;
	for (uint64_t i = 0; i < 2000000 && bad < 5; i++) {
		float x = sweep(i);
		if (isnan(x) || isinf(x))
			continue;
		int ovf;
		double want = round_ref(x, 7, -126, 3.3895313892515355e38, &ovf);
		float got = llm_round_bf16(x);
		if (ovf ? !(isinf(got) && (got > 0) == (x > 0)) : (double)got != want) {
			printf("#   bf16(%.9g) = %.9g, want %.9g%s\n", x, got, want, ovf ? " (inf)" : "");
			bad++;
		}
	}
	CHECK_EQ_INT(bad, 0);
	/* 1 + 2^-8 is the tie between 1 and 1 + 2^-7: even is 1. */
	CHECK(llm_round_bf16(1.0f + ldexpf(1, -8)) == 1.0f);
	CHECK(llm_round_bf16(1.0f + 3 * ldexpf(1, -8)) == 1.0f + ldexpf(1, -6));
}

static void test_nan_and_infinity(void)
{
	CHECK(isnan(llm_round_bf16(NAN)) && isnan(llm_round_f16(NAN)));
	CHECK(isinf(llm_round_bf16(INFINITY)) && isinf(llm_round_f16(-INFINITY)));
	CHECK(llm_round_f16(-INFINITY) < 0);
	/* A NaN whose payload sits only in the low bits must not become infinity. */
	uint32_t b = 0x7f800001u;
	float f;
	memcpy(&f, &b, sizeof f);
	CHECK(isnan(llm_round_bf16(f)) && isnan(llm_round_f16(f)));
}

static void test_arrays(void)
{
	float in[5] = { 1.5f, -2.25f, 3.14159f, 1e-6f, 70000.0f }, out[5];
	uint16_t h[5];
	llm_f32_to_f16_n(h, in, 5);
	llm_f16_to_f32_n(out, h, 5);
	for (int i = 0; i < 5; i++)
		CHECK(out[i] == llm_round_f16(in[i]) || (isinf(out[i]) && isinf(llm_round_f16(in[i]))));
	llm_f32_to_bf16_n(h, in, 5);
	llm_bf16_to_f32_n(out, h, 5);
	for (int i = 0; i < 5; i++)
		CHECK(out[i] == llm_round_bf16(in[i]));
}

int main(void)
{
	RUN(test_f16_all_patterns_round_trip);
	RUN(test_bf16_all_patterns_round_trip);
	RUN(test_f16_rounding_matches_reference);
	RUN(test_bf16_rounding_matches_reference);
	RUN(test_nan_and_infinity);
	RUN(test_arrays);
	return unit_done();
}
