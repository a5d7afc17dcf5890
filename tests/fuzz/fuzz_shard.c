/*
 * Fuzz target: the shard reader and the manifest reader. The input is written to a file;
 * for a shard the harness recomputes the header checksum, so that mutations get past it and
 * reach the size, offset and section checks behind it (a checksum catches accidents, not
 * crafted files). A shard that opens must be readable in full: every document, its tokens,
 * inputs and metadata, without reading outside the mapping.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "data/shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_tmp(char *path, const uint8_t *data, size_t size)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	return ok ? 0 : -1;
}

static void shard(const char *path)
{
	llm_shard *s;
	if (llm_shard_open(&s, path, 0) != LLM_OK)
		return;
	const llm_shard_info *in = llm_shard_get_info(s);
	volatile uint64_t sink = llm_shard_verify(s);
	uint32_t buf[256];
	for (uint64_t i = 0; i < in->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		if (d.start + d.len > in->tokens)
			abort();
		for (uint64_t at = d.start; at < d.start + d.len; at += 256) {
			size_t n = d.start + d.len - at < 256 ? (size_t)(d.start + d.len - at) : 256;
			llm_shard_read_tokens(s, at, n, buf);
			llm_shard_read_inputs(s, at, n, buf);
			sink += buf[0];
		}
		for (size_t k = 0; k < d.meta_len; k++)
			sink += (unsigned char)d.meta[k];
		sink += strlen(llm_shard_domain(s, d.domain));
	}
	llm_shard_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz_shard.XXXXXX";
	if (size >= LLM_SHARD_HEADER_SIZE && memcmp(data, LLM_SHARD_MAGIC, 8) == 0) {
		uint8_t *copy = malloc(size);
		memcpy(copy, data, size);
		uint64_t h = llm_hash64(copy, LLM_SHARD_HEADER_SIZE - 8, 0);
		memcpy(copy + LLM_SHARD_HEADER_SIZE - 8, &h, 8);
		int ok = write_tmp(path, copy, size) == 0;
		free(copy);
		if (ok)
			shard(path);
	} else if (write_tmp(path, data, size) == 0) {
		llm_manifest m;
		if (llm_manifest_load(&m, path) == LLM_OK)
			llm_manifest_release(&m);
	}
	unlink(path);
	return 0;
}
