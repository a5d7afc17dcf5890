#!/bin/sh
# Build probes: try-compile each optional feature and print make variables for config.mk.
# Called by the Makefile with CC, NVCC, CUDA, BLAS and MPI in the environment; each probe
# reports on stderr what it found. An explicit 1 that cannot be satisfied fails the build.
set -u
dir=$1
t=$dir/probe.$$
trap 'rm -rf "$t" "$t".*' EXIT
say() { echo "probe: $*" >&2; }
fail() { echo "probe: $*" >&2; exit 1; }

try_cc() {  # try_cc 'source' flags... : compile and link a small program
	src=$1; shift
	printf '%s\n' "$src" > "$t.c"
	$CC "$t.c" -o "$t" "$@" >/dev/null 2>&1
}

# OpenBLAS (cblas_sgemm).
case $BLAS in
0) say "BLAS: off (BLAS=0), portable matrix loops"; echo "HAVE_BLAS := 0" ;;
*)
	blas_src='#include <cblas.h>
void openblas_set_num_threads(int);
int main(void){float a=1,b=1,c=0;openblas_set_num_threads(1);cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,1,1,1,1,&a,1,&b,1,0,&c,1);return c!=1;}'
	if try_cc "$blas_src" -lopenblas; then
		echo "HAVE_BLAS := 1"
		echo "PROBE_CPPFLAGS += -DLLM_HAVE_BLAS=1"
		echo "PROBE_BLAS_LDLIBS := -lopenblas"
		# llm-train and llm-eval carry OpenBLAS inside (they must start where only the CUDA
		# runtime is installed); Debian's static archive needs no Fortran runtime for sgemm.
		st="-Wl,-Bstatic -lopenblas -Wl,-Bdynamic"
		if try_cc "$blas_src" $st -lpthread -lm; then
			say "BLAS: OpenBLAS (linked statically into llm-train and llm-eval)"
		elif st="-Wl,-Bstatic -lopenblas -lgfortran -lquadmath -Wl,-Bdynamic" &&
		     try_cc "$blas_src" $st -lpthread -lm; then
			say "BLAS: OpenBLAS (linked statically, with libgfortran, into llm-train and llm-eval)"
		else
			st=-lopenblas
			say "BLAS: OpenBLAS; no static libopenblas.a: llm-train and llm-eval need libopenblas.so.0 at run time"
		fi
		echo "PROBE_BLAS_STATIC := $st"
	else
		[ "$BLAS" = 1 ] && fail "BLAS=1 but OpenBLAS (cblas.h, -lopenblas) is missing; run 'make deps'"
		say "BLAS: not found, portable matrix loops (install libopenblas-dev for speed)"
		echo "HAVE_BLAS := 0"
	fi ;;
esac

# MPI: llm-train opens Open MPI's libmpi.so.40 at run time, and only when a launcher started
# it (lib/model/mpirt.c), so nothing of MPI is needed to build or to start a single process. The
# probe says whether multi-process runs work here (the tests that need mpirun).
case $MPI in
0) say "MPI: off (MPI=0), one process per run"; echo "HAVE_MPI := 0" ;;
*)
	echo "PROBE_CPPFLAGS += -DLLM_HAVE_MPI=1"
	if command -v mpirun >/dev/null 2>&1 && try_cc '#include <dlfcn.h>
int main(void){void*h=dlopen("libmpi.so.40",RTLD_NOW|RTLD_GLOBAL);return !h||!dlsym(h,"ompi_mpi_comm_world");}' -ldl &&
	   "$t"; then
		say "MPI: $(mpirun --version 2>/dev/null | head -n 1), libmpi.so.40 opened at run time"
		echo "HAVE_MPI := 1"
	else
		[ "$MPI" = 1 ] && fail "MPI=1 but Open MPI (mpirun, libmpi.so.40) is missing; run 'make deps'"
		say "MPI: Open MPI not found here; launched runs open libmpi.so.40 at run time"
		echo "HAVE_MPI := 0"
	fi ;;
esac

# The data libraries llm-train and llm-eval use (compressed input through lib/core/codec,
# PCRE2 pre-tokenization, utf8proc normalizers of tokenizer.json files, protobuf-c for
# SentencePiece models) linked statically
# into them when the archives exist.
data_libs="-lzstd -lz -llzma -lbz2 -lpcre2-8 -lutf8proc -lprotobuf-c"
if try_cc '#include <zstd.h>
#include <zlib.h>
#include <lzma.h>
#include <bzlib.h>
#include <pcre2.h>
#include <utf8proc.h>
#include <protobuf-c/protobuf-c.h>
int main(void){return ZSTD_versionNumber()==0||!zlibVersion()||!lzma_version_string()||!BZ2_bzlibVersion()||!pcre2_compile_8||!utf8proc_version()||!protobuf_c_version();}' \
	-DPCRE2_CODE_UNIT_WIDTH=8 -Wl,-Bstatic $data_libs -Wl,-Bdynamic -lpthread; then
	say "zstd, zlib, liblzma, libbz2, PCRE2, utf8proc, protobuf-c: linked statically into llm-train and llm-eval"
	echo "PROBE_MODEL_DATA_LDLIBS := -Wl,-Bstatic $data_libs -Wl,-Bdynamic"
else
	say "zstd, zlib, liblzma, libbz2, PCRE2, utf8proc, protobuf-c: no static archives: llm-train and llm-eval need them at run time"
	echo "PROBE_MODEL_DATA_LDLIBS := $data_libs"
fi

# CUDA: nvcc compiles kernels/ whenever it exists, so CI catches CUDA breakage without a GPU.
case $CUDA in
0) say "CUDA: off (CUDA=0)"; echo "HAVE_CUDA := 0" ;;
*)
	if [ -n "$NVCC" ] && [ -x "$NVCC" ]; then
		cudadir=$(dirname "$(dirname "$NVCC")")
		printf '__global__ void k(float*x){x[threadIdx.x]=1;}\nint main(){return 0;}\n' > "$t.cu"
		# Machine code for each architecture asked for (auto: the GPUs present, else 90),
		# and the newest one's PTX too, so that later GPUs compile it when they load it.
		arch=$(echo "${CUDA_ARCH:-auto}" | tr ',' ' ')
		if [ "$arch" = auto ]; then
			arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
			       tr -d '. ' | sort -u | tr '\n' ' ')
			[ -n "$arch" ] || arch=90
		fi
		gen= top=0
		for a in $arch; do
			case $a in ''|*[!0-9]*) fail "CUDA_ARCH: '$a' is not a compute capability such as 80 or 90" ;; esac
			gen="$gen -gencode arch=compute_$a,code=sm_$a"
			[ "$a" -gt "$top" ] && top=$a
		done
		gen="$gen -gencode arch=compute_$top,code=compute_$top"
		# shellcheck disable=SC2086
		if "$NVCC" $gen -c "$t.cu" -o "$t.o" >/dev/null 2>&1; then
			say "CUDA: $("$NVCC" --version | tail -n 1) ($NVCC), code for sm_$(echo $arch | sed 's/ /, sm_/g')"
			echo "HAVE_CUDA := 1"
			echo "NVCCFLAGS := -O2 -std=c++17$gen -DLLM_HAVE_CUDA=1"
			# -isystem: the toolkit's headers (nccl.h) are not warning-free under -Wstrict-prototypes.
			echo "PROBE_CPPFLAGS += -DLLM_HAVE_CUDA=1 -isystem $cudadir/include"
			# NCCL (multi-GPU data parallel): only its header at build time; lib/model/cudamodel.c
			# opens libnccl at run time, so single-GPU binaries start without it.
			if try_cc '#include <nccl.h>
int main(void){ncclUniqueId u;(void)u;return ncclSuccess;}' -isystem "$cudadir/include"; then
				say "NCCL: header found (multi-GPU data parallel, libnccl opened at run time)"
				echo "PROBE_CPPFLAGS += -DLLM_HAVE_NCCL=1"
			else
				say "NCCL: not found, one GPU per run"
			fi
			# The runtime linked statically and cuBLASLt opened at run time (kernels/matmul.cu):
			# the programs start anywhere, and on a GPU machine need the driver and cuBLASLt.
			echo "PROBE_CUDA_LDLIBS := -L$cudadir/lib64 -lcudart_static -lrt -ldl -lpthread -lstdc++"
		else
			fail "nvcc at $NVCC cannot compile a trivial kernel for sm_$(echo $arch | sed 's/ /, sm_/g')"
		fi
	else
		[ "$CUDA" = 1 ] && fail "CUDA=1 but nvcc was not found (set NVCC=/path/to/nvcc)"
		say "CUDA: nvcc not found, CPU only"
		echo "HAVE_CUDA := 0"
	fi ;;
esac

# libFuzzer (clang -fsanitize=fuzzer) for coverage-guided fuzzing; without it the committed
# corpora are still replayed.
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t*d,size_t n){(void)d;(void)n;return 0;}\n' > "$t.f.c"
if clang -fsanitize=fuzzer,address "$t.f.c" -o "$t.f" >/dev/null 2>&1; then
	say "libFuzzer: clang $(clang --version | head -n 1 | sed 's/.*version \([^ ]*\).*/\1/')"
	echo "HAVE_LIBFUZZER := 1"
else
	say "libFuzzer: not found, corpus replay only"
	echo "HAVE_LIBFUZZER := 0"
fi
