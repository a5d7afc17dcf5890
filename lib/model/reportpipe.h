/*
 * reportpipe.h — the pipeline's part of llm-report's page: what pipelines/Makefile left in its
 * output directory, drawn as sections of the one page (report.h) before the training run's.
 *
 * Read from DIR (each part only where the files are there):
 *   - documents per stage: the --stats files of every per-file stage (DIR/STAGE/ *.stats.json
 *     for cat, clean, dedup, decon, tox, tokens, noise; DIR/shards.stats.json), summed: files,
 *     documents in, out and rejected, the reject reasons by count;
 *   - cleaning per domain and language: llm-clean's domain_langs, summed over the files
 *     (languages under 2% of their domain's documents folded into one row, except en and zh);
 *   - tokens per domain: DIR/shards/manifest.json (documents and tokens of each split,
 *     truncated documents), with a warning on a domain validated on one document;
 *   - the sample generations: each DIR/eval/generate-N.txt after its prompt,
 *     DIR/eval/generate-N.prompt;
 *   - the wall time per stage, DIR/times/STAGE.NAME.time summed per stage.
 * Missing or unreadable files are left out of the page (the pipeline's own stages say why
 * they failed); a malformed stats file is warned about (FILE: what) and skipped.
 *
 * Memory: the small files one at a time and a row per reason, domain and language.
 * Thread safety: none needed.
 */
#ifndef LLM_REPORTPIPE_H
#define LLM_REPORTPIPE_H

#include "core/buf.h"

/* The sections of the pipeline in dir, appended to out (HTML). */
void llm_reportpipe_html(const char *dir, llm_buf *out);

/*
 * One line, without a newline, of what a stage did over all its files, appended to out:
 * "clean: 11 files, 323 documents in, 243 out, 80 rejected (gopher_few_alpha_words 36,
 * too_short 21, gopher_short_doc 8 and 5 more reasons)". stage: cat, clean, dedup, decon,
 * tox, tokens, noise or shards. 0 (nothing appended) when the stage has no stats file.
 */
int llm_reportpipe_totals(const char *dir, const char *stage, llm_buf *out);

/*
 * The end of a run in a few lines for the terminal, appended to out: documents kept per
 * domain and tokens per split (the manifest), the validation loss (DIR/eval/loss.json).
 * Nothing for what is missing.
 */
void llm_reportpipe_summary(const char *dir, llm_buf *out);

#endif
