/*
 * test_bpe_train.c — BPE training within a memory budget: piece counts spilled to disk and
 * merged back give the same tokenizer, byte for byte, as counting in memory (many runs, merges
 * of runs, pieces longer than the read windows and the write buffer); pruning keeps exactly
 * the pieces seen at least min_count times for the first round (checked against counts known
 * by construction and against an unlimited trainer fed only those pieces) and reports what it
 * dropped; later rounds reach the vocabulary, the merges before the first pruned round being
 * the unlimited run's; SuperBPE learns tokens across spaces; memory stays within the budget.
 */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "tok/bpe_train.h"
#include "tok/pretok.h"
#include "unit.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Word i: letters only, so that " word" is one GPT-2 piece. */
static void word(llm_buf *b, size_t i)
{
	llm_buf_addc(b, ' ');
	do {
		llm_buf_addc(b, (char)('a' + i % 26));
		i /= 26;
	} while (i);
}

/* Zipf-like draws of words 0..nwords-1, texts of 50 words; counts[i] gets word i's count. */
static void make_texts(llm_buf *texts, size_t ntexts, size_t nwords, uint64_t *counts)
{
	memset(counts, 0, nwords * sizeof *counts);
	for (size_t t = 0; t < ntexts; t++) {
		llm_buf_reset(&texts[t]);
		for (int k = 0; k < 50; k++) {
			double u = (double)(rng() >> 11) / 9007199254740992.0;
			size_t i = (size_t)((double)nwords * u * u * u);
			word(&texts[t], i);
			counts[i]++;
		}
	}
}

typedef struct {
	size_t budget, table; /* 0: not set */
	const char *tmpdir;
	size_t superbpe;      /* 0: ordinary BPE */
} limits;

/* The vocabulary size of the last tokenizer train() made. */
static size_t last_vocab;

/* Train on the texts; the tokenizer.json in out. */
static int train(llm_buf *texts, size_t ntexts, size_t vocab, limits lim, llm_buf *out,
                 llm_bpe_train_stats *st)
{
	llm_bpe_trainer *tr;
	if (llm_bpe_trainer_new(&tr, llm_pretok_named("gpt2")) != LLM_OK)
		return -1;
	if (lim.budget || lim.tmpdir)
		llm_bpe_trainer_set_memory(tr, lim.budget, lim.tmpdir);
	if (lim.table)
		llm_bpe_trainer_set_table_memory(tr, lim.table);
	if (lim.superbpe && llm_bpe_trainer_set_superbpe(tr, NULL, lim.superbpe) != LLM_OK) {
		llm_bpe_trainer_free(tr);
		return -1;
	}
	static const char *const specials[] = { "<|endoftext|>" };
	int rc = LLM_OK;
	for (size_t t = 0; t < ntexts && !rc; t++)
		rc = llm_bpe_trainer_add(tr, texts[t].p, texts[t].len);
	if (!rc)
		rc = llm_bpe_trainer_train(tr, vocab, 2, specials, 1);
	if (!rc) {
		llm_buf_reset(out);
		llm_bpe_trainer_write_hf(tr, out);
		last_vocab = llm_bpe_trainer_vocab_size(tr);
		if (st)
			llm_bpe_trainer_stats(tr, st);
	}
	llm_bpe_trainer_free(tr);
	return rc;
}

/* Where the merges of a tokenizer.json begin, and the end of the first k of them (one a
 * line); NULL when it has fewer. */
static const char *merges_of(const llm_buf *j, size_t k, const char **end)
{
	const char *p = strstr(j->p, "\"merges\": [");
	if (!p)
		return NULL;
	const char *q = p;
	for (size_t i = 0; i <= k; i++)
		if (!(q = strchr(q + 1, '\n')))
			return NULL;
	*end = q;
	return p;
}

/* The first k merges of two tokenizer.json are the same. */
static bool same_merges(const llm_buf *a, const llm_buf *b, size_t k)
{
	const char *ea, *eb, *pa = merges_of(a, k, &ea), *pb = merges_of(b, k, &eb);
	return pa && pb && ea - pa == eb - pb && memcmp(pa, pb, (size_t)(ea - pa)) == 0;
}

/* Texts, trained on without limits, then with a piece table of at most 511 pieces (so in
 * more than 50 runs) under the budget, which must not prune: the same tokenizer. */
static void check_spilled(llm_buf *texts, size_t ntexts, size_t budget, bool passes)
{
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT;
	llm_bpe_train_stats sa, sb;
	CHECK_EQ_INT(train(texts, ntexts, 1000, (limits){ 0, 0, NULL, 0 }, &a, &sa), LLM_OK);
	CHECK_EQ_U64(sa.runs, 0);
	CHECK_EQ_U64(sa.pruned_pieces, 0);
	CHECK_EQ_U64(sa.min_count, 1);
	CHECK_EQ_INT(train(texts, ntexts, 1000, (limits){ budget, 1, NULL, 0 }, &b, &sb), LLM_OK);
	CHECK(sb.runs > 50);
	CHECK(passes ? sb.merge_passes > 0 : sb.merge_passes == 0);
	CHECK_EQ_U64(sb.pruned_pieces, 0);
	CHECK_EQ_U64(sb.retrains, 0);
	CHECK_EQ_U64(sb.pieces, sa.pieces);
	CHECK_EQ_U64(sb.occurrences, sa.occurrences);
	CHECK(a.len > 1000 && a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
	llm_buf_release(&a);
	llm_buf_release(&b);
}

/* Runs merged 32 at a time (a 1 MiB budget's read windows) before training. */
static void test_spilled_and_merged_in_passes(void)
{
	rng_state = 1;
	enum { NT = 1000, NW = 2000 };
	llm_buf texts[NT];
	uint64_t counts[NW];
	for (size_t t = 0; t < NT; t++)
		llm_buf_init(&texts[t]);
	make_texts(texts, NT, NW, counts);
	check_spilled(texts, NT, (size_t)1 << 20, true);
	for (size_t t = 0; t < NT; t++)
		llm_buf_release(&texts[t]);
}

/* A piece longer than a read window and than the write buffer, in several runs (no budget:
 * only the table is limited). */
static void test_spilled_long_pieces(void)
{
	rng_state = 2;
	enum { NT = 1000, NW = 2000 };
	llm_buf texts[NT];
	uint64_t counts[NW];
	for (size_t t = 0; t < NT; t++)
		llm_buf_init(&texts[t]);
	make_texts(texts, NT, NW, counts);
	for (size_t t = 0; t < NT; t += 250)
		for (int i = 0; i < 100000; i++)
			llm_buf_addc(&texts[t], (char)('a' + i % 7));
	check_spilled(texts, NT, 0, false);
	for (size_t t = 0; t < NT; t++)
		llm_buf_release(&texts[t]);
}

/*
 * Pruning to a budget keeps exactly the pieces seen at least min_count times: the counts
 * reported match those known by construction, the first round's merges are those of an
 * unlimited trainer fed only the kept pieces, and the later rounds reach the vocabulary.
 */
static void check_pruned(size_t nwords, size_t ntexts, size_t budget, size_t table, bool spills)
{
	rng_state = 7;
	llm_buf *texts = calloc(ntexts, sizeof *texts);
	uint64_t *counts = malloc(nwords * sizeof *counts);
	make_texts(texts, ntexts, nwords, counts);
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT;
	llm_bpe_train_stats st;
	CHECK_EQ_INT(train(texts, ntexts, 2000, (limits){ budget, table, NULL, 0 }, &a, &st), LLM_OK);
	CHECK(spills ? st.runs > 0 : st.runs == 0);
	CHECK(st.min_count > 2);
	/* the budget, passed by at most an eighth of one array (bpe_train.h) */
	CHECK(st.peak_memory <= budget + budget / 8);
	uint64_t pieces = 0, pruned = 0, pruned_occ = 0, bytes = 0, pruned_bytes = 0;
	llm_buf kept = LLM_BUF_INIT;
	for (size_t i = 0; i < nwords; i++) {
		if (!counts[i])
			continue;
		pieces++;
		llm_buf w = LLM_BUF_INIT;
		word(&w, i);
		bytes += counts[i] * w.len;
		if (counts[i] < st.min_count) {
			pruned++;
			pruned_occ += counts[i];
			pruned_bytes += counts[i] * w.len;
		} else {
			for (uint64_t k = 0; k < counts[i]; k++)
				word(&kept, i);
		}
		llm_buf_release(&w);
	}
	CHECK_EQ_U64(st.pieces, pieces);
	CHECK_EQ_U64(st.occurrences, ntexts * 50);
	CHECK_EQ_U64(st.pruned_pieces, pruned);
	CHECK_EQ_U64(st.pruned_occurrences, pruned_occ);
	CHECK_EQ_U64(st.bytes, bytes);
	CHECK_EQ_U64(st.pruned_bytes, pruned_bytes);
	CHECK(pruned > 0 && pruned < pieces);
	/* The first round trains on the kept pieces alone; the later ones reach the vocabulary. */
	CHECK_EQ_INT(train(&kept, 1, 2000, (limits){ 0, 0, NULL, 0 }, &b, NULL), LLM_OK);
	CHECK(st.first_merges > 0);
	CHECK(same_merges(&a, &b, st.first_merges));
	CHECK_EQ_U64(last_vocab, 2000);
	for (size_t t = 0; t < ntexts; t++)
		llm_buf_release(&texts[t]);
	free(texts);
	free(counts);
	llm_buf_release(&kept);
	llm_buf_release(&a);
	llm_buf_release(&b);
}

static void test_pruned_in_memory(void)
{
	check_pruned(20000, 4000, (size_t)1 << 20, 0, false);
}

static void test_pruned_after_spilling(void)
{
	check_pruned(200000, 8000, (size_t)1 << 20, 0, true);
}

/*
 * A budget that holds every piece but not all of their pairs: the first round trains on all
 * of them until the pairs outgrow it, and its merges are those of the unlimited run
 * (exact_merges); the later rounds, from disk, reach the vocabulary within the budget.
 */
static void test_rounds_past_the_pairs(void)
{
	rng_state = 7;
	enum { NT = 4000, NW = 20000 };
	llm_buf *texts = calloc(NT, sizeof *texts);
	uint64_t *counts = malloc(NW * sizeof *counts);
	make_texts(texts, NT, NW, counts);
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT;
	llm_bpe_train_stats sa, sb;
	CHECK_EQ_INT(train(texts, NT, 3000, (limits){ 0, 0, NULL, 0 }, &a, &sa), LLM_OK);
	size_t budget = sa.peak_memory / 2;
	CHECK_EQ_INT(train(texts, NT, 3000, (limits){ budget, 0, NULL, 0 }, &b, &sb), LLM_OK);
	CHECK_EQ_U64(last_vocab, 3000);
	CHECK_EQ_U64(sb.pruned_pieces, 0);
	CHECK(sb.rounds > 1);
	CHECK(sb.exact_merges > 100 && sb.exact_merges == sb.first_merges);
	CHECK(same_merges(&a, &b, sb.exact_merges));
	CHECK(sb.peak_memory <= budget + budget / 8);
	for (size_t t = 0; t < NT; t++)
		llm_buf_release(&texts[t]);
	free(texts);
	free(counts);
	llm_buf_release(&a);
	llm_buf_release(&b);
}

/* Texts of word pairs that recur ("of the", "in a"), where SuperBPE's second stage must learn
 * tokens spanning a space; within a budget that holds everything, the same tokenizer as
 * without one, spilled or not; and a budget that does not still reaches the vocabulary. */
static void test_superbpe(void)
{
	rng_state = 9;
	enum { NT = 2000, NW = 3000 };
	llm_buf *texts = calloc(NT, sizeof *texts);
	uint64_t *counts = malloc(NW * sizeof *counts);
	make_texts(texts, NT, NW, counts);
	for (size_t t = 0; t < NT; t++)
		llm_buf_adds(&texts[t], t % 3 ? " of the way" : " in a way");
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT, c = LLM_BUF_INIT;
	llm_bpe_train_stats sa, sb, sc;
	CHECK_EQ_INT(train(texts, NT, 1500, (limits){ 0, 0, NULL, 1200 }, &a, &sa), LLM_OK);
	CHECK_EQ_U64(last_vocab, 1500);
	CHECK_EQ_U64(sa.superbpe_from, 1200 - 256);
	CHECK_EQ_U64(sa.exact_merges, 1500 - 257);
	/* " of the way" as one token: stage 2 merged across spaces */
	CHECK(strstr(a.p, "\"\u0120of\u0120the\u0120way\"") || strstr(a.p, "\"ĠofĠtheĠway\""));
	CHECK(strstr(a.p, "p{N}{1,3}") != NULL); /* the second stage's pre-tokenizer */
	CHECK_EQ_INT(train(texts, NT, 1500, (limits){ (size_t)64 << 20, 1, NULL, 1200 }, &b, &sb), LLM_OK);
	CHECK(sb.runs > 10);
	CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
	CHECK_EQ_INT(train(texts, NT, 1500, (limits){ sa.peak_memory / 3, 0, NULL, 1200 }, &c, &sc), LLM_OK);
	CHECK_EQ_U64(last_vocab, 1500);
	CHECK(sc.rounds > sa.rounds);
	CHECK(sc.peak_memory <= sa.peak_memory / 3 + sa.peak_memory / 24); /* an eighth over */
	for (size_t t = 0; t < NT; t++)
		llm_buf_release(&texts[t]);
	free(texts);
	free(counts);
	llm_buf_release(&a);
	llm_buf_release(&b);
	llm_buf_release(&c);
}

static void test_spill_to_a_missing_directory_fails(void)
{
	llm_bpe_trainer *tr;
	CHECK_EQ_INT(llm_bpe_trainer_new(&tr, llm_pretok_named("gpt2")), LLM_OK);
	llm_bpe_trainer_set_memory(tr, (size_t)1 << 20, "/nonexistent/dir");
	llm_bpe_trainer_set_table_memory(tr, 1);
	llm_buf t = LLM_BUF_INIT;
	for (size_t i = 0; i < 2000; i++)
		word(&t, i);
	int rc = llm_bpe_trainer_add(tr, t.p, t.len);
	CHECK_EQ_INT(rc, LLM_EIO);
	CHECK(strstr(llm_last_error(), "/nonexistent/dir") != NULL);
	llm_buf_release(&t);
	llm_bpe_trainer_free(tr);
}

int main(void)
{
	RUN(test_spilled_and_merged_in_passes);
	RUN(test_spilled_long_pieces);
	RUN(test_pruned_in_memory);
	RUN(test_pruned_after_spilling);
	RUN(test_rounds_past_the_pairs);
	RUN(test_superbpe);
	RUN(test_spill_to_a_missing_directory_fails);
	return unit_done();
}
