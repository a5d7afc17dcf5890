/*
 * mpirt.c — Open MPI opened at run time (mpirt.h).
 *
 * Why not link libmpi: a GPU machine with the CUDA driver and runtime but no MPI packages must
 * run single-process training, and a linked libmpi.so.40 (with libopen-rte, libopen-pal,
 * hwloc, libevent behind it) stops the program before main. Opening it only under a launcher
 * costs nothing there: a launcher implies an MPI installation.
 *
 * The library is opened RTLD_GLOBAL: Open MPI loads its own components (mca_*.so) with dlopen
 * and they resolve symbols of libmpi and libopen-pal from the global scope.
 */
#include "mpirt.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/err.h"

#ifdef LLM_HAVE_MPI
#include <dlfcn.h>
#endif

static int active;

int llm_mpirt_launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" };
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return atoi(v) > 0 ? atoi(v) : -1;
	}
	return getenv("PMIX_RANK") ? -1 : 0;
}

int llm_mpirt_active(void)
{
	return active;
}

int llm_mpirt_local_threads(void)
{
	const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	long cores = sysconf(_SC_NPROCESSORS_ONLN), local = v ? atol(v) : 0;
	if (cores <= 0 || local <= 1)
		return 0;
	return cores / local > 1 ? (int)(cores / local) : 1;
}

#ifdef LLM_HAVE_MPI

/* Open MPI's C bindings with its handle types (pointers to library objects) as void *. */
static struct {
	int (*Init)(int *, char ***);
	int (*Finalize)(void);
	int (*Comm_rank)(void *, int *);
	int (*Comm_size)(void *, int *);
	int (*Allreduce)(const void *, void *, int, void *, void *, void *);
	int (*Bcast)(void *, int, void *, int, void *);
	int (*Barrier)(void *);
	int (*Error_string)(int, char *, int *);
	void *comm_world, *dt_float, *dt_double, *dt_byte, *op_sum;
} mpi;

#define MPI_IN_PLACE_ ((void *)1) /* Open MPI's MPI_IN_PLACE */
enum { CHUNK = 1 << 30 };         /* counts are int */

static int mpi_check(int rc, const char *call)
{
	if (rc == 0)
		return LLM_OK;
	char msg[512] = "";
	int len = 0;
	if (mpi.Error_string)
		mpi.Error_string(rc, msg, &len);
	return llm_fail(LLM_EINTERNAL, "%s: %s", call, msg[0] ? msg : "MPI error");
}

static int load(int world)
{
	const char *path = getenv("LLM_MPI_LIB");
	if (!path || !*path)
		path = "libmpi.so.40";
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		return llm_fail(LLM_EUNSUPPORTED, "started by an MPI launcher%s, but Open MPI cannot "
		                "be opened: %s (install Open MPI's runtime, e.g. the libopenmpi3 "
		                "package, or set LLM_MPI_LIB to its libmpi.so.40)",
		                world > 1 ? " for several processes" : "", dlerror());
	struct {
		void **slot;
		const char *name;
	} syms[] = {
		{ (void **)&mpi.Init, "MPI_Init" },
		{ (void **)&mpi.Finalize, "MPI_Finalize" },
		{ (void **)&mpi.Comm_rank, "MPI_Comm_rank" },
		{ (void **)&mpi.Comm_size, "MPI_Comm_size" },
		{ (void **)&mpi.Allreduce, "MPI_Allreduce" },
		{ (void **)&mpi.Bcast, "MPI_Bcast" },
		{ (void **)&mpi.Barrier, "MPI_Barrier" },
		{ (void **)&mpi.Error_string, "MPI_Error_string" },
		{ &mpi.comm_world, "ompi_mpi_comm_world" },
		{ &mpi.dt_float, "ompi_mpi_float" },
		{ &mpi.dt_double, "ompi_mpi_double" },
		{ &mpi.dt_byte, "ompi_mpi_byte" },
		{ &mpi.op_sum, "ompi_mpi_op_sum" },
	};
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
		if (!(*syms[i].slot = dlsym(h, syms[i].name)))
			return llm_fail(LLM_EUNSUPPORTED, "%s has no '%s': llmkit speaks Open MPI's "
			                "interface only", path, syms[i].name);
	return LLM_OK;
}

int llm_mpirt_init(int *argc, char ***argv, int *rank, int *world)
{
	*rank = 0;
	*world = 1;
	/* One process needs no MPI at all (and mpirun -np 1 behaves as a plain start). */
	int n = llm_mpirt_launched();
	if (n == 0 || n == 1)
		return LLM_OK;
	int rc = load(n);
	if (rc)
		return rc;
	if ((rc = mpi_check(mpi.Init(argc, argv), "MPI_Init")) ||
	    (rc = mpi_check(mpi.Comm_rank(mpi.comm_world, rank), "MPI_Comm_rank")) ||
	    (rc = mpi_check(mpi.Comm_size(mpi.comm_world, world), "MPI_Comm_size")))
		return rc;
	active = 1;
	return LLM_OK;
}

static int allreduce(void *x, size_t n, size_t elem, void *type)
{
	for (size_t done = 0; active && done < n;) {
		int k = n - done > CHUNK ? CHUNK : (int)(n - done);
		int rc = mpi_check(mpi.Allreduce(MPI_IN_PLACE_, (char *)x + done * elem, k, type,
		                                 mpi.op_sum, mpi.comm_world),
		                   "MPI_Allreduce");
		if (rc)
			return rc;
		done += (size_t)k;
	}
	return LLM_OK;
}

int llm_mpirt_sum_f32(float *x, size_t n)
{
	return allreduce(x, n, sizeof *x, mpi.dt_float);
}

int llm_mpirt_sum_f64(double *x, size_t n)
{
	return allreduce(x, n, sizeof *x, mpi.dt_double);
}

int llm_mpirt_bcast(void *p, size_t bytes, int root)
{
	for (size_t done = 0; active && done < bytes;) {
		int k = bytes - done > CHUNK ? CHUNK : (int)(bytes - done);
		int rc = mpi_check(mpi.Bcast((char *)p + done, k, mpi.dt_byte, root, mpi.comm_world),
		                   "MPI_Bcast");
		if (rc)
			return rc;
		done += (size_t)k;
	}
	return LLM_OK;
}

int llm_mpirt_barrier(void)
{
	return active ? mpi_check(mpi.Barrier(mpi.comm_world), "MPI_Barrier") : LLM_OK;
}

void llm_mpirt_finalize(void)
{
	if (active)
		mpi.Finalize();
	active = 0;
}

#else /* MPI=0: a single process; a launcher asking for more is refused. */

int llm_mpirt_init(int *argc, char ***argv, int *rank, int *world)
{
	(void)argc;
	(void)argv;
	*rank = 0;
	*world = 1;
	int n = llm_mpirt_launched();
	if (n > 1 || n < 0)
		return llm_fail(LLM_EUNSUPPORTED, "started by an MPI launcher, but built without MPI "
		                "(MPI=0): one process only");
	return LLM_OK;
}

int llm_mpirt_sum_f32(float *x, size_t n)
{
	(void)x;
	(void)n;
	return LLM_OK;
}

int llm_mpirt_sum_f64(double *x, size_t n)
{
	(void)x;
	(void)n;
	return LLM_OK;
}

int llm_mpirt_bcast(void *p, size_t bytes, int root)
{
	(void)p;
	(void)bytes;
	(void)root;
	return LLM_OK;
}

int llm_mpirt_barrier(void)
{
	return LLM_OK;
}

void llm_mpirt_finalize(void) {}

#endif
