/*
 * trainstate.c — state.json's writer and reader (see trainstate.h).
 *
 * The text is written by hand in a fixed member order, one member per line, so that two
 * checkpoints of the same state are the same bytes and a diff of two states reads easily.
 */
#include "trainstate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "core/err.h"
#include "core/json.h"

static const char FORMAT[] = "llmkit-train-state";

void llm_trainstate_init(llm_trainstate *s)
{
	memset(s, 0, sizeof *s);
	s->smoothed_loss = NAN;
	s->plateau_best = NAN;
	s->lr_factor = 1;
	s->loss_scale = 1;
	s->world_size = 1;
	s->mix = llm_strdup("");
	s->command = llm_strdup("");
	snprintf(s->manifest_hash, sizeof s->manifest_hash, "%016llx", 0ULL);
}

void llm_trainstate_release(llm_trainstate *s)
{
	free(s->skip);
	free(s->mix);
	free(s->command);
	s->skip = NULL;
	s->mix = s->command = NULL;
	s->nskip = 0;
}

int llm_trainstate_skipped(const llm_trainstate *s, uint64_t id)
{
	for (size_t i = 0; i < s->nskip; i++)
		if (s->skip[i] == id)
			return 1;
	return 0;
}

void llm_trainstate_skip(llm_trainstate *s, uint64_t id)
{
	if (llm_trainstate_skipped(s, id))
		return;
	s->skip = llm_realloc(s->skip, (s->nskip + 1) * sizeof *s->skip);
	s->skip[s->nskip++] = id;
}

void llm_trainstate_format(const llm_trainstate *s, llm_buf *b)
{
	char rng[65];
	llm_rng_format(&s->data_rng, rng);
	llm_buf_addf(b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", FORMAT, LLM_TRAINSTATE_VERSION);
	llm_buf_addf(b, "  \"step\": %lld,\n  \"tokens\": %lld,\n  \"adam_t\": %lld,\n",
	             (long long)s->step, (long long)s->tokens, (long long)s->adam_t);
	llm_buf_addf(b, "  \"data_position\": %llu,\n  \"data_rng\": \"%s\",\n",
	             (unsigned long long)s->data_position, rng);
	llm_buf_adds(b, "  \"skip_batches\": [");
	for (size_t i = 0; i < s->nskip; i++)
		llm_buf_addf(b, "%s%llu", i ? ", " : "", (unsigned long long)s->skip[i]);
	llm_buf_addf(b, "],\n  \"seed\": %llu,\n  \"batch\": %d,\n  \"seq_len\": %d,\n  \"accum\": %d,\n",
	             (unsigned long long)s->seed, s->batch, s->seq_len, s->accum);
	llm_buf_addf(b, "  \"world_size\": %d,\n  \"weighted\": %s,\n  \"mix\": ", s->world_size,
	             s->weighted ? "true" : "false");
	llm_json_put_str(b, s->mix, strlen(s->mix));
	llm_buf_adds(b, ",\n  \"smoothed_loss\": ");
	llm_json_put_f64(b, s->smoothed_loss);
	llm_buf_addf(b, ",\n  \"smoothed_n\": %lld,\n  \"lr_factor\": ", (long long)s->smoothed_n);
	llm_json_put_f64(b, s->lr_factor);
	llm_buf_adds(b, ",\n  \"plateau_best\": ");
	llm_json_put_f64(b, s->plateau_best);
	llm_buf_addf(b, ",\n  \"plateau_rises\": %lld,\n  \"nonfinite_steps\": %lld,\n"
	                "  \"spikes\": %lld,\n  \"rollbacks\": %lld,\n  \"skipped_steps\": %lld,\n",
	             (long long)s->plateau_rises, (long long)s->nonfinite_steps, (long long)s->spikes,
	             (long long)s->rollbacks, (long long)s->skipped_steps);
	llm_buf_addf(b, "  \"loss_scale\": %.17g,\n  \"loss_scale_good_steps\": %lld,\n"
	                "  \"tokenizer_id\": \"%016llx\",\n  \"manifest_hash\": \"%s\",\n  \"command\": ",
	             s->loss_scale, (long long)s->loss_scale_good_steps,
	             (unsigned long long)s->tokenizer_id, s->manifest_hash);
	llm_json_put_str(b, s->command, strlen(s->command));
	llm_buf_adds(b, "\n}\n");
}

typedef struct {
	const llm_json_rec *r;
	const char *name;
	const char *bad; /* the first missing or malformed member */
} reader;

static int64_t get_int(reader *rd, const char *key)
{
	int64_t v = 0;
	if (llm_json_get_i64(rd->r, key, &v) != LLM_OK && !rd->bad)
		rd->bad = key;
	return v;
}

/* A number, or null for NaN. */
static double get_num(reader *rd, const char *key)
{
	const llm_json_val *v = llm_json_get(rd->r, key);
	double d = NAN;
	if (v && v->type == LLM_JSON_NULL)
		return NAN;
	if ((!v || llm_json_num(v, &d) != LLM_OK) && !rd->bad)
		rd->bad = key;
	return d;
}

static char *get_str(reader *rd, const char *key)
{
	llm_buf b = LLM_BUF_INIT;
	if (llm_json_get_str(rd->r, key, &b) != LLM_OK && !rd->bad)
		rd->bad = key;
	llm_buf_addc(&b, 0);
	return llm_buf_detach(&b, NULL);
}

static int get_bool(reader *rd, const char *key)
{
	const llm_json_val *v = llm_json_get(rd->r, key);
	if ((!v || (v->type != LLM_JSON_TRUE && v->type != LLM_JSON_FALSE)) && !rd->bad)
		rd->bad = key;
	return v && v->type == LLM_JSON_TRUE;
}

/* 16 hex digits. */
static uint64_t get_hex64(reader *rd, const char *key)
{
	char *s = get_str(rd, key), *end;
	uint64_t v = strtoull(s, &end, 16);
	if ((strlen(s) != 16 || *end) && !rd->bad)
		rd->bad = key;
	free(s);
	return v;
}

int llm_trainstate_parse(llm_trainstate *s, const char *text, size_t n, const char *name)
{
	llm_trainstate_release(s);
	llm_trainstate_init(s);
	llm_json_rec r;
	llm_json_rec_init(&r);
	if (llm_json_parse(&r, text, n) != LLM_OK) {
		int rc = llm_fail(LLM_EFORMAT, "%s: byte %zu: %s", name, r.err_pos, r.err_msg);
		llm_json_rec_release(&r);
		return rc;
	}
	reader rd = { &r, name, NULL };
	char *format = get_str(&rd, "format");
	int64_t version = get_int(&rd, "version");
	int rc = LLM_OK;
	if (rd.bad || strcmp(format, FORMAT) != 0) {
		rc = llm_fail(LLM_EFORMAT, "%s: not an llmkit training state (no \"format\": \"%s\")",
		              name, FORMAT);
	} else if (version != LLM_TRAINSTATE_VERSION) {
		rc = llm_fail(LLM_EUNSUPPORTED, "%s: version %lld of the training state (this llmkit reads %d)",
		              name, (long long)version, LLM_TRAINSTATE_VERSION);
	}
	free(format);
	if (rc) {
		llm_json_rec_release(&r);
		return rc;
	}
	s->step = get_int(&rd, "step");
	s->tokens = get_int(&rd, "tokens");
	s->adam_t = get_int(&rd, "adam_t");
	s->data_position = (uint64_t)get_int(&rd, "data_position");
	char *rng = get_str(&rd, "data_rng");
	if (llm_rng_parse(&s->data_rng, rng) != LLM_OK && !rd.bad)
		rd.bad = "data_rng";
	free(rng);
	const llm_json_val *sk = llm_json_get(&r, "skip_batches");
	if (!sk || sk->type != LLM_JSON_ARRAY) {
		if (!rd.bad)
			rd.bad = "skip_batches";
	} else {
		size_t it = 0;
		llm_json_val e;
		int64_t id;
		while (llm_json_next(sk, &it, NULL, &e) == LLM_OK) {
			if (llm_json_i64(&e, &id) != LLM_OK || id < 0) {
				if (!rd.bad)
					rd.bad = "skip_batches";
				continue;
			}
			llm_trainstate_skip(s, (uint64_t)id);
		}
	}
	s->seed = (uint64_t)get_int(&rd, "seed");
	s->batch = (int)get_int(&rd, "batch");
	s->seq_len = (int)get_int(&rd, "seq_len");
	s->accum = (int)get_int(&rd, "accum");
	s->world_size = (int)get_int(&rd, "world_size");
	s->weighted = get_bool(&rd, "weighted");
	free(s->mix);
	s->mix = get_str(&rd, "mix");
	s->smoothed_loss = get_num(&rd, "smoothed_loss");
	s->smoothed_n = get_int(&rd, "smoothed_n");
	s->lr_factor = get_num(&rd, "lr_factor");
	s->plateau_best = get_num(&rd, "plateau_best");
	s->plateau_rises = get_int(&rd, "plateau_rises");
	s->nonfinite_steps = get_int(&rd, "nonfinite_steps");
	s->spikes = get_int(&rd, "spikes");
	s->rollbacks = get_int(&rd, "rollbacks");
	s->skipped_steps = get_int(&rd, "skipped_steps");
	s->loss_scale = get_num(&rd, "loss_scale");
	s->loss_scale_good_steps = get_int(&rd, "loss_scale_good_steps");
	s->tokenizer_id = get_hex64(&rd, "tokenizer_id");
	char *mh = get_str(&rd, "manifest_hash");
	if (strlen(mh) == 16)
		memcpy(s->manifest_hash, mh, 17);
	else if (!rd.bad)
		rd.bad = "manifest_hash";
	free(mh);
	free(s->command);
	s->command = get_str(&rd, "command");
	llm_json_rec_release(&r);
	if (rd.bad)
		return llm_fail(LLM_EFORMAT, "%s: missing or bad '%s'", name, rd.bad);
	return LLM_OK;
}

int llm_trainstate_load(llm_trainstate *s, const char *dir)
{
	char *text;
	size_t len;
	int rc = llm_ckpt_read_state(dir, &text, &len);
	if (rc)
		return rc;
	char name[4200];
	snprintf(name, sizeof name, "%s/state.json", dir);
	rc = llm_trainstate_parse(s, text, len, name);
	free(text);
	return rc;
}
