/*
 * evalres.c — choice tallies and the JSON of evaluation results (evalres.h).
 */
#include "evalres.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"

llm_choice_dom *llm_choice_tally_domain(llm_choice_tally *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->d[i].name, name) == 0)
			return &t->d[i];
	t->d = llm_realloc(t->d, (t->n + 1) * sizeof *t->d);
	t->d[t->n] = (llm_choice_dom){ .name = llm_strdup(name) };
	return &t->d[t->n++];
}

void llm_choice_tally_add(llm_choice_tally *t, const char *domain, int hit, int hit_norm)
{
	llm_choice_dom *d = llm_choice_tally_domain(t, domain);
	d->items++;
	d->acc += hit != 0;
	d->acc_norm += hit_norm != 0;
}

void llm_choice_tally_total(const llm_choice_tally *t, llm_choice_dom *all)
{
	*all = (llm_choice_dom){ .name = "all" };
	for (size_t i = 0; i < t->n; i++) {
		all->items += t->d[i].items;
		all->acc += t->d[i].acc;
		all->acc_norm += t->d[i].acc_norm;
	}
}

void llm_choice_tally_release(llm_choice_tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->d[i].name);
	free(t->d);
	*t = (llm_choice_tally){ 0 };
}

double llm_eval_ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

void llm_evalres_sums_json(llm_buf *b, const llm_eval_sums *s)
{
	llm_buf_addf(b, "{\"documents\": %llu, \"tokens\": %llu, \"loss\": ",
	             (unsigned long long)s->docs, (unsigned long long)s->tokens);
	llm_json_put_f64(b, llm_eval_loss(s));
	llm_buf_adds(b, ", \"ppl\": ");
	llm_json_put_f64(b, llm_eval_ppl(s));
	llm_buf_addf(b, ", \"bytes\": %llu, \"bits_per_byte\": ", (unsigned long long)s->bytes);
	llm_json_put_f64(b, llm_eval_bits_per_byte(s));
	if (s->words) {
		llm_buf_addf(b, ", \"words\": %llu, \"word_perplexity\": ", (unsigned long long)s->words);
		llm_json_put_f64(b, llm_eval_word_ppl(s));
		llm_buf_adds(b, ", \"byte_perplexity\": ");
		llm_json_put_f64(b, llm_eval_byte_ppl(s));
	}
	llm_buf_addc(b, '}');
}

void llm_evalres_choice_json(llm_buf *b, const llm_choice_dom *d)
{
	llm_buf_addf(b, "{\"items\": %llu, \"acc\": ", (unsigned long long)d->items);
	llm_json_put_f64(b, llm_eval_ratio(d->acc, d->items));
	llm_buf_adds(b, ", \"acc_stderr\": ");
	llm_json_put_f64(b, llm_eval_acc_stderr(d->acc, d->items));
	llm_buf_adds(b, ", \"acc_norm\": ");
	llm_json_put_f64(b, llm_eval_ratio(d->acc_norm, d->items));
	llm_buf_adds(b, ", \"acc_norm_stderr\": ");
	llm_json_put_f64(b, llm_eval_acc_stderr(d->acc_norm, d->items));
	llm_buf_addc(b, '}');
}
