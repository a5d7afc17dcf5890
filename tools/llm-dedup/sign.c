/*
 * sign.c — llm-dedup sign: the signature of every document to a signature file (sigfile.h),
 * the first stage of sign → cluster → apply; and the signing pool that the single run
 * shares with it.
 */
#include "llm-dedup.h"

/* The signature of each record, in input order, to the engine or the file. */
static void signed_doc(void *ctx, const llm_dedup_doc *doc, const llm_dedup_sig *sig)
{
	dedup_runctx *x = ctx;
	if (sig) {
		x->docs++;
		x->bytes += doc->text.len;
	}
	if (!x->sigw)
		llm_dedup_add(x->d, sig);
	else if (llm_sigfile_add(x->sigw, sig, doc->id.p ? doc->id.p : "", doc->id.len))
		die_lib();
}

llm_signpool *dedup_new_pool(const struct dedup_cfg *c, dedup_runctx *x)
{
	llm_signpool *pool;
	if (llm_signpool_new(&pool, &c->p, c->co.threads, c->co.field, c->co.max_line, signed_doc, x))
		die_lib();
	return pool;
}

int dedup_run_sign(const struct dedup_cfg *c)
{
	if (!c->co.output)
		usage_error("sign needs -o SIGFILE");
	dedup_runctx x = { .c = c };
	if (llm_sigfile_create(&x.sigw, c->co.output, &c->p))
		die_lib();
	llm_signpool *pool = dedup_new_pool(c, &x);
	int failed = 0;
	for (int i = 0; i < dedup_input_count(c) && !failed; i++)
		failed |= dedup_each_record(c, dedup_input_name(c, i), NULL, NULL, NULL, NULL, NULL, pool);
	llm_signpool_free(pool);
	if (failed) {
		llm_sigfile_abort(x.sigw);
	} else if (llm_sigfile_close(x.sigw)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	if (!failed)
		llm_info("%llu documents signed (%.1f MB of text)", (unsigned long long)x.docs,
		         (double)x.bytes / 1e6);
	return failed;
}
