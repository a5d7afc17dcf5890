/*
 * dedup_pr.c — precision and recall of llm-dedup's MinHash-LSH against brute force.
 *
 *   dedup_pr [-t T] [-p NUM_PERM] [-b BANDS -r ROWS] [-v] [-n MAX_DOCS] FILE...
 *
 * Reads documents, shingles them exactly as llm-dedup does (same signer options), computes
 * the exact Jaccard similarity of every pair whose set sizes allow J >= T (J <= min/max, so
 * skipping the others is exact, not a heuristic), and compares:
 *   pairs:      LSH candidate pairs (sharing a band) with the true pairs (J >= T)
 *   documents:  the documents llm-dedup's engine removes with those removed by union-find
 *               over the true pairs (first in input order survives, as in the tool)
 * Built and run by bench/dedup.sh against build/rel/libllm.a. Prints one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "dedup/dedup.h"

typedef struct {
	uint64_t *set;
	size_t n;
	uint64_t *keys; /* band keys */
} doc;

static uint64_t *parent;

static uint64_t find(uint64_t v)
{
	while (parent[v] != v)
		v = parent[v] = parent[parent[v]];
	return v;
}

static void join(uint64_t a, uint64_t b)
{
	a = find(a), b = find(b);
	if (a != b)
		parent[a > b ? a : b] = a < b ? a : b;
}

static size_t *order;
static doc *docs;

static int by_size(const void *a, const void *b)
{
	size_t x = docs[*(const size_t *)a].n, y = docs[*(const size_t *)b].n;
	return x < y ? -1 : x > y;
}

typedef struct {
	uint64_t key;
	size_t d;
} bk;

static int by_key(const void *a, const void *b)
{
	const bk *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->d < y->d ? -1 : x->d > y->d;
}

/* Sorted list of pairs (i < j) packed as i * N + j, for lookups. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	llm_msg_init("dedup_pr");
	double t = 0.8;
	unsigned np = 112, bands = 0, rows = 0;
	int verify = 0, c;
	size_t maxdocs = SIZE_MAX;
	while ((c = getopt(argc, argv, "t:p:b:r:vn:")) != -1) {
		switch (c) {
		case 't': t = atof(optarg); break;
		case 'p': np = (unsigned)atoi(optarg); break;
		case 'b': bands = (unsigned)atoi(optarg); break;
		case 'r': rows = (unsigned)atoi(optarg); break;
		case 'v': verify = 1; break;
		case 'n': maxdocs = (size_t)atol(optarg); break;
		default: return 2;
		}
	}
	llm_dedup_params p;
	llm_dedup_params_default(&p, LLM_DEDUP_MINHASH);
	p.num_perm = np;
	if (bands && rows)
		p.bands = bands, p.rows = rows;
	else
		llm_lsh_optimal(t, np, 0.5, 0.5, &p.bands, &p.rows);
	if (verify)
		p.verify = t;
	llm_signer *sg;
	llm_dedup *eng;
	if (llm_signer_new(&sg, &p) || llm_dedup_new(&eng, &p)) {
		fprintf(stderr, "%s\n", llm_last_error());
		return 2;
	}
	llm_dedup_params ps = p;
	ps.verify = 0;
	llm_shingler sh;
	llm_shingler_init(&sh);
	size_t n = 0, cap = 0;
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT;
	for (int f = optind; f < argc && n < maxdocs; f++) {
		llm_reader *r;
		if (llm_reader_open(&r, argv[f])) {
			fprintf(stderr, "%s\n", llm_last_error());
			return 1;
		}
		char *line;
		size_t len;
		while (n < maxdocs && llm_reader_line(r, &line, &len) == LLM_OK) {
			llm_buf_reset(&text);
			if (llm_json_parse(&rec, line, len) || llm_json_get_str(&rec, "text", &text))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				docs = realloc(docs, cap * sizeof *docs);
			}
			doc *d = &docs[n];
			llm_dedup_sig s;
			llm_signer_sign(sg, text.p ? text.p : "", text.len, &s);
			llm_dedup_add(eng, &s);
			d->keys = NULL;
			if (s.has) {
				d->keys = malloc(p.bands * 8);
				memcpy(d->keys, s.keys, p.bands * 8);
			}
			llm_shingle(&sh, &ps.sh, text.p ? text.p : "", text.len);
			d->n = llm_shingle_set(&sh);
			d->set = malloc((d->n ? d->n : 1) * 8);
			memcpy(d->set, sh.h, d->n * 8);
			n++;
		}
		llm_reader_free(r);
	}
	llm_dedup_finish(eng);

	/* brute force */
	clock_t t0 = clock();
	order = malloc(n * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort(order, n, sizeof *order, by_size);
	parent = malloc(n * sizeof *parent);
	for (size_t i = 0; i < n; i++)
		parent[i] = i;
	uint64_t *truep = NULL, ntrue = 0, tcap = 0, compared = 0;
	for (size_t a = 0; a < n; a++) {
		const doc *x = &docs[order[a]];
		if (!x->n)
			continue;
		for (size_t b = a + 1; b < n; b++) {
			const doc *y = &docs[order[b]];
			if ((double)x->n < t * (double)y->n)
				break;
			compared++;
			if (llm_jaccard_sorted(x->set, x->n, y->set, y->n) >= t) {
				size_t i = order[a] < order[b] ? order[a] : order[b];
				size_t j = order[a] ^ order[b] ^ i;
				if (ntrue == tcap) {
					tcap = tcap ? 2 * tcap : 1024;
					truep = realloc(truep, tcap * 8);
				}
				truep[ntrue++] = (uint64_t)i * n + j;
				join(i, j);
			}
		}
	}
	double brute_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
	qsort(truep, ntrue, 8, cmp_u64);

	/* LSH candidate pairs: all pairs within each band bucket */
	bk *all = malloc((n * p.bands + 1) * sizeof *all);
	size_t nb = 0;
	for (size_t i = 0; i < n; i++)
		if (docs[i].keys)
			for (unsigned j = 0; j < p.bands; j++)
				all[nb++] = (bk){ docs[i].keys[j], i };
	qsort(all, nb, sizeof *all, by_key);
	uint64_t *cand = NULL, ncand = 0, ccap = 0;
	for (size_t s = 0; s < nb;) {
		size_t e = s;
		while (e < nb && all[e].key == all[s].key)
			e++;
		for (size_t u = s; u < e; u++)
			for (size_t v = u + 1; v < e; v++) {
				if (ncand == ccap) {
					ccap = ccap ? 2 * ccap : 1024;
					cand = realloc(cand, ccap * 8);
				}
				cand[ncand++] = (uint64_t)all[u].d * n + all[v].d;
			}
		s = e;
	}
	qsort(cand, ncand, 8, cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < ncand; i++)
		if (!i || cand[i] != cand[i - 1])
			cand[k++] = cand[i];
	ncand = k;
	uint64_t both = 0;
	for (size_t i = 0, j = 0; i < ncand && j < ntrue;) {
		if (cand[i] < truep[j])
			i++;
		else if (cand[i] > truep[j])
			j++;
		else
			both++, i++, j++;
	}
	/* documents removed */
	uint64_t rt = 0, rl = 0, rboth = 0;
	for (size_t i = 0; i < n; i++) {
		int tr = find(i) != i, lr = llm_dedup_root(eng, i) != i;
		rt += tr, rl += lr, rboth += tr && lr;
	}
	printf("{\"documents\": %zu, \"threshold\": %g, \"num_perm\": %u, \"bands\": %u, \"rows\": %u, "
	       "\"verify\": %s, \"pairs_compared\": %llu, \"brute_force_s\": %.2f, "
	       "\"true_pairs\": %llu, \"candidate_pairs\": %llu, "
	       "\"pair_precision\": %.4f, \"pair_recall\": %.4f, "
	       "\"removed_true\": %llu, \"removed_lsh\": %llu, "
	       "\"doc_precision\": %.4f, \"doc_recall\": %.4f}\n",
	       n, t, np, p.bands, p.rows, verify ? "true" : "false", (unsigned long long)compared,
	       brute_s, (unsigned long long)ntrue, (unsigned long long)ncand,
	       ncand ? (double)both / (double)ncand : 1.0, ntrue ? (double)both / (double)ntrue : 1.0,
	       (unsigned long long)rt, (unsigned long long)rl,
	       rl ? (double)rboth / (double)rl : 1.0, rt ? (double)rboth / (double)rt : 1.0);
	return 0;
}
