/* Fuzz target: a run read back (metrics.jsonl lines, or a TensorBoard event file when the input
 * starts with an event record's framing), then every detector and the page. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/diagnose.h"
#include "model/report.h"
#include "model/runlog.h"
#include "model/trainlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_scalar(void *ctx, int64_t step, double wall, const char *tag, size_t len,
                      double value)
{
	(void)wall;
	llm_buf key = LLM_BUF_INIT;
	llm_runlog_tag_key(tag, len, &key);
	if (step >= 0 && key.len)
		llm_runlog_set(ctx, step % 100000, key.p, value);
	llm_buf_release(&key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_runlog *rl = llm_runlog_new();
	if (size >= 12 && data[0] != '{') {
		FILE *f = fmemopen((void *)data, size, "rb");
		if (f) {
			llm_trainlog_scan(f, on_scalar, rl);
			fclose(f);
		}
	} else {
		const char *p = (const char *)data, *end = p + size;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = (size_t)((nl ? nl : end) - p);
			llm_runlog_add_line(rl, p, n);
			p += n + 1;
		}
	}
	llm_findings f;
	llm_findings_init(&f);
	llm_diagnose(rl, &f);
	llm_report_options o;
	llm_report_options_init(&o);
	o.max_points = 64;
	llm_buf page = LLM_BUF_INIT;
	llm_report_html(rl, &f, &o, &page);
	llm_buf_release(&page);
	llm_findings_release(&f);
	llm_runlog_free(rl);
	return 0;
}
