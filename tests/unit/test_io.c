/* Unit tests for lib/io: line reading edge cases, compression detection, atomic writers. */
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "core/io.h"
#include "unit.h"

static char tmpdir[] = "/tmp/llm-test-io-XXXXXX";

static const char *tpath(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

static void test_lines(void)
{
	const char *data = "a\r\nbb\n\nlast";
	llm_reader *r;
	char *line;
	size_t len;
	CHECK(llm_reader_open_mem(&r, data, strlen(data), "mem") == LLM_OK);
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK);
	CHECK_MEM(line, len, "a", 1);
	CHECK(llm_reader_line_had_cr(r));
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK);
	CHECK_MEM(line, len, "bb", 2);
	CHECK_EQ_INT(llm_reader_offset(r), 3);
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK);
	CHECK_EQ_INT(len, 0);
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK); /* no final newline */
	CHECK_MEM(line, len, "last", 4);
	CHECK_EQ_INT(line[len], 0);
	CHECK_EQ_INT(llm_reader_lineno(r), 4);
	CHECK(llm_reader_line(r, &line, &len) == LLM_EOF);
	llm_reader_free(r);
}

static void test_long_line_skipped(void)
{
	/* A line over the cap, spanning several buffer fills, then a normal line. */
	size_t big = 3u << 20;
	char *data = malloc(big + 16);
	memset(data, 'x', big);
	memcpy(data + big, "\nnext\n", 7);
	llm_reader *r;
	char *line;
	size_t len;
	CHECK(llm_reader_open_mem(&r, data, big + 6, "mem") == LLM_OK);
	llm_reader_set_max_line(r, 1000);
	CHECK(llm_reader_line(r, &line, &len) == LLM_ETOOLONG);
	CHECK_EQ_U64(len, big);
	CHECK_EQ_INT(strlen(line), 1024); /* the head kept for rejects */
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK);
	CHECK_MEM(line, len, "next", 4);
	CHECK_EQ_INT(llm_reader_lineno(r), 2);
	llm_reader_free(r);
	/* Without a cap the same line comes back whole. */
	CHECK(llm_reader_open_mem(&r, data, big + 6, "mem") == LLM_OK);
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK);
	CHECK_EQ_U64(len, big);
	llm_reader_free(r);
	free(data);
	/* With a small cap the head is still min(length, LLM_READER_HEAD) bytes. */
	const char *two = "0123456789abcdefghij\nok\n";
	CHECK(llm_reader_open_mem(&r, two, strlen(two), "mem") == LLM_OK);
	llm_reader_set_max_line(r, 5);
	CHECK(llm_reader_line(r, &line, &len) == LLM_ETOOLONG);
	CHECK_EQ_INT(len, 20);
	CHECK_STR(line, "0123456789abcdefghij");
	CHECK(llm_reader_line(r, &line, &len) == LLM_OK);
	CHECK_MEM(line, len, "ok", 2);
	llm_reader_free(r);
}

static void test_zstd_detected(void)
{
	const char *text = "line one\nline two\n";
	char comp[256];
	size_t n = ZSTD_compress(comp, sizeof comp, text, strlen(text), 3);
	CHECK(!ZSTD_isError(n));
	/* Two concatenated frames read as one stream. */
	memcpy(comp + n, comp, n);
	llm_reader *r;
	char *line;
	size_t len;
	int lines = 0;
	CHECK(llm_reader_open_mem(&r, comp, 2 * n, "mem.zst") == LLM_OK);
	CHECK_STR(llm_reader_compression(r), "zstd");
	while (llm_reader_line(r, &line, &len) == LLM_OK)
		lines++;
	CHECK_EQ_INT(lines, 4);
	llm_reader_free(r);
	/* A truncated frame is an error, not a short read. */
	CHECK(llm_reader_open_mem(&r, comp, n - 3, "cut.zst") == LLM_OK);
	int rc;
	while ((rc = llm_reader_line(r, &line, &len)) == LLM_OK)
		;
	CHECK(rc == LLM_EFORMAT);
	llm_reader_free(r);
}

static void test_peek_and_read_exact(void)
{
	llm_reader *r;
	const char *p;
	size_t n;
	char buf[8];
	CHECK(llm_reader_open_mem(&r, "abcdef", 6, "mem") == LLM_OK);
	CHECK(llm_reader_peek(r, 4, &p, &n) == LLM_OK);
	CHECK_MEM(p, n, "abcd", 4);
	CHECK(llm_reader_read_exact(r, buf, 4) == LLM_OK);
	CHECK_MEM(buf, 4, "abcd", 4);
	CHECK(llm_reader_read_exact(r, buf, 4) == LLM_EFORMAT); /* only 2 left */
	CHECK(llm_reader_read_exact(r, buf, 1) == LLM_EOF);
	llm_reader_free(r);
}

static void test_writer_atomic(void)
{
	const char *path = tpath("out.txt");
	llm_writer *w;
	struct stat st;
	CHECK(llm_writer_open(&w, path) == LLM_OK);
	CHECK(llm_writer_write(w, "hello\n", 6) == LLM_OK);
	CHECK(stat(path, &st) != 0); /* not visible before close */
	CHECK(llm_writer_close(w) == LLM_OK);
	CHECK(stat(path, &st) == 0 && st.st_size == 6);

	CHECK(llm_writer_open(&w, tpath("gone.txt")) == LLM_OK);
	CHECK(llm_writer_write(w, "x", 1) == LLM_OK);
	llm_writer_abort(w);
	CHECK(stat(tpath("gone.txt"), &st) != 0);

	/* .zst output reads back through the reader. */
	CHECK(llm_write_file(tpath("z.jsonl.zst"), "{\"a\":1}\n", 8) == LLM_OK);
	char *data;
	size_t n;
	CHECK(llm_read_file(tpath("z.jsonl.zst"), &data, &n) == LLM_OK);
	CHECK_MEM(data, n, "{\"a\":1}\n", 8);
	free(data);
	CHECK(llm_read_file(tpath("missing"), &data, &n) == LLM_EIO);
	CHECK(strstr(llm_last_error(), "missing") != NULL);
}

static void test_writer_full_device(void)
{
	if (access("/dev/full", W_OK) != 0) {
		unit_skip("no /dev/full");
		return;
	}
	llm_writer *w;
	CHECK(llm_writer_open(&w, "/dev/full") == LLM_OK);
	char big[4096] = { 0 };
	int rc = LLM_OK;
	for (int i = 0; i < 600 && rc == LLM_OK; i++)
		rc = llm_writer_write(w, big, sizeof big);
	if (rc == LLM_OK)
		rc = llm_writer_close(w);
	else
		llm_writer_abort(w);
	CHECK(rc == LLM_EIO);
	CHECK(strstr(llm_last_error(), "No space left") != NULL);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_lines);
	RUN(test_long_line_skipped);
	RUN(test_zstd_detected);
	RUN(test_peek_and_read_exact);
	RUN(test_writer_atomic);
	RUN(test_writer_full_device);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return unit_done();
}
