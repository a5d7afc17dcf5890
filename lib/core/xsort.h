/*
 * xsort.h — external sort of fixed records of three u64 {a, b, c}, ordered by (a, b, c).
 *
 * Records are added to a buffer of at most `budget` bytes. A full buffer is sorted and
 * appended as a run to one temporary file (created in dir, or $TMPDIR, or /tmp, and unlinked
 * at once, so nothing is left behind by a crash). Reading merges the runs with a heap; the
 * buffer's memory is then shared out as one read window per run, so memory stays within
 * the budget (plus a few words per run) however many runs there are. When everything fits,
 * no file is made and reading walks the sorted buffer.
 *
 * Use: add ... add, then llm_xsort_rewind and llm_xsort_next until LLM_EOF; rewind again
 * to read everything once more. No add after the first rewind. Not thread safe.
 */
#ifndef LLM_EXTSORT_H
#define LLM_EXTSORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint64_t a, b, c;
} llm_rec3;

typedef struct llm_xsort llm_xsort;

/* budget: bytes of records held in memory, at least 64 KiB (smaller values are raised). */
llm_xsort *llm_xsort_new(size_t budget, const char *dir);
void llm_xsort_free(llm_xsort *x);

/* LLM_EIO (with the system's reason) when a run cannot be written. */
int llm_xsort_add(llm_xsort *x, uint64_t a, uint64_t b, uint64_t c);

/* Start reading at the smallest record. LLM_EIO when the runs cannot be read. */
int llm_xsort_rewind(llm_xsort *x);
/* The next record in order; LLM_EOF after the last, LLM_EIO on a read failure. */
int llm_xsort_next(llm_xsort *x, llm_rec3 *r);

uint64_t llm_xsort_count(const llm_xsort *x);  /* records added */
unsigned llm_xsort_runs(const llm_xsort *x);   /* runs written to disk (0: all in memory) */
size_t llm_xsort_memory(const llm_xsort *x);   /* bytes held now */

#endif
