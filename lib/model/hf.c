/*
 * hf.c — llmkit checkpoints and Hugging Face Llama directories into an llm_model.
 *
 * An llmkit checkpoint is itself a Hugging Face directory (config.json + model.safetensors in
 * transformers' names), so one path loads both; state.json only adds the step and tokens seen.
 */
#include "hf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckpt.h"
#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "safetensors.h"
#include "trainstate.h"

void llm_hf_info_release(llm_hf_info *info)
{
	if (info) {
		free(info->dir);
		free(info->tokenizer);
		info->dir = info->tokenizer = NULL;
	}
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* config.json text into c; a model_type other than llama is refused before the field checks,
 * whose messages would be less to the point. */
static int parse_config(llm_model_config *c, const char *json, size_t n, const char *name)
{
	llm_json_rec r;
	llm_json_rec_init(&r);
	int rc = llm_json_parse(&r, json, n);
	if (rc == LLM_OK) {
		const llm_json_val *mt = llm_json_get(&r, "model_type");
		if (mt && mt->type == LLM_JSON_STRING && !llm_json_str_eq(mt, "llama"))
			rc = llm_fail(LLM_EUNSUPPORTED, "%s: model_type %.*s is not supported (llama only)",
			              name, (int)(mt->len > 40 ? 40 : mt->len), mt->p);
	}
	llm_json_rec_release(&r);
	if (rc == LLM_OK && (rc = llm_model_config_parse(c, json, n)) != LLM_OK)
		rc = llm_fail(rc, "%s: %s", name, llm_last_error());
	return rc;
}

/* The caller's tensor of name, or NULL. */
static llm_hf_tensor *extra_of(const llm_hf_opts *o, const char *name)
{
	for (size_t i = 0; o && i < o->nextra; i++)
		if (strcmp(o->extra[i].name, name) == 0)
			return &o->extra[i];
	return NULL;
}

/* Load every tensor of a model for config c from the files st[0..n), and the caller's. */
static int load(llm_model **out, const llm_model_config *c0, llm_safetensors **st, size_t n,
                const char *name, int *dtype, const llm_hf_opts *o)
{
	*out = NULL;
	llm_model_config cc = *c0;
	const llm_model_config *c = &cc;
	/* A headless model is built tied: it has no lm_head tensor to fill or to miss. */
	if (o && o->headless)
		cc.tie_word_embeddings = 1;
	uint64_t bytes = 0;
	for (size_t f = 0; f < n; f++)
		for (size_t i = 0; i < llm_safetensors_count(st[f]); i++) {
			const llm_safetensors_tensor *t = llm_safetensors_at(st[f], i);
			bytes += t->end - t->begin;
		}
	int64_t params = llm_model_config_params(c);
	/* A bound, not the exact size (a missing tensor gets its own message below): the model
	 * allocates 8 bytes per parameter, so at most 8 times the size of the files. */
	if (params <= 0 || (uint64_t)params > bytes)
		return llm_fail(LLM_EFORMAT, "%s: %llu bytes of weights cannot hold the configuration's "
		                "%lld parameters", name, (unsigned long long)bytes, (long long)params);
	llm_model *m = llm_model_new(c);
	int rc = LLM_OK;
	/* Refuse what the model would silently leave out. */
	for (size_t f = 0; f < n && !rc; f++)
		for (size_t i = 0; i < llm_safetensors_count(st[f]) && !rc; i++) {
			const char *tn = llm_safetensors_at(st[f], i)->name;
			if (!llm_model_find(m, tn) && !ends_with(tn, ".rotary_emb.inv_freq") &&
			    !extra_of(o, tn) &&
			    !(c->tie_word_embeddings && strcmp(tn, "lm_head.weight") == 0))
				rc = llm_fail(LLM_EUNSUPPORTED, "%s: tensor '%s' has no place in a Llama model",
				              name, tn);
		}
	for (size_t i = 0; i < llm_model_ntensors(m) && !rc; i++) {
		const llm_tensor *t = llm_model_tensor(m, i);
		size_t f = 0;
		while (f < n && !llm_safetensors_find(st[f], t->name))
			f++;
		if (f == n) {
			rc = llm_fail(LLM_EFORMAT, "%s: missing tensor '%s'", name, t->name);
			break;
		}
		if (i == 0 && dtype)
			*dtype = llm_safetensors_find(st[f], t->name)->dtype;
		rc = llm_safetensors_read_f32(st[f], t->name, llm_model_params(m) + t->offset, t->ndim, t->shape);
		if (rc)
			rc = llm_fail(rc, "%s: %s", name, llm_last_error());
	}
	for (size_t i = 0; o && i < o->nextra && !rc; i++) {
		llm_hf_tensor *x = &o->extra[i];
		size_t f = 0;
		while (f < n && !llm_safetensors_find(st[f], x->name))
			f++;
		x->found = f < n;
		if (x->found && (rc = llm_safetensors_read_f32(st[f], x->name, x->data, 2, x->shape)))
			rc = llm_fail(rc, "%s: %s", name, llm_last_error());
		for (size_t k = 0; x->found && !rc && k < (size_t)(x->shape[0] * x->shape[1]); k++)
			if (!isfinite(x->data[k]))
				rc = llm_fail(LLM_EFORMAT, "%s: tensor '%s' holds a non-finite value at "
				              "element %zu", name, x->name, k);
	}
	/* as llm-train refuses it on resuming: a NaN would make every score NaN */
	if (!rc)
		rc = llm_model_check_finite(m, llm_model_params(m), name, "");
	if (rc) {
		llm_model_free(m);
		return rc;
	}
	*out = m;
	return LLM_OK;
}

int llm_hf_from_mem(llm_model **m, const char *config, size_t config_len, const void *data,
                    size_t len, const char *name)
{
	*m = NULL;
	llm_model_config c;
	int rc = parse_config(&c, config, config_len, name);
	if (rc)
		return rc;
	llm_safetensors *st;
	if ((rc = llm_safetensors_parse(&st, data, len, name)))
		return rc;
	rc = load(m, &c, &st, 1, name, NULL, NULL);
	llm_safetensors_free(st);
	return rc;
}

static int exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

/* The distinct files of model.safetensors.index.json's weight_map, in order of first use. */
static int index_files(const char *dir, const char *index, char ***files, size_t *n)
{
	char *data;
	size_t len;
	*files = NULL;
	*n = 0;
	int rc = llm_read_file(index, &data, &len);
	if (rc)
		return rc;
	llm_json_rec r;
	llm_json_rec_init(&r);
	const llm_json_val *wm;
	if (llm_json_parse(&r, data, len) != LLM_OK || !(wm = llm_json_get(&r, "weight_map")) ||
	    wm->type != LLM_JSON_OBJECT) {
		rc = llm_fail(LLM_EFORMAT, "%s: no \"weight_map\" object", index);
		goto out;
	}
	size_t it = 0;
	llm_json_val k, v;
	llm_buf b;
	llm_buf_init(&b);
	while (llm_json_next(wm, &it, &k, &v) == LLM_OK) {
		llm_buf_reset(&b);
		if (v.type != LLM_JSON_STRING || llm_json_str(&v, &b) != LLM_OK || !b.len ||
		    memchr(b.p, '/', b.len) || memchr(b.p, 0, b.len)) {
			rc = llm_fail(LLM_EFORMAT, "%s: a weight_map value is not a file name", index);
			break;
		}
		llm_buf_addc(&b, 0);
		size_t i = 0;
		while (i < *n && strcmp(strrchr((*files)[i], '/') + 1, b.p) != 0)
			i++;
		if (i < *n)
			continue;
		*files = llm_realloc(*files, (*n + 1) * sizeof **files);
		size_t plen = strlen(dir) + b.len + 2;
		(*files)[*n] = llm_malloc(plen);
		snprintf((*files)[*n], plen, "%s/%s", dir, b.p);
		(*n)++;
	}
	llm_buf_release(&b);
out:
	llm_json_rec_release(&r);
	free(data);
	return rc;
}

/* DIR/tokenizer.json, else RUN/tokenizer.json for DIR = RUN/ckpt/NAME. */
static char *find_tokenizer(const char *dir)
{
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/tokenizer.json", dir);
	if (exists(p.p))
		return llm_buf_detach(&p, NULL);
	const char *end = dir + strlen(dir);
	while (end > dir && end[-1] == '/')
		end--;
	const char *slash = end;
	while (slash > dir && slash[-1] != '/')
		slash--; /* the checkpoint's name */
	char *found = NULL;
	if (slash - dir >= 5 && strncmp(slash - 5, "ckpt/", 5) == 0 &&
	    (slash - dir == 5 || slash[-6] == '/')) {
		llm_buf_reset(&p);
		llm_buf_addf(&p, "%.*stokenizer.json", (int)(slash - 5 - dir), dir);
		if (exists(p.p))
			found = llm_buf_detach(&p, NULL);
	}
	llm_buf_release(&p);
	return found;
}

/* "name": the text of token id, or null */
static void put_token(llm_buf *b, const char *name, const llm_bpe *bpe, int64_t id)
{
	size_t len;
	const char *p = id >= 0 ? llm_bpe_token(bpe, (uint32_t)id, &len) : NULL;
	llm_buf_addf(b, "  \"%s\": ", name);
	if (p)
		llm_json_put_str(b, p, len);
	else
		llm_buf_adds(b, "null");
	llm_buf_adds(b, ",\n");
}

void llm_hf_tokenizer_config(const llm_bpe *bpe, int model_max_length, llm_buf *out)
{
	llm_buf_adds(out, "{\n  \"tokenizer_class\": \"PreTrainedTokenizerFast\",\n");
	put_token(out, "bos_token", bpe, llm_bpe_bos(bpe));
	put_token(out, "eos_token", bpe, llm_bpe_eos(bpe));
	put_token(out, "pad_token", bpe, llm_bpe_eos(bpe));
	llm_buf_adds(out, "  \"unk_token\": null,\n  \"add_bos_token\": false,\n"
	             "  \"add_eos_token\": false,\n  \"clean_up_tokenization_spaces\": false,\n");
	llm_buf_addf(out, "  \"model_max_length\": %d\n}\n", model_max_length);
}

static void put_id(llm_buf *b, const char *name, int id, const char *sep)
{
	if (id >= 0)
		llm_buf_addf(b, "  \"%s\": %d%s\n", name, id, sep);
	else
		llm_buf_addf(b, "  \"%s\": null%s\n", name, sep);
}

void llm_hf_generation_config(const llm_model_config *c, llm_buf *out)
{
	llm_buf_adds(out, "{\n");
	put_id(out, "bos_token_id", c->bos_token_id, ",");
	put_id(out, "eos_token_id", c->eos_token_id, ",");
	put_id(out, "pad_token_id", c->eos_token_id, "");
	llm_buf_adds(out, "}\n");
}

/* What state.json says of the run, when it says it: the model loads without it. */
static void read_state(const char *dir, llm_hf_info *info)
{
	llm_trainstate s;
	llm_trainstate_init(&s);
	if (llm_trainstate_load(&s, dir) == LLM_OK) {
		info->step = s.step;
		info->tokens = s.tokens;
		info->tokenizer_id = s.tokenizer_id;
		info->seed = (int64_t)s.seed;
		info->batch = s.batch;
		info->seq_len = s.seq_len;
	}
	llm_trainstate_release(&s);
}

int llm_hf_open(const char *path, llm_model **m, llm_hf_info *info)
{
	return llm_hf_open_with(path, m, info, NULL);
}

int llm_hf_open_with(const char *path, llm_model **m, llm_hf_info *info, const llm_hf_opts *o)
{
	*m = NULL;
	llm_hf_info local;
	if (!info)
		info = &local;
	*info = (llm_hf_info){ .step = -1, .tokens = -1, .seed = -1, .batch = -1, .seq_len = -1 };
	char *dir = NULL;
	if (llm_ckpt_resolve(path, &dir) == LLM_OK) {
		info->llmkit = 1;
	} else {
		char p[4096];
		snprintf(p, sizeof p, "%s/config.json", path);
		if (!exists(p))
			return llm_fail(LLM_ENOTFOUND, "%s: neither a checkpoint (state.json, latest, "
			                "ckpt/latest) nor a model directory (config.json)", path);
		dir = llm_strdup(path);
	}
	char p[4096];
	snprintf(p, sizeof p, "%s/config.json", dir);
	char *cfg_text = NULL;
	size_t cfg_len;
	llm_model_config c;
	int rc = llm_read_file(p, &cfg_text, &cfg_len);
	if (rc == LLM_OK)
		rc = parse_config(&c, cfg_text, cfg_len, p);
	free(cfg_text);
	char **files = NULL;
	size_t nfiles = 0;
	if (rc == LLM_OK) {
		snprintf(p, sizeof p, "%s/model.safetensors", dir);
		if (exists(p)) {
			files = llm_malloc(sizeof *files);
			files[nfiles++] = llm_strdup(p);
		} else {
			snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
			if (exists(p))
				rc = index_files(dir, p, &files, &nfiles);
			else
				rc = llm_fail(LLM_ENOTFOUND, "%s: no model.safetensors", dir);
		}
	}
	llm_safetensors **st = llm_calloc(nfiles ? nfiles : 1, sizeof *st);
	for (size_t i = 0; i < nfiles && rc == LLM_OK; i++)
		rc = llm_safetensors_open(&st[i], files[i]);
	if (rc == LLM_OK) {
		snprintf(p, sizeof p, "%s/%s", dir, nfiles == 1 ? "model.safetensors" : "model-*.safetensors");
		rc = load(m, &c, st, nfiles, p, &info->dtype, o);
	}
	for (size_t i = 0; i < nfiles; i++) {
		llm_safetensors_free(st[i]);
		free(files[i]);
	}
	free(st);
	free(files);
	if (rc == LLM_OK && info->llmkit)
		read_state(dir, info);
	if (rc == LLM_OK && info != &local)
		info->tokenizer = find_tokenizer(dir);
	if (rc != LLM_OK || info == &local)
		free(dir);
	else
		info->dir = dir;
	return rc;
}
