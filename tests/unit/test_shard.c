/* test_shard.c — shard writer and reader round trip, corruption detection, manifest. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "data/shard.h"
#include "tok/tokstream.h"
#include "unit.h"

static char dir[64];

static const char *tmp_path(const char *name)
{
	static char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return p;
}

static int dir_entries(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static const char *doms[] = { "web", "news", "", "code" };
enum { NDOC = 300, EOS = 999 };

/* Document k: length, tokens, inputs; every 5th already ends with EOS. */
static size_t gen_doc(uint64_t k, uint32_t *t, uint32_t *in, uint32_t vocab)
{
	llm_rng r;
	llm_rng_seed2(&r, 5, k);
	size_t n = llm_rng_below(&r, 200);
	for (size_t i = 0; i < n; i++) {
		t[i] = (uint32_t)llm_rng_below(&r, EOS);
		in[i] = (uint32_t)llm_rng_below(&r, vocab);
	}
	if (k % 5 == 0 && n)
		t[n - 1] = EOS;
	return n;
}

static int as_raw; /* write_shard gives the tokens as stored instead of uint32_t */

static void write_shard(const char *path, uint32_t width, uint32_t vocab, int noised,
                        llm_shard_info *info)
{
	llm_shard_params p = { width, vocab, EOS, 0xabcdefULL, noised };
	llm_shard_writer *w;
	CHECK_EQ_INT(llm_shard_writer_open(&w, path, &p), LLM_OK);
	if (!w)
		return;
	uint32_t t[200], in[200];
	char meta[64];
	for (uint64_t k = 0; k < NDOC; k++) {
		size_t n = gen_doc(k, t, in, vocab);
		int m = snprintf(meta, sizeof meta, "{\"id\": \"doc%llu\"}", (unsigned long long)k);
		llm_shard_doc_in d = { .tokens = t, .inputs = in, .n = n, .domain = doms[k % 4],
			               .weight = (float)k / 8, .meta = meta, .meta_len = (size_t)m };
		uint32_t rt[400], ri[400]; /* room for 200 tokens of either width, aligned */
		if (as_raw) {
			if (width == 2) {
				llm_tok_narrow16(t, rt, n);
				llm_tok_narrow16(in, ri, n);
			} else {
				memcpy(rt, t, 4 * n);
				memcpy(ri, in, 4 * n);
			}
			d.tokens = d.inputs = NULL;
			d.raw_tokens = rt;
			d.raw_inputs = ri;
		}
		CHECK_EQ_INT(llm_shard_writer_add(w, &d), LLM_OK);
	}
	uint32_t badt[1] = { vocab };
	llm_shard_doc_in d = { .tokens = badt, .inputs = badt, .n = 1, .domain = "web", .weight = 1 };
	CHECK_EQ_INT(llm_shard_writer_add(w, &d), LLM_EINVAL);
	CHECK_EQ_U64(llm_shard_writer_docs(w), NDOC);
	/* Nothing under the final name before close. */
	CHECK(access(path, F_OK) != 0);
	uint64_t est = llm_shard_writer_bytes(w);
	CHECK_EQ_INT(llm_shard_writer_close(w, info), LLM_OK);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size <= est);
}

static void check_shard(const char *path, uint32_t width, uint32_t vocab, int noised)
{
	llm_shard *s;
	CHECK_EQ_INT(llm_shard_open(&s, path, LLM_SHARD_VERIFY), LLM_OK);
	if (!s)
		return;
	const llm_shard_info *in = llm_shard_get_info(s);
	CHECK_EQ_INT(in->width, width);
	CHECK_EQ_INT(in->vocab_size, vocab);
	CHECK_EQ_INT(in->eos_id, EOS);
	CHECK_EQ_U64(in->tokenizer_id, 0xabcdefULL);
	CHECK_EQ_U64(in->docs, NDOC);
	CHECK_EQ_INT(!!(in->flags & LLM_SHARD_NOISED), noised);
	CHECK_EQ_INT(llm_shard_ndomains(s), 4);
	uint32_t t[200], inp[200], got[201], goti[201];
	uint64_t total = 0;
	int bad = 0;
	for (uint64_t k = 0; k < NDOC; k++) {
		size_t n = gen_doc(k, t, inp, vocab);
		llm_shard_doc d;
		llm_shard_get_doc(s, k, &d);
		int added = !(n && t[n - 1] == EOS);
		CHECK_EQ_INT(!!(d.flags & LLM_SHARD_DOC_EOS_ADDED), added);
		CHECK_EQ_U64(d.len, n + added);
		CHECK_EQ_U64(d.start, total);
		total += d.len;
		llm_shard_read_tokens(s, d.start, d.len, got);
		bad |= memcmp(got, t, n * 4) != 0 || got[d.len - 1] != EOS;
		bad |= llm_shard_token(s, d.start + d.len - 1) != EOS;
		CHECK_EQ_INT(llm_shard_read_inputs(s, d.start, d.len, goti), noised);
		if (noised)
			bad |= memcmp(goti, inp, n * 4) != 0;
		CHECK_STR(llm_shard_domain(s, d.domain), *doms[k % 4] ? doms[k % 4] : "unknown");
		CHECK_NEAR(d.weight, (float)k / 8, 0);
		char meta[64];
		int m = snprintf(meta, sizeof meta, "{\"id\": \"doc%llu\"}", (unsigned long long)k);
		CHECK_MEM(d.meta, d.meta_len, meta, (size_t)m);
	}
	CHECK(!bad);
	CHECK_EQ_U64(total, in->tokens);
	CHECK_EQ_U64(llm_shard_doc_offsets(s)[NDOC], total);
	CHECK((llm_shard_inputs_raw(s) != NULL) == noised);
	llm_buf desc = LLM_BUF_INIT;
	llm_shard_describe(s, &desc);
	CHECK(strstr(desc.p, "documents 300, tokens ") != NULL);
	CHECK(strstr(desc.p, "  domain unknown: 75 documents") != NULL);
	CHECK(strstr(desc.p, "  section meta_offsets ") != NULL);
	llm_buf_release(&desc);
	llm_shard_free(s);
}

static void test_round_trip(void)
{
	uint32_t widths[] = { 2, 4 }, vocabs[] = { 1000, 70000 };
	for (int w = 0; w < 2; w++)
		for (int noised = 0; noised < 2; noised++) {
			char p[256], q[256];
			snprintf(p, sizeof p, "%s", tmp_path("rt-00000.bin"));
			snprintf(q, sizeof q, "%s", tmp_path("raw-00000.bin"));
			llm_shard_info info, rinfo;
			write_shard(p, widths[w], vocabs[w], noised, &info);
			CHECK_EQ_U64(info.docs, NDOC);
			check_shard(p, widths[w], vocabs[w], noised);
			/* tokens given as stored make the very same file */
			as_raw = 1;
			write_shard(q, widths[w], vocabs[w], noised, &rinfo);
			as_raw = 0;
			CHECK_EQ_U64(rinfo.header_checksum, info.header_checksum);
			unlink(p);
			unlink(q);
			CHECK_EQ_INT(dir_entries(), 0); /* no temporary file left behind */
		}
}

/* An empty shard is valid. */
static void test_empty(void)
{
	const char *p = tmp_path("empty.bin");
	llm_shard_params par = { 2, 100, LLM_SHARD_NO_EOS, 0, 0 };
	llm_shard_writer *w;
	CHECK_EQ_INT(llm_shard_writer_open(&w, p, &par), LLM_OK);
	CHECK_EQ_INT(llm_shard_writer_close(w, NULL), LLM_OK);
	llm_shard *s;
	CHECK_EQ_INT(llm_shard_open(&s, p, LLM_SHARD_VERIFY), LLM_OK);
	if (s) {
		CHECK_EQ_U64(llm_shard_get_info(s)->docs, 0);
		CHECK_EQ_U64(llm_shard_get_info(s)->tokens, 0);
		llm_shard_free(s);
	}
	unlink(p);
}

/* Flip one byte in every section and in the header: the error names the section and file. */
static void test_corruption(void)
{
	const char *p = tmp_path("c-00000.bin");
	llm_shard_info info;
	write_shard(p, 2, 1000, 1, &info);
	int fd = open(p, O_RDWR);
	CHECK(fd >= 0);
	for (int k = 0; k <= LLM_SHARD_NSECTIONS; k++) {
		uint64_t off = k ? info.sec[k].offset + info.sec[k].length / 2 : 20;
		unsigned char c, x;
		CHECK(pread(fd, &c, 1, (off_t)off) == 1);
		x = c ^ 0x10;
		CHECK(pwrite(fd, &x, 1, (off_t)off) == 1);
		llm_shard *s;
		int st = llm_shard_open(&s, p, LLM_SHARD_VERIFY);
		CHECK_EQ_INT(st, LLM_EFORMAT);
		char want[300];
		if (k)
			snprintf(want, sizeof want, "%s: section '%s': ", p, llm_shard_section_name(k));
		else
			snprintf(want, sizeof want, "%s: header: checksum mismatch", p);
		if (!strstr(llm_last_error(), want))
			printf("# k=%d: %s\n", k, llm_last_error());
		CHECK(strstr(llm_last_error(), want) != NULL);
		CHECK(s == NULL);
		CHECK(pwrite(fd, &c, 1, (off_t)off) == 1);
	}
	close(fd);
	/* A truncated shard fails at open, before any access. */
	CHECK(truncate(p, (off_t)(info.sec[LLM_SHARD_SEC_DOMAINS].offset + 1)) == 0);
	llm_shard *s;
	CHECK_EQ_INT(llm_shard_open(&s, p, 0), LLM_EFORMAT);
	CHECK(truncate(p, 100) == 0);
	CHECK_EQ_INT(llm_shard_open(&s, p, 0), LLM_EFORMAT);
	unlink(p);
	CHECK_EQ_INT(llm_shard_open(&s, p, 0), LLM_EIO);
}

static void test_abort(void)
{
	const char *p = tmp_path("abort.bin");
	llm_shard_params par = { 2, 100, 99, 0, 1 };
	llm_shard_writer *w;
	CHECK_EQ_INT(llm_shard_writer_open(&w, p, &par), LLM_OK);
	uint32_t t[3] = { 1, 2, 3 };
	llm_shard_doc_in d = { .tokens = t, .inputs = t, .n = 3, .domain = "x", .weight = 1,
		               .meta = "{}", .meta_len = 2 };
	CHECK_EQ_INT(llm_shard_writer_add(w, &d), LLM_OK);
	llm_shard_writer_abort(w);
	CHECK_EQ_INT(dir_entries(), 0);
	llm_shard_params badp = { 2, 70000, LLM_SHARD_NO_EOS, 0, 0 };
	CHECK_EQ_INT(llm_shard_writer_open(&w, p, &badp), LLM_EINVAL);
	CHECK_EQ_INT(llm_shard_writer_open(&w, "/nonexistent/dir/x.bin", &par), LLM_EIO);
}

static void test_manifest(void)
{
	char p[256];
	snprintf(p, sizeof p, "%s", tmp_path("s-00000.bin"));
	llm_shard_info info;
	write_shard(p, 2, 1000, 0, &info);
	llm_manifest m, r;
	llm_manifest_init(&m);
	m.tokenizer_id = 0xabcdefULL;
	m.vocab_size = 1000;
	m.width = 2;
	m.eos_id = EOS;
	llm_manifest_add_shard(&m, "s-00000.bin", LLM_SPLIT_TRAIN, &info, 12345);
	llm_manifest_add_shard(&m, "v/s-00000.bin", LLM_SPLIT_VAL, &info, 12345);
	llm_manifest_domain *d = llm_manifest_domain_get(&m, "we\"b");
	for (int sp = 0; sp < LLM_NSPLITS; sp++) { /* the totals a loaded manifest must have */
		d->docs[sp] = info.docs;
		d->tokens[sp] = info.tokens;
	}
	d->truncate_at = 77;
	CHECK(llm_manifest_domain_get(&m, "we\"b") == d);
	m.extra = llm_strdup("\"commands\": [\"llm-shard -o x\"]");
	const char *mp = tmp_path("manifest.json");
	CHECK_EQ_INT(llm_manifest_write(&m, mp), LLM_OK);
	CHECK_EQ_INT(llm_manifest_load(&r, mp), LLM_OK);
	CHECK_EQ_INT(r.nshards, 2);
	CHECK_EQ_U64(r.tokenizer_id, 0xabcdefULL);
	CHECK_EQ_INT(r.eos_id, EOS);
	CHECK_EQ_INT(r.width, 2);
	if (r.nshards == 2) {
		CHECK_STR(r.shards[0].path, p);
		CHECK_STR(r.shards[1].file, "v/s-00000.bin");
		CHECK_EQ_INT(r.shards[1].split, LLM_SPLIT_VAL);
		CHECK_EQ_U64(r.shards[0].tokens, info.tokens);
		CHECK_EQ_U64(r.shards[0].bytes, 12345);
		for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
			CHECK_EQ_U64(r.shards[0].info.sec[k].checksum, info.sec[k].checksum);
		CHECK_EQ_U64(r.shards[0].info.header_checksum, info.header_checksum);
	}
	llm_buf desc = LLM_BUF_INIT;
	llm_manifest_describe(&r, "m.json", &desc);
	CHECK(strstr(desc.p, "m.json: 2 shards, vocab 1000, 2-byte tokens") != NULL);
	CHECK(strstr(desc.p, "cut at 77 tokens") != NULL);
	llm_buf_release(&desc);
	CHECK_EQ_INT(r.ndomains, 1);
	if (r.ndomains == 1) {
		CHECK_STR(r.domains[0].name, "we\"b");
		CHECK_EQ_U64(r.domains[0].truncate_at, 77);
		CHECK_EQ_U64(r.domains[0].docs[0], info.docs);
	}
	llm_manifest_release(&r);
	llm_manifest_release(&m);
	const char *broken = "{\"format\": \"llmkit-shards\", \"version\": 1, \"tokenizer_id\": \"00\"}";
	CHECK_EQ_INT(llm_write_file(mp, broken, strlen(broken)), LLM_OK);
	CHECK_EQ_INT(llm_manifest_load(&r, mp), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "tokenizer_id") != NULL);
	unlink(mp);
	unlink(p);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *p = malloc(*len + 1);
	if (fread(p, 1, *len, f) != *len)
		*len = 0;
	fclose(f);
	return p;
}

static int64_t rd64(const unsigned char *p) { int64_t v; memcpy(&v, p, 8); return v; }
static int32_t rd32(const unsigned char *p) { int32_t v; memcpy(&v, p, 4); return v; }

/* Three documents into each export format; the bytes are checked against the layouts that
 * Megatron-LM (indexed_dataset.py), llm.c (dev/data/data_common.py) and nanoGPT read. */
static void test_exports(void)
{
	uint32_t d0[3] = { 1, 2, 3 }, d1[1] = { 50000 }, d2[2] = { 7, 8 };
	const uint32_t *docs[3] = { d0, d1, d2 };
	size_t lens[3] = { 3, 1, 2 };
	uint32_t vocabs[2] = { 65500, 50257 };
	for (int v = 0; v < 2; v++) {
		char prefix[256];
		snprintf(prefix, sizeof prefix, "%s", tmp_path("mega"));
		llm_export *e;
		CHECK_EQ_INT(llm_export_open(&e, LLM_EXPORT_MEGATRON, prefix, vocabs[v]), LLM_OK);
		for (int i = 0; i < 3; i++)
			CHECK_EQ_INT(llm_export_add(e, docs[i], lens[i]), LLM_OK);
		CHECK_EQ_INT(llm_export_add(e, d0, 0), LLM_OK); /* an empty document */
		uint32_t big = vocabs[v];
		CHECK_EQ_INT(llm_export_add(e, &big, 1), LLM_EINVAL);
		CHECK_EQ_U64(llm_export_tokens(e), 6);
		CHECK_EQ_INT(llm_export_close(e), LLM_OK);
		char p[300];
		size_t n;
		int w = vocabs[v] < 65500 ? 2 : 4; /* Megatron's best_fitting_dtype */
		snprintf(p, sizeof p, "%s.bin", prefix);
		unsigned char *bin = slurp(p, &n);
		CHECK_EQ_U64(n, 6 * (size_t)w);
		if (bin && n == 6 * (size_t)w)
			CHECK_EQ_INT(w == 2 ? (int)(bin[2] | bin[3] << 8) : rd32(bin + 4), 2);
		free(bin);
		unlink(p);
		snprintf(p, sizeof p, "%s.idx", prefix);
		unsigned char *idx = slurp(p, &n);
		CHECK(idx != NULL);
		if (!idx)
			continue;
		CHECK_EQ_U64(n, 9 + 8 + 1 + 8 + 8 + 4 * 4 + 8 * 4 + 8 * 5);
		CHECK(memcmp(idx, "MMIDIDX\0\0", 9) == 0);
		CHECK_EQ_INT(rd64(idx + 9), 1);
		CHECK_EQ_INT(idx[17], w == 2 ? 8 : 4);
		CHECK_EQ_INT(rd64(idx + 18), 4);
		CHECK_EQ_INT(rd64(idx + 26), 5);
		const unsigned char *q = idx + 34;
		int32_t want_len[4] = { 3, 1, 2, 0 };
		int64_t want_ptr[4] = { 0, 3 * w, 4 * w, 6 * w };
		for (int i = 0; i < 4; i++) {
			CHECK_EQ_INT(rd32(q + 4 * i), want_len[i]);
			CHECK_EQ_INT(rd64(q + 16 + 8 * i), want_ptr[i]);
		}
		for (int i = 0; i < 5; i++)
			CHECK_EQ_INT(rd64(q + 48 + 8 * i), i);
		free(idx);
		unlink(p);
	}
	for (int v = 0; v < 2; v++) {
		uint32_t vocab = v ? 200000 : 50257;
		const char *p = tmp_path("llmc.bin");
		llm_export *e;
		CHECK_EQ_INT(llm_export_open(&e, LLM_EXPORT_LLMC, p, vocab), LLM_OK);
		for (int i = 0; i < 3; i++)
			CHECK_EQ_INT(llm_export_add(e, docs[i], lens[i]), LLM_OK);
		CHECK_EQ_INT(llm_export_close(e), LLM_OK);
		size_t n;
		unsigned char *b = slurp(p, &n);
		int w = v ? 4 : 2;
		CHECK_EQ_U64(n, 1024 + 6 * (size_t)w);
		if (b && n >= 1024) {
			CHECK_EQ_INT(rd32(b), v ? 20240801 : 20240520);
			CHECK_EQ_INT(rd32(b + 4), v ? 7 : 1);
			CHECK_EQ_INT(rd32(b + 8), 6);
			int zero = 1;
			for (int i = 3; i < 256; i++)
				zero &= rd32(b + 4 * i) == 0;
			CHECK(zero);
			CHECK_EQ_INT(w == 2 ? (int)(b[1024 + 6] | b[1024 + 7] << 8) : rd32(b + 1024 + 12), 50000);
		}
		free(b);
		unlink(p);
	}
	const char *p = tmp_path("raw.bin");
	llm_export *e;
	CHECK_EQ_INT(llm_export_open(&e, LLM_EXPORT_RAW, p, 65536), LLM_OK);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(llm_export_add(e, docs[i], lens[i]), LLM_OK);
	CHECK_EQ_INT(llm_export_close(e), LLM_OK);
	size_t n;
	unsigned char *b = slurp(p, &n);
	static const unsigned char want[] = { 1, 0, 2, 0, 3, 0, 0x50, 0xc3, 7, 0, 8, 0 };
	CHECK_MEM(b, n, want, sizeof want);
	free(b);
	unlink(p);
	CHECK_EQ_INT(dir_entries(), 0);
}

/* Files written from tokens as a stream stores them (llm_export_add_raw, the EOS passed
 * apart) equal those written from uint32_t tokens with the EOS appended, in every format,
 * including Megatron's int32 for a 2-byte stream of vocab 65500..65536. */
static void test_exports_raw(void)
{
	static const struct { int format; uint32_t vocab; } cases[] = {
		{ LLM_EXPORT_MEGATRON, 50257 }, { LLM_EXPORT_MEGATRON, 65520 },
		{ LLM_EXPORT_MEGATRON, 100000 }, { LLM_EXPORT_LLMC, 50257 }, { LLM_EXPORT_LLMC, 200000 },
		{ LLM_EXPORT_RAW, 65536 }, { LLM_EXPORT_RAW, 70000 },
	};
	llm_rng g;
	llm_rng_seed(&g, 8);
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		uint32_t vocab = cases[c].vocab, width = vocab <= 65536 ? 2 : 4, eos = vocab - 1;
		char pa[300], pb[300];
		snprintf(pa, sizeof pa, "%s", tmp_path("xa"));
		snprintf(pb, sizeof pb, "%s", tmp_path("xb"));
		llm_export *a, *b;
		CHECK_EQ_INT(llm_export_open(&a, cases[c].format, pa, vocab), LLM_OK);
		CHECK_EQ_INT(llm_export_open(&b, cases[c].format, pb, vocab), LLM_OK);
		if (!a || !b)
			return;
		uint32_t t[1200], raw32[1200];
		unsigned char raw16[2400];
		for (int d = 0; d < 40; d++) {
			size_t n = (size_t)llm_rng_below(&g, 1100);
			for (size_t i = 0; i < n; i++)
				t[i] = (uint32_t)llm_rng_below(&g, vocab);
			int add_eos = d % 3 != 0;
			memcpy(raw32, t, n * 4);
			llm_tok_narrow16(t, raw16, width == 2 ? n : 0);
			if (add_eos)
				t[n] = eos;
			CHECK_EQ_INT(llm_export_add(a, t, n + (size_t)add_eos), LLM_OK);
			CHECK_EQ_INT(llm_export_add_raw(b, width == 2 ? (void *)raw16 : (void *)raw32, width, n,
			                                add_eos ? eos : LLM_SHARD_NO_EOS), LLM_OK);
		}
		uint32_t big = vocab;
		CHECK_EQ_INT(llm_export_add_raw(b, &big, 4, 1, LLM_SHARD_NO_EOS), LLM_EINVAL);
		CHECK_EQ_INT(llm_export_add_raw(b, raw32, width, 0, vocab), LLM_EINVAL);
		CHECK_EQ_U64(llm_export_tokens(a), llm_export_tokens(b));
		CHECK_EQ_INT(llm_export_close(a), LLM_OK);
		CHECK_EQ_INT(llm_export_close(b), LLM_OK);
		const char *ext[2] = { ".bin", ".idx" };
		for (int k = 0; k < (cases[c].format == LLM_EXPORT_MEGATRON ? 2 : 1); k++) {
			char fa[320], fb[320];
			const char *x = cases[c].format == LLM_EXPORT_MEGATRON ? ext[k] : "";
			snprintf(fa, sizeof fa, "%s%s", pa, x);
			snprintf(fb, sizeof fb, "%s%s", pb, x);
			size_t na = 0, nb = 0;
			unsigned char *ba = slurp(fa, &na), *bb = slurp(fb, &nb);
			CHECK(ba && bb && na > 0);
			CHECK_MEM(ba, na, bb, nb);
			free(ba);
			free(bb);
			unlink(fa);
			unlink(fb);
		}
	}
	/* 4-byte tokens do not narrow into a 2-byte export */
	llm_export *e;
	CHECK_EQ_INT(llm_export_open(&e, LLM_EXPORT_RAW, tmp_path("xc"), 50257), LLM_OK);
	uint32_t one = 1;
	CHECK_EQ_INT(llm_export_add_raw(e, &one, 4, 1, LLM_SHARD_NO_EOS), LLM_EINVAL);
	llm_export_abort(e);
	CHECK_EQ_INT(dir_entries(), 0);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_shard.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_round_trip);
	RUN(test_empty);
	RUN(test_corruption);
	RUN(test_abort);
	RUN(test_exports_raw);
	RUN(test_manifest);
	RUN(test_exports);
	rmdir(dir);
	return unit_done();
}
