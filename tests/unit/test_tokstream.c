/* test_tokstream.c — token stream encoding, reading, and rejection of corrupt streams. */
#include <stdlib.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "tok/tokstream.h"
#include "unit.h"

/* A stream of nrec records with pseudo-random lengths (some empty) and tokens. */
static void make_stream(llm_buf *out, const llm_tok_header *h, int nrec, uint64_t seed)
{
	llm_rng rng;
	llm_rng_seed(&rng, seed);
	unsigned char hb[LLM_TOK_HEADER_SIZE];
	llm_tok_header_encode(h, hb);
	llm_buf_add(out, hb, sizeof hb);
	uint32_t t[300], in[300];
	for (int r = 0; r < nrec; r++) {
		size_t n = llm_rng_below(&rng, 300);
		for (size_t i = 0; i < n; i++) {
			t[i] = (uint32_t)llm_rng_below(&rng, h->vocab_size);
			in[i] = (uint32_t)llm_rng_below(&rng, h->vocab_size);
		}
		char meta[64];
		int m = snprintf(meta, sizeof meta, "{\"id\": \"d%d\"}", r);
		CHECK_EQ_INT(llm_tok_record_encode(out, h, meta, (size_t)m, t, in, n), LLM_OK);
	}
}

/* Read back and compare with the generator's sequence. */
static void check_stream(const llm_buf *s, const llm_tok_header *h, int nrec, uint64_t seed)
{
	llm_tokreader *r;
	CHECK_EQ_INT(llm_tokreader_open_mem(&r, s->p, s->len, "mem"), LLM_OK);
	if (!r)
		return;
	CHECK_EQ_INT(llm_tokreader_header(r)->width, h->width);
	CHECK_EQ_INT(llm_tokreader_header(r)->vocab_size, h->vocab_size);
	CHECK_EQ_U64(llm_tokreader_header(r)->tokenizer_id, h->tokenizer_id);
	llm_rng rng;
	llm_rng_seed(&rng, seed);
	llm_tok_rec rec;
	int r_i = 0, st;
	while ((st = llm_tokreader_next(r, &rec)) == LLM_OK) {
		size_t n = llm_rng_below(&rng, 300);
		CHECK_EQ_U64(rec.n, n);
		CHECK_EQ_U64(rec.index, (uint64_t)r_i);
		int bad = 0;
		for (size_t i = 0; i < n && i < rec.n; i++) {
			uint32_t t = (uint32_t)llm_rng_below(&rng, h->vocab_size);
			uint32_t in = (uint32_t)llm_rng_below(&rng, h->vocab_size);
			bad |= rec.tokens[i] != t;
			if (h->flags & LLM_TOK_NOISED)
				bad |= rec.inputs[i] != in;
		}
		CHECK(!bad);
		CHECK((rec.inputs != NULL) == !!(h->flags & LLM_TOK_NOISED));
		char meta[64];
		int m = snprintf(meta, sizeof meta, "{\"id\": \"d%d\"}", r_i);
		CHECK_MEM(rec.meta, rec.meta_len, meta, (size_t)m);
		CHECK_EQ_INT(rec.meta[rec.meta_len], 0);
		r_i++;
	}
	CHECK_EQ_INT(st, LLM_EOF);
	CHECK_EQ_INT(r_i, nrec);
	llm_tokreader_free(r);
}

static void test_round_trip(void)
{
	uint32_t vocabs[] = { 1, 256, 50257, 65536, 65537, 200019 };
	for (size_t v = 0; v < sizeof vocabs / sizeof *vocabs; v++)
		for (uint32_t flags = 0; flags <= LLM_TOK_NOISED; flags++) {
			llm_tok_header h;
			llm_tok_header_init(&h, vocabs[v], 0x0123456789abcdefULL, flags);
			CHECK_EQ_INT(h.width, vocabs[v] <= 65536 ? 2 : 4);
			llm_buf s = LLM_BUF_INIT;
			make_stream(&s, &h, 40, v * 2 + flags);
			check_stream(&s, &h, 40, v * 2 + flags);
			llm_buf_release(&s);
		}
}

/* Byte layout fixed by DESIGN §4: check one record byte by byte. */
static void test_layout(void)
{
	llm_tok_header h;
	llm_tok_header_init(&h, 1000, 0x1122334455667788ULL, LLM_TOK_NOISED);
	unsigned char hb[LLM_TOK_HEADER_SIZE];
	llm_tok_header_encode(&h, hb);
	static const unsigned char want_h[32] = {
		'L', 'L', 'M', 'T', 'O', 'K', '0', '1', 1, 0, 0, 0, 2, 0, 0, 0,
		0xe8, 3, 0, 0, 1, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11
	};
	CHECK(memcmp(hb, want_h, 32) == 0);
	llm_buf b = LLM_BUF_INIT;
	uint32_t t[2] = { 7, 999 }, in[2] = { 3, 4 };
	CHECK_EQ_INT(llm_tok_record_encode(&b, &h, "{}", 2, t, in, 2), LLM_OK);
	static const unsigned char want_r[] = { 2, 0, 0, 0, 2, 0, 0, 0, '{', '}',
		                                7, 0, 0xe7, 3, 3, 0, 4, 0 };
	CHECK_MEM(b.p, b.len, want_r, sizeof want_r);
	llm_buf_release(&b);
}

static void test_encode_rejects(void)
{
	llm_tok_header h;
	llm_tok_header_init(&h, 100, 0, 0);
	llm_buf b = LLM_BUF_INIT;
	uint32_t t[3] = { 1, 100, 2 };
	CHECK_EQ_INT(llm_tok_record_encode(&b, &h, "", 0, t, NULL, 3), LLM_EINVAL);
	CHECK_EQ_U64(b.len, 0);
	h.flags = LLM_TOK_NOISED;
	t[1] = 5;
	CHECK_EQ_INT(llm_tok_record_encode(&b, &h, "", 0, t, NULL, 3), LLM_EINVAL);
	h.width = 3;
	CHECK_EQ_INT(llm_tok_header_check(&h), LLM_EINVAL);
	llm_tok_header_init(&h, 70000, 0, 0);
	h.width = 2;
	CHECK_EQ_INT(llm_tok_header_check(&h), LLM_EINVAL);
	llm_buf_release(&b);
}

/* Every proper prefix that cuts a record is a truncation error naming the record; a cut
 * between records is a clean end. */
static void test_truncation(void)
{
	llm_tok_header h;
	llm_tok_header_init(&h, 300, 0, LLM_TOK_NOISED);
	llm_buf s = LLM_BUF_INIT;
	make_stream(&s, &h, 3, 9);
	size_t bounds[4] = { 32 }, nb = 1;
	{
		llm_tokreader *r;
		llm_tok_rec rec;
		CHECK_EQ_INT(llm_tokreader_open_mem(&r, s.p, s.len, "m"), LLM_OK);
		while (llm_tokreader_next(r, &rec) == LLM_OK)
			bounds[nb++] = rec.offset + 8 + rec.meta_len + rec.n * 4;
		llm_tokreader_free(r);
	}
	CHECK_EQ_U64(bounds[3], s.len);
	for (size_t cut = 0; cut < s.len; cut++) {
		llm_tokreader *r;
		int st = llm_tokreader_open_mem(&r, s.p, cut, "cut");
		if (cut < 32) {
			CHECK_EQ_INT(st, LLM_EFORMAT);
			CHECK(r == NULL);
			continue;
		}
		llm_tok_rec rec;
		int k = 0;
		while ((st = llm_tokreader_next(r, &rec)) == LLM_OK)
			k++;
		int boundary = 0;
		for (size_t i = 0; i < 4; i++)
			boundary |= bounds[i] == cut;
		if (boundary) {
			CHECK_EQ_INT(st, LLM_EOF);
		} else {
			CHECK_EQ_INT(st, LLM_EFORMAT);
			CHECK(strstr(llm_last_error(), "cut: record ") != NULL);
			/* sticky: no resynchronisation on garbage */
			CHECK_EQ_INT(llm_tokreader_next(r, &rec), LLM_EFORMAT);
		}
		llm_tokreader_free(r);
	}
	llm_buf_release(&s);
}

static void test_corrupt(void)
{
	llm_tok_header h;
	llm_tok_header_init(&h, 300, 0, 0);
	llm_buf s = LLM_BUF_INIT;
	make_stream(&s, &h, 2, 3);
	llm_tokreader *r;
	llm_tok_rec rec;

	s.p[0] = 'X';
	CHECK_EQ_INT(llm_tokreader_open_mem(&r, s.p, s.len, "m"), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "magic") != NULL);
	s.p[0] = 'L';

	/* A token id past the vocabulary (first token of record 0: 0xffff) */
	unsigned char save[2];
	uint32_t m;
	memcpy(&m, s.p + 36, 4);
	memcpy(save, s.p + 40 + m, 2);
	memset(s.p + 40 + m, 0xff, 2);
	CHECK_EQ_INT(llm_tokreader_open_mem(&r, s.p, s.len, "m"), LLM_OK);
	CHECK_EQ_INT(llm_tokreader_next(r, &rec), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "vocab") != NULL);
	llm_tokreader_free(r);
	memcpy(s.p + 40 + m, save, 2);

	/* A huge token count must not allocate: cap first */
	memset(s.p + 32, 0xff, 4);
	CHECK_EQ_INT(llm_tokreader_open_mem(&r, s.p, s.len, "m"), LLM_OK);
	llm_tokreader_set_max_tokens(r, 1000);
	CHECK_EQ_INT(llm_tokreader_next(r, &rec), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "record 0 at byte 32") != NULL);
	llm_tokreader_free(r);
	llm_buf_release(&s);
}

/* Through files: the writer's temporary name, the reader's compression detection. */
static void test_files(void)
{
	char path[] = "/tmp/test_tokstream.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	llm_tok_header h;
	llm_tok_header_init(&h, 50257, 42, 0);
	llm_tokwriter *w;
	CHECK_EQ_INT(llm_tokwriter_open(&w, path, &h), LLM_OK);
	uint32_t t[3000];
	for (int i = 0; i < 3000; i++)
		t[i] = (uint32_t)(i * 17 % 50257);
	for (int r = 0; r < 1000; r++)
		CHECK_EQ_INT(llm_tokwriter_write(w, "{\"id\":1}", 8, t, NULL, (size_t)(r * 3)), LLM_OK);
	CHECK_EQ_INT(llm_tokwriter_write(w, "", 0, (uint32_t[]){ 50257 }, NULL, 1), LLM_EINVAL);
	CHECK_EQ_U64(llm_tokwriter_records(w), 1000);
	CHECK_EQ_INT(llm_tokwriter_close(w), LLM_OK);
	llm_tokreader *r;
	CHECK_EQ_INT(llm_tokreader_open(&r, path), LLM_OK);
	if (r) {
		llm_tok_rec rec;
		int k = 0, bad = 0;
		while (llm_tokreader_next(r, &rec) == LLM_OK) {
			bad |= rec.n != (size_t)k * 3 || memcmp(rec.tokens, t, rec.n * 4) != 0;
			k++;
		}
		CHECK(!bad);
		CHECK_EQ_INT(k, 1000);
		llm_tokreader_free(r);
	}
	unlink(path);
	CHECK_EQ_INT(llm_tokreader_open(&r, "/nonexistent/x.tok"), LLM_EIO);
	CHECK(r == NULL);
}

/* Without widening a 2-byte stream gives the stored bytes only, still checked. */
static void test_raw(void)
{
	llm_tok_header h;
	llm_tok_header_init(&h, 300, 0, LLM_TOK_NOISED);
	llm_buf s = LLM_BUF_INIT;
	make_stream(&s, &h, 20, 4);
	llm_tokreader *a, *b;
	CHECK_EQ_INT(llm_tokreader_open_mem(&a, s.p, s.len, "a"), LLM_OK);
	CHECK_EQ_INT(llm_tokreader_open_mem(&b, s.p, s.len, "b"), LLM_OK);
	llm_tokreader_set_widen(b, 0);
	llm_tok_rec x, y;
	int bad = 0, k = 0;
	while (llm_tokreader_next(a, &x) == LLM_OK && llm_tokreader_next(b, &y) == LLM_OK) {
		uint32_t t[300], in[300];
		CHECK(y.tokens == NULL && y.inputs == NULL);
		CHECK(llm_tok_widen16(y.raw_tokens, t, y.n) < 300);
		llm_tok_widen16(y.raw_inputs, in, y.n);
		bad |= y.n != x.n || memcmp(t, x.tokens, 4 * x.n) || memcmp(in, x.inputs, 4 * x.n);
		CHECK_EQ_U64(y.offset, x.offset);
		k++;
	}
	CHECK(!bad);
	CHECK_EQ_INT(k, 20);
	llm_tokreader_free(a);
	llm_tokreader_free(b);
	/* the conversions against a scalar reference, over lengths around the block size */
	uint32_t src[70], wide[70];
	unsigned char narrow[140];
	for (size_t n = 0; n <= 70; n++) {
		uint32_t hi = 0;
		for (size_t i = 0; i < n; i++) {
			src[i] = (uint32_t)((i * 40503u + n * 7) & 0xffff);
			hi = src[i] > hi ? src[i] : hi;
		}
		llm_tok_narrow16(src, narrow, n);
		CHECK_EQ_INT(llm_tok_widen16(narrow, wide, n), hi);
		CHECK_EQ_INT(llm_tok_max(src, n), hi);
		CHECK_EQ_INT(llm_tok_max16(narrow, n), hi);
		CHECK(n == 0 || memcmp(src, wide, 4 * n) == 0);
		for (size_t i = 0; i < n; i++)
			CHECK_EQ_INT(narrow[2 * i] | narrow[2 * i + 1] << 8, src[i]);
	}
	llm_buf_release(&s);
}

/* Records copied as stored (llm_tokwriter_write_raw) give back the stream byte for byte, at
 * both widths, with and without inputs; a token outside the vocabulary is refused. */
static void test_write_raw(void)
{
	for (int c = 0; c < 4; c++) {
		llm_tok_header h;
		llm_tok_header_init(&h, c & 1 ? 100000 : 300, 9, c & 2 ? LLM_TOK_NOISED : 0);
		llm_buf s = LLM_BUF_INIT;
		make_stream(&s, &h, 50, (uint64_t)c);
		char path[] = "/tmp/test_tokstream.XXXXXX";
		int fd = mkstemp(path);
		CHECK(fd >= 0);
		close(fd);
		llm_tokreader *r;
		llm_tokwriter *w;
		CHECK_EQ_INT(llm_tokreader_open_mem(&r, s.p, s.len, "s"), LLM_OK);
		CHECK_EQ_INT(llm_tokwriter_open(&w, path, &h), LLM_OK);
		llm_tokreader_set_widen(r, 0);
		llm_tok_rec rec;
		while (llm_tokreader_next(r, &rec) == LLM_OK)
			CHECK_EQ_INT(llm_tokwriter_write_raw(w, rec.meta, rec.meta_len, rec.raw_tokens,
			                                     rec.raw_inputs, rec.n), LLM_OK);
		/* a token at the vocab size, in the labels or in the inputs */
		uint32_t big[2] = { h.vocab_size, 1 }, small[2] = { 1, 1 };
		unsigned char b16[4] = { 0x2c, 0x01, 1, 0 }; /* 300, 1 */
		const void *bad = h.width == 2 ? (const void *)b16 : (const void *)big;
		CHECK_EQ_INT(llm_tokwriter_write_raw(w, "", 0, bad, small, 2), LLM_EINVAL);
		if (h.flags & LLM_TOK_NOISED) {
			CHECK_EQ_INT(llm_tokwriter_write_raw(w, "", 0, small, bad, 2), LLM_EINVAL);
			CHECK_EQ_INT(llm_tokwriter_write_raw(w, "", 0, small, NULL, 2), LLM_EINVAL);
		}
		CHECK_EQ_U64(llm_tokwriter_records(w), 50);
		CHECK_EQ_INT(llm_tokwriter_close(w), LLM_OK);
		llm_tokreader_free(r);
		char *back;
		size_t len;
		CHECK_EQ_INT(llm_read_file(path, &back, &len), LLM_OK);
		CHECK_MEM(back, len, s.p, s.len);
		free(back);
		unlink(path);
		llm_buf_release(&s);
	}
}

int main(void)
{
	RUN(test_round_trip);
	RUN(test_write_raw);
	RUN(test_layout);
	RUN(test_encode_rejects);
	RUN(test_truncation);
	RUN(test_corrupt);
	RUN(test_files);
	RUN(test_raw);
	return unit_done();
}
