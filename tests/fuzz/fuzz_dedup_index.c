/*
 * Fuzz target: the three files of llm-dedup read back from disk — the saved index, the
 * signature file and the removal list. The first byte picks the parser; the harness
 * recomputes the trailing XXH3-64 so that mutations get past the checksum and exercise the
 * size and bounds checks behind it (a checksum only catches accidents, not crafted files).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/io.h"
#include "dedup/dedup.h"
#include "dedup/rmlist.h"
#include "dedup/sigfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Plain stdio: llm_write_file's fsync would dominate the time of every run. */
static int put_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static void index_with(const char *path, llm_dedup_method m)
{
	llm_dedup_params p;
	llm_dedup_params_default(&p, m);
	llm_dedup *d;
	if (llm_dedup_new(&d, &p) != LLM_OK)
		return;
	if (llm_dedup_load_index(d, path) == LLM_OK) {
		/* a loaded index must be usable: add a document and save it again */
		uint64_t keys[14] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
		llm_dedup_sig s = { .has = 1, .nkeys = m == LLM_DEDUP_EXACT ? 1 : 14, .keys = keys,
			            .fp = 99 };
		uint64_t v = llm_dedup_add(d, &s);
		llm_dedup_finish(d);
		if (llm_dedup_root(d, v) == v)
			llm_dedup_set_id(d, v, "new", 3);
		char out[64];
		snprintf(out, sizeof out, "%s.out", path);
		llm_dedup_save_index(d, out);
		unlink(out);
	}
	llm_dedup_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int which = data[0] % 3;
	data++, size--;
	char path[64];
	snprintf(path, sizeof path, "/tmp/fuzz_dedup_index.%d", (int)getpid());
	uint8_t *copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 8) {
		uint64_t h = llm_hash64(copy, size - 8, 0);
		memcpy(copy + size - 8, &h, 8);
	}
	if (which != 1 && put_file(path, copy, size) == 0) {
		if (which == 0) {
			index_with(path, LLM_DEDUP_MINHASH);
			index_with(path, LLM_DEDUP_EXACT);
			index_with(path, LLM_DEDUP_SIMHASH);
		} else {
			llm_rmlist_reader l;
			llm_rmlist_entry e;
			if (llm_rmlist_load(&l, path) == LLM_OK)
				while (llm_rmlist_next(&l, &e) == LLM_OK)
					;
			llm_rmlist_reader_release(&l);
		}
	}
	/* signature files are hashed as a stream over all bytes before the last 8 */
	if (which == 1 && put_file(path, copy, size) == 0) {
		llm_sigfile_reader *r;
		llm_dedup_params p;
		if (llm_sigfile_open(&r, path, &p) == LLM_OK) {
			llm_dedup_sig s;
			const char *id;
			size_t idl;
			int n = 0;
			while (llm_sigfile_next(r, &s, &id, &idl) == LLM_OK && ++n < 100000)
				;
		}
		llm_sigfile_free(r);
	}
	unlink(path);
	free(copy);
	return 0;
}
