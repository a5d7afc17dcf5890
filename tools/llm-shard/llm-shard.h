/*
 * llm-shard.h — what tools/llm-shard.c (options, main) and the files of this folder share:
 * the run's state, the domains and their cuts, the inputs, and the entry points of writing
 * (write.c), truncation (truncate.c) and inspection (inspect.c).
 *
 * Functions that return int return 0, or 1 when an input or an output failed (reported);
 * they die (tool.h) on errors of the library that end the run. Everything here runs on the
 * main thread.
 */
#ifndef LLM_SHARD_TOOL_H
#define LLM_SHARD_TOOL_H

#include <stdint.h>

#include "../tool.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/sketch.h"
#include "data/dataset.h"
#include "data/shard.h"
#include "tok/tokstream.h"

enum { SHARD_MODE_WRITE, SHARD_MODE_INFO, SHARD_MODE_VERIFY, SHARD_MODE_DUMP };
enum { SHARD_FMT_SHARDS = -1 }; /* else an LLM_EXPORT_* */

typedef struct {
	char *name;
	llm_sketch *sketch;     /* lengths seen by the first pass, or loaded */
	uint64_t cut;           /* truncate at this many tokens; 0 = never */
} shard_domain;

/* Where one split's documents go: a shard writer or an export, rotated by size. */
typedef struct {
	int split;
	unsigned index;
	llm_shard_writer *w;
	llm_export *e;
	char *path;
} shard_sink;

/* The run: the options that shape the output, and what the inputs have shown so far. */
struct shard_run {
	const char *dir, *prefix;
	const char *gen;         /* "gen-N" the shards go to; NULL for exports (into dir) */
	int format;
	uint64_t shard_size, seed;
	double val_fraction, quantile;
	uint32_t eos;
	uint64_t tokenizer_id;   /* of --tokenizer, 0 without */
	llm_tok_header h;        /* of the first input */
	int have_header;
	shard_domain *doms;
	size_t ndoms;
	shard_sink sinks[LLM_NSPLITS];
	llm_manifest m;
	llm_run *run;
	llm_json_rec rec;
	llm_buf id, dom;
	llm_buf extra;           /* a rejected record's tokens, as JSON members */
	int warned_inputs;
	int strict;              /* --strict: a bad record stops the run */
};

/* The input files ("-" when none), standard input spooled to a file when it is read twice. */
typedef struct {
	char **path;
	int n;
	char *spooled; /* the spool's path, or NULL */
} shard_inputs;

/* ---- the documents' metadata and domains (truncate.c) ---- */

/* The fields of a record's metadata that llm-shard uses. */
typedef struct {
	const char *id, *domain;
	size_t id_len;
	float weight;
	int parsed;             /* the metadata is a JSON object (r->rec holds it) */
	const char *bad, *why;  /* NULL, or the reject reason of a bad record and its message */
} shard_meta;

/* The id, domain ("unknown" when none) and weight of t; they live until the next call.
 * Metadata that is not a JSON object ("bad_meta") or a "weight" that is not a finite number
 * ("bad_weight") make the record bad: f->bad and f->why say why. */
void shard_parse_meta(struct shard_run *r, const llm_tok_rec *t, shard_meta *f);
/* The domain of that name, created with no sketch and no cut when new. */
shard_domain *shard_find_domain(struct shard_run *r, const char *name);

/* The inputs of the command line after optind; with twice, standard input is spooled to
 * a temporary file in r->dir so that it can be read a second time. */
void shard_inputs_open(shard_inputs *in, const struct shard_run *r, int twice, int argc,
                       char **argv);
void shard_inputs_release(shard_inputs *in);

/* --truncate-quantile: each domain's cut, from the sketches file (when not NULL) or a first
 * pass over the inputs. */
int shard_find_cuts(struct shard_run *r, const shard_inputs *in, const char *sketches);
/* --stats: each domain's cut, as "truncate_at". */
void shard_stats_cuts(struct shard_run *r);

/* ---- writing (write.c) ---- */

/* Write every input into the splits' shards or exports. */
int shard_write_inputs(struct shard_run *r, const shard_inputs *in);
/* DIR/manifest.json, with the options that made the dataset. */
int shard_write_manifest(struct shard_run *r);
/* Finish the run and, when it succeeded, switch ds to the new generation; returns the exit
 * status. Closes ds. */
int shard_publish(llm_run *run, llm_dataset *ds, int failed);
void shard_run_release(struct shard_run *r);

/* ---- --info, --verify, --dump (inspect.c) ---- */

/* Apply mode to every file of argv from optind on: format is --format (tokens or jsonl,
 * --dump only), output -o. Returns the exit status. */
int shard_inspect(int mode, const char *format, const char *output, int argc, char **argv);

#endif
