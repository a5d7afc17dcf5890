/*
 * cast.c — bf16/fp16 conversions (cast.h), written on the bit patterns so that the rounding
 * is the IEEE one (nearest, ties to even) whatever the compiler and FPU do.
 */
#include "cast.h"

#include <math.h>
#include <string.h>

static uint32_t bits(float x)
{
	uint32_t b;
	memcpy(&b, &x, sizeof b);
	return b;
}

static float from_bits(uint32_t b)
{
	float x;
	memcpy(&x, &b, sizeof x);
	return x;
}

uint16_t llm_f32_to_bf16(float x)
{
	uint32_t b = bits(x);
	if ((b & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((b >> 16) | 0x40); /* quiet NaN, sign and top payload kept */
	/* Adding 0x7fff plus the lowest kept bit rounds half to even; a carry into the exponent
	 * is the correct next binade, and past the largest finite value it gives infinity. */
	return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1)) >> 16);
}

float llm_bf16_to_f32(uint16_t h)
{
	return from_bits((uint32_t)h << 16);
}

uint16_t llm_f32_to_f16(float x)
{
	uint32_t b = bits(x), sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
	if (a >= 0x7f800000u) /* infinity, or NaN made quiet */
		return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0));
	if (a >= 0x477ff000u) /* 65520 and up round to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 0x38800000u) { /* below 2^-14: an fp16 subnormal (or zero) */
		int e = (int)(a >> 23);
		if (e < 102) /* below 2^-25: rounds to zero */
			return (uint16_t)sign;
		uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = (uint32_t)(126 - e);
		uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (r & 1)))
			r++; /* may reach 0x400, the smallest normal: the right encoding */
		return (uint16_t)(sign | r);
	}
	uint32_t r = a - 0x38000000u, h = r >> 13, rem = r & 0x1fffu; /* exponent bias 127 -> 15 */
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

float llm_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1f)
		return from_bits(sign | 0x7f800000u | (m << 13));
	if (e)
		return from_bits(sign | ((e + 112) << 23) | (m << 13));
	float f = ldexpf((float)m, -24); /* subnormal: exact in fp32 */
	return sign ? -f : f;
}

void llm_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = llm_f32_to_bf16(src[i]);
}

void llm_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = llm_bf16_to_f32(src[i]);
}

void llm_f32_to_f16_n(uint16_t *dst, const float *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = llm_f32_to_f16(src[i]);
}

void llm_f16_to_f32_n(float *dst, const uint16_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = llm_f16_to_f32(src[i]);
}

float llm_round_bf16(float x)
{
	return llm_bf16_to_f32(llm_f32_to_bf16(x));
}

float llm_round_f16(float x)
{
	return llm_f16_to_f32(llm_f32_to_f16(x));
}
