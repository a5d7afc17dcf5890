/*
 * generate.c — llm-eval generate: a prompt's continuation, sampled or greedy, with the key-
 * value cache (or without, the reference), on the CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "llm-eval.h"

typedef struct {
	const llm_bpe *bpe;
	int ids;
	int64_t stop;
	int n;
} emit_ctx;

static int emit(void *ctx, int32_t tok)
{
	emit_ctx *e = ctx;
	if (e->ids) {
		printf(e->n++ ? " %d" : "%d", tok);
	} else if (tok != e->stop) {
		size_t len;
		const char *p = llm_bpe_token(e->bpe, (uint32_t)tok, &len);
		if (p)
			fwrite(p, 1, len, stdout);
	}
	return ferror(stdout) != 0;
}

int evt_cmd_generate(const evt_opts *o, int nfiles)
{
	if (!o->ckpt || !o->prompt)
		usage_error("generate needs --ckpt and --prompt");
	if (nfiles)
		usage_error("generate takes no file");
	evt_model mt;
	evt_load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = evt_tokenizer(o, &mt);
	if (!bpe)
		usage_error("generate needs -t: no tokenizer.json beside %s or in its run directory",
		            mt.info.dir);
	const llm_model_config *cfg = llm_model_get_config(mt.m);
	llm_ids ids;
	llm_ids_init(&ids);
	int64_t pre = evt_doc_prefix(o, bpe);
	if (pre >= 0)
		llm_ids_push(&ids, (uint32_t)pre);
	llm_bpe_enc *enc = llm_bpe_enc_new(bpe);
	if (llm_bpe_encode(enc, o->prompt, strlen(o->prompt), LLM_BPE_SPECIAL_IGNORE, &ids) != LLM_OK)
		die("--prompt: %s", llm_last_error());
	llm_bpe_enc_free(enc);
	if (!ids.n)
		usage_error("--prompt is empty and the tokenizer has no start token");
	int32_t *prompt = llm_malloc(ids.n * sizeof *prompt);
	for (size_t i = 0; i < ids.n; i++) {
		if (ids.v[i] >= (uint32_t)cfg->vocab_size)
			die("--prompt: token %u is outside the model's vocabulary of %d", ids.v[i],
			    cfg->vocab_size);
		prompt[i] = (int32_t)ids.v[i];
	}
	llm_sampling sp = { o->temperature, o->top_k, o->top_p };
	llm_sampler *s = llm_sampler_new(cfg->vocab_size, &sp, (uint64_t)(o->seed >= 0 ? o->seed : 1));
	int32_t *out = llm_malloc((size_t)(o->max_tokens ? o->max_tokens : 1) * sizeof *out);
	int64_t stop = llm_bpe_eos(bpe);
	emit_ctx e = { bpe, o->ids, stop, 0 };
	int nout;
	double t0 = evt_now();
	if (llm_generate(mt.m, prompt, (int)ids.n, o->max_tokens, stop, s, !o->no_cache, emit, &e,
	                 out, &nout) != LLM_OK)
		die_lib();
	double secs = evt_now() - t0;
	putchar('\n');
	evt_check_stdout();
	if (o->json) {
		llm_buf b, text;
		llm_buf_init(&b);
		llm_buf_init(&text);
		int n = nout && out[nout - 1] == stop ? nout - 1 : nout;
		llm_bpe_decode(bpe, (const uint32_t *)out, (size_t)n, &text);
		llm_buf_addf(&b, "{\"prompt_tokens\": %zu, \"tokens\": [", ids.n);
		for (int i = 0; i < nout; i++)
			llm_buf_addf(&b, i ? ", %d" : "%d", out[i]);
		llm_buf_adds(&b, "], \"text\": ");
		llm_json_put_str(&b, text.p, text.len);
		llm_buf_addf(&b, ", \"stopped\": %s, \"seconds\": ",
		             nout && out[nout - 1] == stop ? "true" : "false");
		llm_json_put_f64(&b, secs);
		llm_buf_addc(&b, '}');
		evt_write_json(o->json, &b);
		llm_buf_release(&b);
		llm_buf_release(&text);
	}
	llm_info("%zu prompt tokens, %d new in %.2f s (%.1f tokens/s%s)", ids.n, nout, secs,
	         nout / (secs > 0 ? secs : 1e-9), o->no_cache ? ", no cache" : "");
	free(out);
	free(prompt);
	llm_sampler_free(s);
	llm_ids_release(&ids);
	llm_bpe_free(bpe);
	evt_free_model(&mt);
	return 0;
}

