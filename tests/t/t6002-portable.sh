#!/bin/sh
test_description='llm-train and llm-eval start where only the C and C++ runtimes are installed'
. "$(dirname "$0")/../lib.sh"

# Shared libraries a program asks the dynamic linker for.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*Shared library: \[\(.*\)\]/\1/p'; }

# What a GPU machine without any -dev package (or MPI) has: the C and C++ runtimes, the CUDA
# runtime libraries and the driver.
allowed='^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64|ld-linux-aarch64|libcuda|libcudart|libcublas|libcublasLt)\.so'
# A sanitizer build (never shipped) brings its runtimes.
[ "${SAN:-0}" = 1 ] && allowed="$allowed|^(libasan|libubsan)\.so"

for p in llm-train llm-eval; do
	test_expect_success "$p links no OpenBLAS, MPI, cuBLAS or data library dynamically" "
		needed '$TOP/bin/$p' >libs && test -s libs &&
		! grep -E '^lib(openblas|blas|lapack|gfortran|quadmath|mpi|open-rte|open-pal|hwloc|event|zstd|pcre2|xxhash|archive|z|cublas)' libs &&
		{ grep -v -E '$allowed' libs >other || true; } && test_cmp /dev/null other
	"
done

test_expect_success 'a single process never opens MPI' '
	env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK LLM_MPI_LIB=/nonexistent/libmpi.so.40 \
		llm-train --list-models --vocab 100 >out && grep "^tiny " out &&
	OMPI_COMM_WORLD_SIZE=1 LLM_MPI_LIB=/nonexistent/libmpi.so.40 \
		llm-train --list-models --vocab 100 >out && grep "^tiny " out
'

test_expect_success 'a launch for several processes without Open MPI is a clear error' '
	test_must_fail env OMPI_COMM_WORLD_SIZE=2 LLM_MPI_LIB=/nonexistent/libmpi.so.40 \
		llm-train --list-models 2>err &&
	test_grep "MPI launcher for several processes, but Open MPI cannot be opened" err &&
	test_grep "/nonexistent/libmpi.so.40" err &&
	test_must_fail env PMI_SIZE=4 LLM_MPI_LIB=libm.so.6 llm-train --list-models 2>err &&
	test_grep "libm.so.6 has no .MPI_Init.: llmkit speaks Open MPI" err
'

test_expect_success 'PORTABLE=1: its own tree, no OpenBLAS, the data libraries static' '
	test_must_fail --code=2 make -s -C "$TOP" PORTABLE=1 SAN=1 2>err &&
	test_grep "PORTABLE=1 and SAN=1 do not go together" err &&
	make -n -B -C "$TOP" SAN=0 PORTABLE=1 build/portable/bin/llm-tokenize >dry 2>&1 &&
	grep -- "-o build/portable/bin/llm-tokenize" dry >link &&
	grep -- "-Wl,-Bstatic -lzstd -lpcre2-8 -lutf8proc -lprotobuf-c -lxxhash -Wl,-Bdynamic" link &&
	! grep -- "-lopenblas" link && ! grep -- "-DLLM_HAVE_BLAS" dry &&
	grep "BLAS=0" "$TOP/build/portable/config.vars"
'

test_done
