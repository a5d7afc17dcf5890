/*
 * loader.c — deterministic training windows over mapped shards (see loader.h).
 */
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/err.h"
#include "shard.h"

typedef struct {
	uint32_t shard;
	uint32_t domain; /* global domain index */
	uint64_t start, len;
	float weight;
} doc;

typedef struct {
	char *name;      /* domain name, or "all" */
	double share;    /* normalised mix proportion */
	uint64_t *docs;  /* indices into L->docs, shard order */
	double *cum;     /* cumulative sampling weight, cum[i] = sum of weights of docs[0..i] */
	size_t n;
} pool;

struct llm_loader {
	llm_shard **shards;
	size_t nshards;
	doc *docs;
	size_t ndocs;
	char **domains;
	size_t ndomains;
	pool *pools;
	size_t npools;
	uint32_t vocab, eos;
	uint64_t tokenizer_id, tokens;
	int noised;
	llm_loader_state st;
	uint32_t *buf; /* one window, widened */
	size_t buf_cap;
	char *mix_desc;
};

void llm_loader_free(llm_loader *L)
{
	if (!L)
		return;
	for (size_t i = 0; i < L->nshards; i++)
		llm_shard_free(L->shards[i]);
	free(L->shards);
	free(L->docs);
	for (size_t i = 0; i < L->ndomains; i++)
		free(L->domains[i]);
	free(L->domains);
	for (size_t i = 0; i < L->npools; i++) {
		free(L->pools[i].name);
		free(L->pools[i].docs);
		free(L->pools[i].cum);
	}
	free(L->pools);
	free(L->buf);
	free(L->mix_desc);
	free(L);
}

static uint32_t domain_index(llm_loader *L, const char *name)
{
	for (size_t i = 0; i < L->ndomains; i++)
		if (strcmp(L->domains[i], name) == 0)
			return (uint32_t)i;
	L->domains = llm_realloc(L->domains, (L->ndomains + 1) * sizeof *L->domains);
	L->domains[L->ndomains] = llm_strdup(name);
	return (uint32_t)L->ndomains++;
}

static void pool_add(pool *p, uint64_t d, double w)
{
	if ((p->n & (p->n - 1)) == 0) { /* grow at powers of two */
		size_t cap = p->n ? 2 * p->n : 1;
		p->docs = llm_realloc(p->docs, cap * sizeof *p->docs);
		p->cum = llm_realloc(p->cum, cap * sizeof *p->cum);
	}
	p->docs[p->n] = d;
	p->cum[p->n] = (p->n ? p->cum[p->n - 1] : 0) + w;
	p->n++;
}

/* "web=0.65,books=0.12" into pools (documents added later). */
static int parse_mix(llm_loader *L, const char *mix)
{
	double total = 0;
	const char *s = mix;
	while (*s) {
		const char *eq = strchr(s, '='), *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		if (!eq || eq > end || eq == s)
			return llm_fail(LLM_EINVAL, "mix '%s': expected NAME=WEIGHT[,NAME=WEIGHT...]", mix);
		char *num_end;
		double w = strtod(eq + 1, &num_end);
		if (num_end != end || !(w >= 0) || w > 1e300)
			return llm_fail(LLM_EINVAL, "mix '%s': bad weight for '%.*s'", mix, (int)(eq - s), s);
		L->pools = llm_realloc(L->pools, (L->npools + 1) * sizeof *L->pools);
		pool *p = &L->pools[L->npools++];
		memset(p, 0, sizeof *p);
		p->name = llm_strndup(s, (size_t)(eq - s));
		p->share = w;
		for (size_t i = 0; i + 1 < L->npools; i++)
			if (strcmp(L->pools[i].name, p->name) == 0)
				return llm_fail(LLM_EINVAL, "mix '%s': domain '%s' given twice", mix, p->name);
		total += w;
		s = *end ? end + 1 : end;
	}
	if (!(total > 0))
		return llm_fail(LLM_EINVAL, "mix '%s': the weights sum to zero", mix);
	for (size_t i = 0; i < L->npools; i++)
		L->pools[i].share /= total;
	return LLM_OK;
}

static int open_shards(llm_loader *L, const char *path, int split)
{
	llm_buf mp = LLM_BUF_INIT;
	struct stat sb;
	llm_buf_adds(&mp, path);
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		llm_buf_adds(&mp, "/manifest.json");
	llm_manifest man;
	llm_manifest_init(&man);
	int rc = llm_manifest_load(&man, mp.p);
	if (rc)
		goto out;
	L->vocab = man.vocab_size;
	L->eos = man.eos_id;
	L->tokenizer_id = man.tokenizer_id;
	L->noised = man.noised;
	if (L->vocab == 0 || L->vocab > INT32_MAX) {
		rc = llm_fail(LLM_EFORMAT, "%s: vocabulary size %u is not usable", mp.p, L->vocab);
		goto out;
	}
	for (size_t i = 0; i < man.nshards; i++) {
		if (man.shards[i].split != split)
			continue;
		/* The header against the manifest first (cheap: a shard of another dataset, or one
		 * rewritten since, is refused before its data is read), then every checksum. */
		llm_shard *s;
		if ((rc = llm_shard_open(&s, man.shards[i].path, 0)))
			goto out;
		if ((rc = llm_manifest_check_shard(&man, &man.shards[i], s)) ||
		    (rc = llm_shard_verify(s))) {
			llm_shard_free(s);
			goto out;
		}
		const llm_shard_info *in = llm_shard_get_info(s);
		L->shards = llm_realloc(L->shards, (L->nshards + 1) * sizeof *L->shards);
		L->shards[L->nshards++] = s;
		L->docs = llm_realloc(L->docs, (L->ndocs + in->docs) * sizeof *L->docs);
		uint32_t map[65536];
		size_t nd = llm_shard_ndomains(s);
		for (size_t d = 0; d < nd && d < 65536; d++)
			map[d] = domain_index(L, llm_shard_domain(s, d));
		for (uint64_t d = 0; d < in->docs; d++) {
			llm_shard_doc sd;
			llm_shard_get_doc(s, d, &sd);
			if (!sd.len)
				continue;
			doc *o = &L->docs[L->ndocs++];
			o->shard = (uint32_t)(L->nshards - 1);
			o->domain = map[sd.domain];
			o->start = sd.start;
			o->len = sd.len;
			o->weight = sd.weight;
			L->tokens += sd.len;
		}
	}
	if (!L->ndocs)
		rc = llm_fail(LLM_ENOTFOUND, "%s: no documents in the %s split", mp.p,
		              llm_split_name(split));
out:
	llm_manifest_release(&man);
	llm_buf_release(&mp);
	return rc;
}

int llm_loader_open(llm_loader **out, const char *path, int split, const char *mix, int weighted,
                    uint64_t seed)
{
	*out = NULL;
	llm_loader *L = llm_calloc(1, sizeof *L);
	int rc = open_shards(L, path, split);
	if (!rc && mix && *mix)
		rc = parse_mix(L, mix);
	if (rc) {
		llm_loader_free(L);
		return rc;
	}
	if (!L->npools) {
		L->pools = llm_calloc(1, sizeof *L->pools);
		L->pools[0].name = llm_strdup("all");
		L->pools[0].share = 1;
		L->npools = 1;
	}
	int all = !(mix && *mix);
	for (size_t i = 0; i < L->ndocs; i++) {
		const doc *d = &L->docs[i];
		double w = (double)d->len * (weighted ? (d->weight > 0 ? d->weight : 0) : 1.0);
		for (size_t p = 0; p < L->npools; p++)
			if (all || strcmp(L->pools[p].name, L->domains[d->domain]) == 0)
				pool_add(&L->pools[p], i, w);
	}
	llm_buf desc = LLM_BUF_INIT;
	for (size_t p = 0; p < L->npools; p++) {
		pool *pl = &L->pools[p];
		if (pl->share > 0 && !(pl->n && pl->cum[pl->n - 1] > 0)) {
			rc = llm_fail(LLM_EINVAL, "mix: domain '%s' has no documents%s in the %s split",
			              pl->name, weighted ? " of positive weight" : "", llm_split_name(split));
			llm_buf_release(&desc);
			llm_loader_free(L);
			return rc;
		}
		llm_buf_addf(&desc, "%s%s=%.4g", p ? "," : "", pl->name, pl->share);
	}
	L->mix_desc = llm_buf_detach(&desc, NULL);
	llm_rng_seed(&L->st.rng, seed);
	*out = L;
	return LLM_OK;
}

uint32_t llm_loader_vocab(const llm_loader *L) { return L->vocab; }
uint32_t llm_loader_eos(const llm_loader *L) { return L->eos; }
uint64_t llm_loader_tokenizer_id(const llm_loader *L) { return L->tokenizer_id; }
int llm_loader_noised(const llm_loader *L) { return L->noised; }
uint64_t llm_loader_tokens(const llm_loader *L) { return L->tokens; }
uint64_t llm_loader_docs(const llm_loader *L) { return L->ndocs; }
const char *llm_loader_mix(const llm_loader *L) { return L->mix_desc; }

void llm_loader_get_state(const llm_loader *L, llm_loader_state *s) { *s = L->st; }
void llm_loader_set_state(llm_loader *L, const llm_loader_state *s) { L->st = *s; }

/* First index i with cum[i] > u. */
static size_t upper(const double *cum, size_t n, double u)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cum[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Copy n tokens (labels, or inputs when `inputs`) from document k of pool p at offset off,
 * continuing through the pool's next documents. */
static void read_window(llm_loader *L, const pool *p, size_t k, uint64_t off, size_t n,
                        uint32_t *out, int inputs)
{
	while (n) {
		const doc *d = &L->docs[p->docs[k]];
		uint64_t avail = d->len - off;
		size_t take = avail < n ? (size_t)avail : n;
		const llm_shard *s = L->shards[d->shard];
		if (inputs)
			llm_shard_read_inputs(s, d->start + off, take, out);
		else
			llm_shard_read_tokens(s, d->start + off, take, out);
		out += take;
		n -= take;
		off = 0;
		k = k + 1 == p->n ? 0 : k + 1;
	}
}

uint64_t llm_loader_next(llm_loader *L, int B, int T, int32_t *x, int32_t *y)
{
	uint64_t id = L->st.position++;
	size_t need = 2 * ((size_t)T + 1);
	if (x && need > L->buf_cap) {
		free(L->buf);
		L->buf = llm_malloc(need * sizeof *L->buf);
		L->buf_cap = need;
	}
	for (int b = 0; b < B; b++) {
		/* Always three draws per window, whatever the number of pools, so the stream stays
		 * aligned across configurations that only change the mix. */
		double u_pool = llm_rng_uniform(&L->st.rng), u_doc = llm_rng_uniform(&L->st.rng);
		uint64_t r_off = llm_rng_next(&L->st.rng);
		size_t pi = 0;
		for (double acc = L->pools[0].share; pi + 1 < L->npools && u_pool >= acc;)
			acc += L->pools[++pi].share;
		while (!(L->pools[pi].share > 0)) /* rounding left us on an empty tail pool */
			pi--;
		const pool *p = &L->pools[pi];
		size_t k = upper(p->cum, p->n, u_doc * p->cum[p->n - 1]);
		const doc *d = &L->docs[p->docs[k]];
		uint64_t off = r_off % d->len;
		if (!x)
			continue;
		uint32_t *lab = L->buf, *inp = L->buf + T + 1;
		read_window(L, p, k, off, (size_t)T + 1, lab, 0);
		if (L->noised)
			read_window(L, p, k, off, (size_t)T, inp, 1);
		for (int t = 0; t < T; t++) {
			x[(size_t)b * T + t] = (int32_t)(L->noised ? inp[t] : lab[t]);
			y[(size_t)b * T + t] = (int32_t)lab[t + 1];
		}
	}
	return id;
}
