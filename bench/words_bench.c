/*
 * words_bench.c — the quality rules' word splitter (lib/text/words) on the text of JSONL
 * documents.
 *
 *   words_bench [-l LANG] [-z] [-r REPEAT] FILE...     speed: one JSON line
 *   words_bench [-l LANG] [-z] -w FILE...              words: per document, one line of
 *                                                      "off,len,nchars,flags,hash" per word
 *
 * -l keeps the documents whose "lang" starts with LANG ("zh" keeps zh and zh-Hant); -z splits
 * with the Chinese segmenter (jieba's dictionary, as llm-clean does for Chinese), otherwise
 * with the spaCy-style rules. All texts are read into memory first; the speed line gives the
 * CPU time of splitting alone (the best of REPEAT passes over all texts) and MB/s of UTF-8
 * text per CPU second. Built and run by bench/words.sh against build/rel/libllm.a.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "text/words.h"
#include "text/zhseg.h"

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *lang = NULL;
	int dump = 0, zh = 0, repeat = 3, opt;
	llm_msg_init("words_bench");
	while ((opt = getopt(argc, argv, "l:r:wz")) != -1) {
		switch (opt) {
		case 'l': lang = optarg; break;
		case 'r': repeat = atoi(optarg); break;
		case 'w': dump = 1; break;
		case 'z': zh = 1; break;
		default:
			fprintf(stderr, "usage: words_bench [-l LANG] [-z] [-r REPEAT] [-w] FILE...\n");
			return 2;
		}
	}
	llm_buf text = LLM_BUF_INIT, one = LLM_BUF_INIT, l = LLM_BUF_INIT;
	size_t *start = NULL, ndocs = 0, cap = 0;
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	for (int i = optind; i < argc; i++) {
		llm_reader *r;
		if (llm_reader_open(&r, argv[i])) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		char *line;
		size_t len;
		while (llm_reader_line(r, &line, &len) == LLM_OK) {
			llm_buf_reset(&one);
			llm_buf_reset(&l);
			if (llm_json_parse(&rec, line, len) || llm_json_get_str(&rec, "text", &one))
				continue;
			if (lang && (llm_json_get_str(&rec, "lang", &l) || l.len < strlen(lang) ||
			             memcmp(l.p, lang, strlen(lang)) != 0))
				continue;
			if (ndocs + 2 > cap) {
				cap = cap ? 2 * cap : 1024;
				start = llm_realloc(start, cap * sizeof *start);
			}
			start[ndocs++] = text.len;
			llm_buf_add(&text, one.p, one.len);
		}
		llm_reader_free(r);
	}
	if (!start)
		start = llm_malloc(sizeof *start);
	start[ndocs] = text.len;

	llm_zhseg *z = NULL;
	llm_segmenter seg;
	if (zh) {
		const llm_zhseg_dict *d;
		if (llm_zhseg_dict_default(&d)) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		z = llm_zhseg_new(d);
		seg = llm_zhseg_segmenter(z);
	}
	llm_words ws;
	llm_words_init(&ws);
	if (dump) {
		for (size_t k = 0; k < ndocs; k++) {
			ws.n = 0;
			llm_words_split(&ws, text.p, start[k], start[k + 1], z ? &seg : NULL);
			for (size_t j = 0; j < ws.n; j++) {
				const llm_word *w = &ws.w[j];
				printf("%s%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIx64, j ? " " : "",
				       w->off, w->len, w->nchars, w->flags, w->h);
			}
			putchar('\n');
		}
	} else {
		double best = 1e30;
		size_t nw = 0;
		for (int rep = 0; rep < repeat; rep++) {
			double t1 = cpu_seconds();
			nw = 0;
			for (size_t k = 0; k < ndocs; k++) {
				ws.n = 0;
				llm_words_split(&ws, text.p, start[k], start[k + 1], z ? &seg : NULL);
				nw += ws.n;
			}
			double s = cpu_seconds() - t1;
			if (s < best)
				best = s;
		}
		printf("{\"docs\": %zu, \"bytes\": %zu, \"words\": %zu, \"seconds\": %.4f, \"mb_s\": %.2f}\n",
		       ndocs, text.len, nw, best, best > 0 ? (double)text.len / 1e6 / best : 0.0);
	}
	llm_words_release(&ws);
	llm_zhseg_free(z);
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	llm_buf_release(&one);
	llm_buf_release(&l);
	free(start);
	return fflush(stdout) ? 1 : 0;
}
