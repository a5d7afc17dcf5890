/*
 * cast.h — bf16 and fp16 conversions on the CPU, bit-identical to the GPU's (kernels/cast.cu):
 * round to nearest, ties to even; NaN stays NaN (quiet), overflow goes to infinity, fp16
 * subnormals are kept. Used to prepare and check the GPU's low-precision copies and to write
 * half-precision tensors.
 *
 * Values are raw 16-bit patterns (uint16_t). All functions are pure; thread safe.
 */
#ifndef LLM_CAST_H
#define LLM_CAST_H

#include <stddef.h>
#include <stdint.h>

uint16_t llm_f32_to_bf16(float x);
float llm_bf16_to_f32(uint16_t h);
uint16_t llm_f32_to_f16(float x);
float llm_f16_to_f32(uint16_t h);

/* Arrays: dst[i] = conversion of src[i], n elements. */
void llm_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n);
void llm_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void llm_f32_to_f16_n(uint16_t *dst, const float *src, size_t n);
void llm_f16_to_f32_n(float *dst, const uint16_t *src, size_t n);

/* x rounded through the 16-bit type and back (what a bf16/fp16 tensor can hold of x). */
float llm_round_bf16(float x);
float llm_round_f16(float x);

#endif
