/*
 * zhseg_bench.c — the Chinese segmenter (lib/text/zhseg) on the text of JSONL documents.
 *
 *   zhseg_bench [-d DICT] [-r REPEAT] FILE...      speed: one JSON line
 *   zhseg_bench [-d DICT] -s FILE...               tokens: per document, one line of
 *                                                  "offset,length" byte spans, space separated
 *
 * All texts are read into memory first; the speed line gives the CPU time of segmentation
 * alone (the best of REPEAT passes over all texts), of loading the dictionary, and MB/s of
 * UTF-8 text per core. Built and run by bench/zhseg.sh against build/rel/libllm.a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "text/zhseg.h"

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *dict = NULL;
	int spans = 0, repeat = 3, opt;
	llm_msg_init("zhseg_bench");
	while ((opt = getopt(argc, argv, "d:r:s")) != -1) {
		switch (opt) {
		case 'd': dict = optarg; break;
		case 'r': repeat = atoi(optarg); break;
		case 's': spans = 1; break;
		default:
			fprintf(stderr, "usage: zhseg_bench [-d DICT] [-r REPEAT] [-s] FILE...\n");
			return 2;
		}
	}
	llm_buf text = LLM_BUF_INIT;
	size_t *start = NULL, ndocs = 0, cap = 0;
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf one = LLM_BUF_INIT;
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
			if (llm_json_parse(&rec, line, len) || llm_json_get_str(&rec, "text", &one))
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

	double t0 = cpu_seconds();
	llm_zhseg_dict *d;
	if (llm_zhseg_dict_load(&d, dict)) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	double load = cpu_seconds() - t0;
	llm_zhseg *z = llm_zhseg_new(d);
	if (spans) {
		for (size_t k = 0; k < ndocs; k++) {
			const llm_zhseg_span *t;
			size_t n = llm_zhseg_cut(z, text.p + start[k], start[k + 1] - start[k], &t);
			for (size_t j = 0; j < n; j++)
				printf("%s%zu,%u", j ? " " : "", t[j].off, (unsigned)t[j].len);
			putchar('\n');
		}
	} else {
		double best = 1e30;
		size_t ntok = 0;
		for (int rep = 0; rep < repeat; rep++) {
			double t1 = cpu_seconds();
			ntok = 0;
			for (size_t k = 0; k < ndocs; k++) {
				llm_zhseg_span t;
				llm_zhseg_start(z, text.p + start[k], start[k + 1] - start[k]);
				while (llm_zhseg_next(z, &t))
					ntok++;
			}
			double s = cpu_seconds() - t1;
			if (s < best)
				best = s;
		}
		printf("{\"docs\": %zu, \"bytes\": %zu, \"tokens\": %zu, \"load_s\": %.4f, "
		       "\"seconds\": %.4f, \"mb_s\": %.2f}\n", ndocs, text.len, ntok, load, best,
		       best > 0 ? (double)text.len / 1e6 / best : 0.0);
	}
	llm_zhseg_free(z);
	llm_zhseg_dict_free(d);
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	llm_buf_release(&one);
	free(start);
	return fflush(stdout) ? 1 : 0;
}
