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

typedef struct {
	double t;
	unsigned np, bands, rows;
	int verify;
	size_t maxdocs;
} opts;

static int parse_args(opts *o, int argc, char **argv)
{
	*o = (opts){ .t = 0.8, .np = 112, .maxdocs = SIZE_MAX };
	int c;
	while ((c = getopt(argc, argv, "t:p:b:r:vn:")) != -1) {
		switch (c) {
		case 't': o->t = atof(optarg); break;
		case 'p': o->np = (unsigned)atoi(optarg); break;
		case 'b': o->bands = (unsigned)atoi(optarg); break;
		case 'r': o->rows = (unsigned)atoi(optarg); break;
		case 'v': o->verify = 1; break;
		case 'n': o->maxdocs = (size_t)atol(optarg); break;
		default: return -1;
		}
	}
	return 0;
}

static llm_dedup_params params_of(const opts *o)
{
	llm_dedup_params p;
	llm_dedup_params_default(&p, LLM_DEDUP_MINHASH);
	p.num_perm = o->np;
	if (o->bands && o->rows)
		p.bands = o->bands, p.rows = o->rows;
	else
		llm_lsh_optimal(o->t, o->np, 0.5, 0.5, &p.bands, &p.rows);
	if (o->verify)
		p.verify = o->t;
	return p;
}

/* One document: signed into the engine, its band keys and its shingle set kept. */
static void add_doc(doc *d, llm_signer *sg, llm_dedup *eng, const llm_dedup_params *p,
                    llm_shingler *sh, const llm_buf *text)
{
	llm_dedup_params ps = *p;
	ps.verify = 0;
	llm_dedup_sig s;
	llm_signer_sign(sg, text->p ? text->p : "", text->len, &s);
	llm_dedup_add(eng, &s);
	d->keys = NULL;
	if (s.has) {
		d->keys = malloc(p->bands * 8);
		memcpy(d->keys, s.keys, p->bands * 8);
	}
	llm_shingle(sh, &ps.sh, text->p ? text->p : "", text->len);
	d->n = llm_shingle_set(sh);
	d->set = malloc((d->n ? d->n : 1) * 8);
	memcpy(d->set, sh->h, d->n * 8);
}

/* Every document with a "text" of the files, up to maxdocs, into docs; returns their count,
 * or (size_t)-1 when a file cannot be opened. */
static size_t load_docs(char **files, int nfiles, size_t maxdocs, llm_signer *sg,
                        llm_dedup *eng, const llm_dedup_params *p)
{
	llm_shingler sh;
	llm_shingler_init(&sh);
	size_t n = 0, cap = 0;
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT;
	for (int f = 0; f < nfiles && n < maxdocs; f++) {
		llm_reader *r;
		if (llm_reader_open(&r, files[f])) {
			fprintf(stderr, "%s\n", llm_last_error());
			return (size_t)-1;
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
			add_doc(&docs[n++], sg, eng, p, &sh, &text);
		}
		llm_reader_free(r);
	}
	return n;
}

/* A growable list of pairs packed as i * N + j. */
typedef struct {
	uint64_t *p, n, cap;
} pairs;

static void pairs_add(pairs *l, uint64_t v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->p = realloc(l->p, l->cap * 8);
	}
	l->p[l->n++] = v;
}

/* The true pairs (J >= t), sorted, joined in parent[]; *compared: the pairs whose set sizes
 * allowed J >= t. */
static pairs brute_force(size_t n, double t, uint64_t *compared)
{
	order = malloc(n * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort(order, n, sizeof *order, by_size);
	parent = malloc(n * sizeof *parent);
	for (size_t i = 0; i < n; i++)
		parent[i] = i;
	pairs truep = { 0 };
	*compared = 0;
	for (size_t a = 0; a < n; a++) {
		const doc *x = &docs[order[a]];
		if (!x->n)
			continue;
		for (size_t b = a + 1; b < n; b++) {
			const doc *y = &docs[order[b]];
			if ((double)x->n < t * (double)y->n)
				break;
			(*compared)++;
			if (llm_jaccard_sorted(x->set, x->n, y->set, y->n) >= t) {
				size_t i = order[a] < order[b] ? order[a] : order[b];
				size_t j = order[a] ^ order[b] ^ i;
				pairs_add(&truep, (uint64_t)i * n + j);
				join(i, j);
			}
		}
	}
	qsort(truep.p, truep.n, 8, cmp_u64);
	return truep;
}

/* LSH candidate pairs: all pairs within each band bucket, sorted, without repeats. */
static pairs candidate_pairs(size_t n, unsigned bands)
{
	bk *all = malloc((n * bands + 1) * sizeof *all);
	size_t nb = 0;
	for (size_t i = 0; i < n; i++)
		if (docs[i].keys)
			for (unsigned j = 0; j < bands; j++)
				all[nb++] = (bk){ docs[i].keys[j], i };
	qsort(all, nb, sizeof *all, by_key);
	pairs cand = { 0 };
	for (size_t s = 0; s < nb;) {
		size_t e = s;
		while (e < nb && all[e].key == all[s].key)
			e++;
		for (size_t u = s; u < e; u++)
			for (size_t v = u + 1; v < e; v++)
				pairs_add(&cand, (uint64_t)all[u].d * n + all[v].d);
		s = e;
	}
	qsort(cand.p, cand.n, 8, cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < cand.n; i++)
		if (!i || cand.p[i] != cand.p[i - 1])
			cand.p[k++] = cand.p[i];
	cand.n = k;
	return cand;
}

/* The pairs in both sorted lists. */
static uint64_t common(const pairs *a, const pairs *b)
{
	uint64_t both = 0;
	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		if (a->p[i] < b->p[j])
			i++;
		else if (a->p[i] > b->p[j])
			j++;
		else
			both++, i++, j++;
	}
	return both;
}

int main(int argc, char **argv)
{
	llm_msg_init("dedup_pr");
	opts o;
	if (parse_args(&o, argc, argv))
		return 2;
	llm_dedup_params p = params_of(&o);
	llm_signer *sg;
	llm_dedup *eng;
	if (llm_signer_new(&sg, &p) || llm_dedup_new(&eng, &p)) {
		fprintf(stderr, "%s\n", llm_last_error());
		return 2;
	}
	size_t n = load_docs(argv + optind, argc - optind, o.maxdocs, sg, eng, &p);
	if (n == (size_t)-1)
		return 1;
	llm_dedup_finish(eng);
	clock_t t0 = clock();
	uint64_t compared;
	pairs truep = brute_force(n, o.t, &compared);
	double brute_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
	pairs cand = candidate_pairs(n, p.bands);
	uint64_t both = common(&cand, &truep);
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
	       n, o.t, o.np, p.bands, p.rows, o.verify ? "true" : "false", (unsigned long long)compared,
	       brute_s, (unsigned long long)truep.n, (unsigned long long)cand.n,
	       cand.n ? (double)both / (double)cand.n : 1.0, truep.n ? (double)both / (double)truep.n : 1.0,
	       (unsigned long long)rt, (unsigned long long)rl,
	       rl ? (double)rboth / (double)rl : 1.0, rt ? (double)rboth / (double)rt : 1.0);
	return 0;
}
