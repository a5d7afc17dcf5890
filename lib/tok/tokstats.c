/*
 * tokstats.c — per-domain token counts and length sketches (tokstats.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/sketch.h"
#include "tokstats.h"

struct domain {
	char name[64];
	uint64_t docs, bytes, tokens;
	llm_sketch *len;
};

struct llm_tokstats {
	struct domain *dom;
	size_t n;
};

llm_tokstats *llm_tokstats_new(void)
{
	return llm_calloc(1, sizeof(llm_tokstats));
}

void llm_tokstats_free(llm_tokstats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		llm_sketch_free(s->dom[i].len);
	free(s->dom);
	free(s);
}

/* A few domains per run: a linear search beats a hash table here. */
static struct domain *domain_of(llm_tokstats *s, const char *name)
{
	const char *n = *name ? name : "unknown";
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->dom[i].name, n) == 0)
			return &s->dom[i];
	s->dom = llm_realloc(s->dom, (s->n + 1) * sizeof *s->dom);
	struct domain *d = &s->dom[s->n++];
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", n);
	d->len = llm_sketch_new(LLM_SKETCH_ALPHA);
	return d;
}

void llm_tokstats_add(llm_tokstats *s, const char *domain, size_t text_bytes, size_t tokens)
{
	struct domain *d = domain_of(s, domain);
	d->docs++;
	d->bytes += text_bytes;
	d->tokens += tokens;
	llm_sketch_add(d->len, (double)tokens, 1);
}

void llm_tokstats_json(const llm_tokstats *s, llm_buf *m, llm_buf *sk)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.995 };
	static const char *const qn[] = { "p50", "p90", "p99", "p99.5" };
	llm_buf_adds(m, "\"tokens\": {");
	llm_buf_adds(sk, "\"" LLM_SKETCH_STATS_KEY "\": {");
	for (size_t i = 0; i < s->n; i++) {
		const struct domain *d = &s->dom[i];
		if (i) {
			llm_buf_adds(m, ", ");
			llm_buf_adds(sk, ", ");
		}
		llm_json_put_str(m, d->name, strlen(d->name));
		llm_buf_addf(m, ": {\"documents\": %llu, \"bytes\": %llu, \"tokens\": %llu, "
		             "\"bytes_per_token\": ", (unsigned long long)d->docs,
		             (unsigned long long)d->bytes, (unsigned long long)d->tokens);
		llm_json_put_f64(m, d->tokens ? (double)d->bytes / (double)d->tokens : 0);
		llm_buf_adds(m, ", \"length\": {");
		for (size_t q = 0; q < 4; q++) {
			llm_buf_addf(m, "\"%s\": ", qn[q]);
			llm_json_put_f64(m, llm_sketch_quantile(d->len, qs[q]));
			llm_buf_adds(m, ", ");
		}
		llm_buf_adds(m, "\"max\": ");
		llm_json_put_f64(m, llm_sketch_max(d->len));
		llm_buf_adds(m, "}}");
		llm_json_put_str(sk, d->name, strlen(d->name));
		llm_buf_adds(sk, ": ");
		llm_sketch_to_json(d->len, sk);
	}
	llm_buf_addc(m, '}');
	llm_buf_addc(sk, '}');
}
