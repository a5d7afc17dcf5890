/*
 * inspect.c — llm-shard --info, --verify and --dump over shards and manifests.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm-shard.h"
#include "core/io.h"
#include "data/tokjson.h"

static int is_shard_file(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, magic, 8);
	close(fd);
	return n == 8 && memcmp(magic, LLM_SHARD_MAGIC, 8) == 0;
}

struct dumper {
	int jsonl;
	const char *output;
	llm_tokwriter *tw;
	llm_writer *jw;
	llm_tok_header h;
	uint32_t *tok, *inp;
	size_t cap;
	llm_buf line;
	llm_json_rec rec;
	llm_json_edit ed;
};

static int dump_shard(struct dumper *dp, const llm_shard *s)
{
	const llm_shard_info *in = llm_shard_get_info(s);
	llm_tok_header h;
	llm_tok_header_init(&h, in->vocab_size, in->tokenizer_id,
	                    (in->flags & LLM_SHARD_NOISED) ? LLM_TOK_NOISED : 0);
	h.width = in->width;
	if (!dp->tw && !dp->jw) {
		dp->h = h;
		int st = dp->jsonl ? llm_writer_open(&dp->jw, dp->output)
		                   : llm_tokwriter_open(&dp->tw, dp->output, &h);
		if (st != LLM_OK)
			die_lib();
	} else if (memcmp(&h, &dp->h, sizeof h) != 0) {
		llm_error("%s: token width, vocab size, tokenizer or noise flag differ from the first shard",
		          llm_shard_path(s));
		return 1;
	}
	for (uint64_t i = 0; i < in->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		size_t n = (size_t)d.len - !!(d.flags & LLM_SHARD_DOC_EOS_ADDED);
		if (dp->cap < n + 1) {
			free(dp->tok);
			free(dp->inp);
			dp->cap = n + 1;
			dp->tok = llm_malloc(dp->cap * 4);
			dp->inp = llm_malloc(dp->cap * 4);
		}
		llm_shard_read_tokens(s, d.start, n, dp->tok);
		int noised = llm_shard_read_inputs(s, d.start, n, dp->inp);
		int st;
		if (!dp->jsonl) {
			st = llm_tokwriter_write(dp->tw, d.meta, d.meta_len, dp->tok, noised ? dp->inp : NULL, n);
		} else {
			llm_buf_reset(&dp->line);
			llm_json_edit_reset(&dp->ed);
			llm_buf ids = LLM_BUF_INIT;
			llm_tokjson_ids(&ids, dp->tok, n);
			llm_json_edit_raw(&dp->ed, "tokens", ids.p, ids.len);
			if (noised) {
				llm_buf_reset(&ids);
				llm_tokjson_ids(&ids, dp->inp, n);
				llm_json_edit_raw(&dp->ed, "inputs", ids.p, ids.len);
			}
			llm_buf_release(&ids);
			if (llm_json_parse(&dp->rec, d.meta, d.meta_len) != LLM_OK)
				llm_json_parse(&dp->rec, "{}", 2); /* metadata that is not an object is dropped */
			llm_json_write(&dp->rec, &dp->ed, &dp->line);
			llm_buf_addc(&dp->line, '\n');
			st = llm_writer_write(dp->jw, dp->line.p, dp->line.len);
		}
		if (st != LLM_OK)
			die_lib();
	}
	return 0;
}

/* --info: hand a description over to standard output. */
static void put_stdout(llm_buf *b)
{
	fwrite(b->p, 1, b->len, stdout);
	llm_buf_release(b);
}

/* Apply a mode to one shard file or manifest. */
static int inspect(int mode, const char *path, struct dumper *dp)
{
	/* --dump reads every token anyway: it checks them as --verify does, and never writes
	 * out damaged data. */
	unsigned flags = mode == SHARD_MODE_INFO ? 0 : LLM_SHARD_VERIFY;
	llm_shard *s;
	if (is_shard_file(path)) {
		if (llm_shard_open(&s, path, flags) != LLM_OK) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		int failed = 0;
		if (mode == SHARD_MODE_INFO) {
			llm_buf b = LLM_BUF_INIT;
			llm_shard_describe(s, &b);
			put_stdout(&b);
		} else if (mode == SHARD_MODE_VERIFY)
			printf("%s: ok\n", path);
		else
			failed = dump_shard(dp, s);
		llm_shard_free(s);
		return failed;
	}
	llm_manifest m;
	if (llm_manifest_load(&m, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	int failed = 0;
	if (mode == SHARD_MODE_INFO) {
		llm_buf b = LLM_BUF_INIT;
		llm_manifest_describe(&m, path, &b);
		put_stdout(&b);
	}
	for (size_t i = 0; mode != SHARD_MODE_INFO && i < m.nshards; i++) {
		if (llm_shard_open(&s, m.shards[i].path, flags) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		if (llm_manifest_check_shard(&m, &m.shards[i], s) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
		else if (mode == SHARD_MODE_VERIFY)
			printf("%s: ok\n", m.shards[i].path);
		else
			failed |= dump_shard(dp, s);
		llm_shard_free(s);
	}
	llm_manifest_release(&m);
	return failed;
}

int shard_inspect(int mode, const char *format, const char *output, int argc, char **argv)
{
	int jsonl = 0;
	if (format && mode == SHARD_MODE_DUMP)
		jsonl = tool_choice("--format", format, "tokens\0jsonl\0");
	else if (format)
		usage_error("--format is for writing or --dump");
	if (mode == SHARD_MODE_DUMP && !jsonl)
		tool_binary_output(output, "the token stream");
	if (optind == argc)
		usage_error("%s needs shard or manifest files", mode == SHARD_MODE_INFO ? "--info"
		            : mode == SHARD_MODE_VERIFY ? "--verify" : "--dump");
	struct dumper dp;
	memset(&dp, 0, sizeof dp);
	dp.jsonl = jsonl;
	dp.output = output;
	llm_json_rec_init(&dp.rec);
	llm_json_edit_init(&dp.ed);
	int failed = 0;
	for (int i = optind; i < argc; i++)
		failed |= inspect(mode, argv[i], &dp);
	if ((dp.tw && llm_tokwriter_close(dp.tw) != LLM_OK) ||
	    (dp.jw && llm_writer_close(dp.jw) != LLM_OK)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		llm_error("write error on standard output");
		failed = 1;
	}
	free(dp.tok);
	free(dp.inp);
	llm_buf_release(&dp.line);
	llm_json_rec_release(&dp.rec);
	llm_json_edit_release(&dp.ed);
	return failed;
}
