/*
 * report.h — the page of a training run: one self-contained HTML file (inline CSS and SVG, no
 * script, no fetched resource), readable from a file:// URL, a static web server or a copy
 * mailed elsewhere.
 *
 * What it shows, each part only where the run has it (runlog.h):
 *   - the state: steps done of those planned, tokens, the last losses, tokens/s, whether a
 *     trainer holds the run directory now, the time left at the recent pace;
 *   - the diagnosis (diagnose.h): each finding with its evidence, cause and check, its steps
 *     shaded on the loss chart; or the detectors that found nothing;
 *   - charts of every curve: loss with smoothed and validation loss, validation perplexity,
 *     learning rate, gradient norm (with the clip threshold), parameter norm, update/parameter
 *     ratio and loss scale (log scales), tokens/s, MFU, memory, longest sequence, per-layer
 *     gradient norms, per-rank losses, and any other curve an event file brought; skipped
 *     (non-finite), spike and rolled-back steps marked on every chart (a rollback as the band
 *     of the steps it threw away), checkpoints as ticks on the loss chart;
 *   - with a pipeline directory, first its stages, documents, tokens, generations and times
 *     (reportpipe.h);
 *   - the events, the checkpoints (step, kind, tokens, size, which is latest), llm-eval's
 *     results per domain (validation loss, perplexity, bits per byte; accuracy), train.json
 *     and config.json, the data manifest's hash and whether the run's copy still matches it,
 *     the latest values of metrics.prom.
 * Every curve is one SVG polyline (split where a value is missing or not finite) with one
 * point per logged step, up to max_points; a longer curve is drawn by the lowest and highest
 * value of each bucket of steps, so that a spike stays visible. The page depends only on the
 * run: the same directory gives the same bytes.
 *
 * Memory: the page (about 20 bytes per point per curve). Thread safety: none needed.
 */
#ifndef LLM_REPORT_H
#define LLM_REPORT_H

#include <stddef.h>

#include "core/buf.h"
#include "diagnose.h"
#include "runlog.h"

typedef struct {
	const char *title;   /* NULL: the run directory (or pipeline) and what it trains */
	const char *pipeline; /* a pipelines/Makefile output directory whose stages come first
	                       * (reportpipe.h), NULL: none */
	const char *live;    /* the trainer holding the run ("pid 123 on host"), NULL: none */
	int refresh;         /* > 0: the page asks the browser to reload it every so many seconds */
	size_t max_points;   /* per curve (default 4000) */
} llm_report_options;

void llm_report_options_init(llm_report_options *o);

/* The page's text: s[0..n) escaped for HTML (& < > "), and a number as a person reads it (4
 * significant digits, integers whole, "-" for NaN, "not finite" for an infinity); for the
 * sections drawn elsewhere (reportpipe.h). */
void llm_report_escape(llm_buf *b, const char *s, size_t n);
void llm_report_number(llm_buf *b, double v);

/* The page of rl and its findings (NULL: none looked for), appended to out. */
void llm_report_html(const llm_runlog *rl, const llm_findings *findings,
                     const llm_report_options *o, llm_buf *out);

/* The page of rl with its diagnosis (every detector), written to path and published with one
 * rename (io.h); the number of findings into *nfound (NULL: not wanted). LLM_OK, or io.h's
 * error naming path. */
int llm_report_write(const llm_runlog *rl, const llm_report_options *o, const char *path,
                     size_t *nfound);

/* The page of the run in dir, with its diagnosis, to dir/report.html (replaced atomically):
 * *rl is the run read back, opened by the first call (NULL) and read again by the next ones
 * as the run grows; the caller frees it. With live, the trainer holding the run (when one
 * does) is named and the page asks to be reloaded every refresh seconds (5 to 3600). */
int llm_report_run(llm_runlog **rl, const char *dir, int live, double refresh);

#endif
