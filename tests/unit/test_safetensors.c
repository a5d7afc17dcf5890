/*
 * test_safetensors.c — round trip through the writer and reader, the exact byte layout of a
 * small file (as the format's specification describes it), conversions from half types, and
 * the rejections that protect readers from hostile files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "model/safetensors.h"
#include "unit.h"

static char dir[256];

static void test_round_trip(void)
{
	float a[6] = { 1, -2, 3.5f, 0, 1e-30f, -7 }, b[3] = { 9, 8, 7 };
	int64_t sa[2] = { 2, 3 }, sb[1] = { 3 };
	llm_safetensors_writer *w = llm_safetensors_writer_new();
	llm_safetensors_writer_meta(w, "format", "pt");
	llm_safetensors_writer_add(w, "model.a.weight", LLM_ST_F32, 2, sa, a);
	llm_safetensors_writer_add(w, "b", LLM_ST_F32, 1, sb, b);
	char path[300];
	snprintf(path, sizeof path, "%s/x.safetensors", dir);
	CHECK_EQ_INT(llm_safetensors_writer_write(w, path), LLM_OK);
	llm_safetensors_writer_free(w);
	llm_safetensors *st;
	CHECK_EQ_INT(llm_safetensors_open(&st, path), LLM_OK);
	if (!st)
		return;
	CHECK_EQ_INT(llm_safetensors_count(st), 2);
	CHECK_STR(llm_safetensors_at(st, 0)->name, "model.a.weight");
	CHECK_STR(llm_safetensors_meta(st, "format"), "pt");
	CHECK(llm_safetensors_meta(st, "other") == NULL);
	float got[6];
	CHECK_EQ_INT(llm_safetensors_read_f32(st, "model.a.weight", got, 2, sa), LLM_OK);
	CHECK(memcmp(got, a, sizeof a) == 0);
	CHECK_EQ_INT(llm_safetensors_read_f32(st, "b", got, 1, sb), LLM_OK);
	CHECK(memcmp(got, b, sizeof b) == 0);
	CHECK_EQ_INT(llm_safetensors_read_f32(st, "b", got, 2, sa), LLM_EFORMAT);
	CHECK_EQ_INT(llm_safetensors_read_f32(st, "c", got, 1, sb), LLM_ENOTFOUND);
	/* data starts 8-aligned after the header */
	const llm_safetensors_tensor *t = llm_safetensors_find(st, "b");
	CHECK(t && t->begin == 24 && t->end == 36);
	llm_safetensors_free(st);
	FILE *f = fopen(path, "rb");
	unsigned char len8[8];
	CHECK(f && fread(len8, 1, 8, f) == 8);
	CHECK(len8[0] % 8 == 0);
	if (f)
		fclose(f);
	CHECK_EQ_INT(llm_safetensors_open(&st, "/nonexistent/x.safetensors"), LLM_EIO);
	CHECK(st == NULL);
	unlink(path);
}

static size_t build(unsigned char *out, const char *header, const void *data, size_t n)
{
	size_t hl = strlen(header);
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	memcpy(out + 8, header, hl);
	if (n)
		memcpy(out + 8 + hl, data, n);
	return 8 + hl + n;
}

static void test_half_types(void)
{
	/* bf16 0x3fc0 = 1.5, 0xc000 = -2; f16 0x3c00 = 1, 0x0001 = 2^-24 (subnormal), 0xfc00 = -inf */
	unsigned char data[10] = { 0xc0, 0x3f, 0x00, 0xc0, 0x00, 0x3c, 0x01, 0x00, 0x00, 0xfc };
	unsigned char buf[512];
	size_t n = build(buf, "{\"h\": {\"dtype\": \"BF16\", \"shape\": [2], \"data_offsets\": [0, 4]},"
	                      " \"f\": {\"dtype\": \"F16\", \"shape\": [3], \"data_offsets\": [4, 10]}}",
	                 data, sizeof data);
	llm_safetensors *st;
	CHECK_EQ_INT(llm_safetensors_parse(&st, buf, n, "mem"), LLM_OK);
	if (!st)
		return;
	float h[2], f[3];
	int64_t s2 = 2, s3 = 3;
	CHECK_EQ_INT(llm_safetensors_read_f32(st, "h", h, 1, &s2), LLM_OK);
	CHECK(h[0] == 1.5f && h[1] == -2.0f);
	CHECK_EQ_INT(llm_safetensors_read_f32(st, "f", f, 1, &s3), LLM_OK);
	CHECK(f[0] == 1.0f && f[1] == 0x1p-24f && f[2] < -3e38f);
	llm_safetensors_free(st);
}

static void test_rejects(void)
{
	static const char *bad[] = {
		/* hole between tensors */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
		" \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 12]}}",
		/* overlap */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
		" \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
		/* size does not match the shape */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\": [0, 8]}}",
		/* past the end of the data */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}",
		/* unknown dtype */
		"{\"a\": {\"dtype\": \"F8\", \"shape\": [8], \"data_offsets\": [0, 8]}}",
		/* duplicate name */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
		" \"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
		/* shape overflow */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, 8]}}",
		/* negative offset, missing field, not an object */
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [-8, 0]}}",
		"{\"a\": {\"dtype\": \"F32\", \"shape\": [2]}}",
		"[1, 2]",
		"{\"__metadata__\": {\"k\": 1}}",
		"{\"a\": ",
	};
	unsigned char buf[512], data[8] = { 0 };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		size_t n = build(buf, bad[i], data, sizeof data);
		llm_safetensors *st = (void *)1;
		int rc = llm_safetensors_parse(&st, buf, n, "mem");
		if (rc != LLM_EFORMAT)
			printf("#   case %zu accepted: %s\n", i, bad[i]);
		CHECK_EQ_INT(rc, LLM_EFORMAT);
		CHECK(st == NULL);
	}
	/* header size beyond the file; a file shorter than the size field */
	llm_safetensors *st;
	unsigned char huge[16] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, '{', '}' };
	CHECK_EQ_INT(llm_safetensors_parse(&st, huge, sizeof huge, "mem"), LLM_EFORMAT);
	CHECK_EQ_INT(llm_safetensors_parse(&st, huge, 5, "mem"), LLM_EFORMAT);
	/* an empty file of tensors is valid */
	size_t n = build(buf, "{}      ", NULL, 0);
	CHECK_EQ_INT(llm_safetensors_parse(&st, buf, n, "mem"), LLM_OK);
	CHECK_EQ_INT(llm_safetensors_count(st), 0);
	llm_safetensors_free(st);
	llm_safetensors_free(NULL);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_safetensors.%ld", (long)getpid());
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		return 1;
	}
	RUN(test_round_trip);
	RUN(test_half_types);
	RUN(test_rejects);
	rmdir(dir);
	return unit_done();
}
