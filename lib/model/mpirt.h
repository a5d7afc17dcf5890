/*
 * mpirt.h — the few MPI calls of data-parallel training, with Open MPI opened at run time.
 * (Not "mpi.h": with -Ilib that name would shadow the MPI library's own header.)
 *
 * The training programs must start on a GPU machine that has none of the MPI packages, so
 * they do not link libmpi: llm_mpirt_init opens Open MPI's libmpi.so.40 with dlopen, and only
 * when a launcher started the process (mpirun / srun set OMPI_COMM_WORLD_SIZE, PMI_SIZE or
 * PMIX_RANK). A process started alone never touches MPI and is rank 0 of 1.
 *
 * Open MPI's handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are the addresses of global
 * objects in libmpi (ompi_mpi_comm_world, ...), found with dlsym; the functions are the
 * standard C bindings. Other MPI implementations use integer handles: they are refused with
 * a message, not misused. LLM_MPI_LIB names another path for the library.
 *
 * Errors: LLM_EUNSUPPORTED when a launcher asks for several processes and the library cannot
 * be opened (or the build has MPI=0); LLM_EINTERNAL when an MPI call fails (Open MPI's default
 * error handler aborts the job first). Collectives are called by every rank in the same order.
 * Thread safety: one thread per process calls these.
 */
#ifndef LLM_MPIRT_H
#define LLM_MPIRT_H

#include <stddef.h>

/* The process count a launcher announced in the environment: 0 when none started us, -1
 * when one did without saying how many (PMIx-only launches). */
int llm_mpirt_launched(void);

/* When launched for several processes (or an unknown number), open libmpi and MPI_Init;
 * otherwise, MPI untouched, *rank and *world are 0 and 1. */
int llm_mpirt_init(int *argc, char ***argv, int *rank, int *world);
/* 1 after a successful llm_mpirt_init under a launcher. */
int llm_mpirt_active(void);
/* Threads for each of the processes a launcher started on this machine: its cores shared
 * among them (OpenBLAS would start one thread per core in each); 0 when alone on it. */
int llm_mpirt_local_threads(void);

/* In-place sums over the ranks (no-ops when not active). */
int llm_mpirt_sum_f32(float *x, size_t n);
int llm_mpirt_sum_f64(double *x, size_t n);
/* bytes from root to every rank. */
int llm_mpirt_bcast(void *p, size_t bytes, int root);
int llm_mpirt_barrier(void);
/* MPI_Finalize when active. */
void llm_mpirt_finalize(void);

#endif
