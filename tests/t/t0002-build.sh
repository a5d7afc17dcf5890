#!/bin/sh
test_description='build probes, make deps, make install'
. "$(dirname "$0")/../lib.sh"

probe() { CC=${CC:-cc} NVCC=${NVCC-} CUDA=${CUDA:-auto} CUDA_ARCH=${CUDA_ARCH:-auto} BLAS=${BLAS:-auto} MPI=${MPI:-auto} sh "$TOP/mk/probe.sh" . ; }

test_expect_success 'CUDA=1 without nvcc fails loudly' '
	test_must_fail env NVCC=/nonexistent/nvcc CUDA=1 sh -c "CC=cc BLAS=0 MPI=0 sh $TOP/mk/probe.sh ." >out 2>err &&
	test_grep "CUDA=1 but nvcc was not found" err
'

test_expect_success 'CUDA=auto without nvcc builds for the CPU' '
	NVCC= CUDA=auto BLAS=0 MPI=0 probe >out 2>err &&
	test_grep "HAVE_CUDA := 0" out && test_grep "probe: CUDA: nvcc not found" err
'

test_expect_success 'CUDA=0, BLAS=0, MPI=0 turn the features off' '
	CUDA=0 BLAS=0 MPI=0 probe >out 2>err &&
	test_grep "HAVE_CUDA := 0" out && test_grep "HAVE_BLAS := 0" out && test_grep "HAVE_MPI := 0" out
'

test_expect_success 'BLAS=1 and MPI=1 find what make deps installs' '
	CUDA=0 BLAS=1 MPI=1 probe >out 2>err &&
	test_grep "HAVE_BLAS := 1" out && test_grep "HAVE_MPI := 1" out &&
	test_grep "probe: BLAS: OpenBLAS" err
'

test_expect_success 'BLAS=1 fails loudly when cblas.h cannot be found' '
	test_must_fail env CC="cc -nostdinc" CUDA=0 BLAS=1 MPI=0 sh $TOP/mk/probe.sh . >out 2>err &&
	test_grep "BLAS=1 but OpenBLAS" err
'

test_expect_success NVCC 'nvcc present: the probe finds it' '
	NVCC=$NVCC_BIN CUDA=auto BLAS=0 MPI=0 probe >out 2>err && test_grep "HAVE_CUDA := 1" out
'

test_expect_success CUDA_BUILD 'a CUDA build compiled the kernels' '
	test -f "$TOP/$B/libllmcuda.a" && ls "$TOP"/kernels/*.cu >/dev/null
'

test_expect_success NVCC 'CUDA_ARCH: code for each architecture asked, a bad value fails loudly' '
	NVCC=$NVCC_BIN CUDA=auto CUDA_ARCH=80,90 BLAS=0 MPI=0 probe >out 2>err &&
	test_grep "arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90" out &&
	test_must_fail env NVCC=$NVCC_BIN CUDA=auto CUDA_ARCH=9x sh -c "CC=cc BLAS=0 MPI=0 sh $TOP/mk/probe.sh ." >out 2>err &&
	test_grep "CUDA_ARCH: .9x. is not a compute capability" err
'

# A copy of the source tree (no build outputs), for the tests that run make on a fresh tree.
# Those builds are the release flavour (SAN=0) whatever flavour the suite runs: they read
# build/rel/.
fresh_tree() {
	rm -rf "$1" && mkdir -p "$1" &&
	(cd "$TOP" && git ls-files -z 2>/dev/null | xargs -0 tar cf - 2>/dev/null) | tar xf - -C "$1" &&
	test -f "$1/Makefile"
}

test_expect_success 'make deps and make clean do not probe' '
	fresh_tree fresh &&
	make -s -C fresh SAN=0 deps >out 2>&1 && test_must_fail test -e fresh/build/rel/config.mk &&
	make -s -C fresh SAN=0 clean >out 2>&1 && test_must_fail test -e fresh/build/rel/config.mk &&
	test_must_fail test_grep "^probe:" out
'

test_expect_success 'make check and make demo install packages before the first probe' '
	for goal in check demo; do
		fresh_tree fresh &&
		make -n -C fresh SAN=0 $goal >out 2>&1;
		first=$(grep -n -m1 "^probe:" out | cut -d: -f1) &&
		deps=$(grep -n -m1 "sh mk/deps.sh" out | cut -d: -f1) &&
		test -n "$first" && test -n "$deps" && test "$deps" -lt "$first" || return 1
	done
'

test_expect_success 'a probe that found no OpenBLAS is redone once the packages change' '
	fresh_tree fresh &&
	make -s -C fresh SAN=0 BLAS=auto build/rel/config.mk 2>/dev/null &&
	test_grep "HAVE_BLAS := 1" fresh/build/rel/config.mk &&
	# What a first build before `make deps` recorded: another package state, no OpenBLAS.
	sed "s/PKGS=.*/PKGS=before-make-deps/" fresh/build/rel/config.vars >v &&
	cat v >fresh/build/rel/config.vars &&
	sed "s/^HAVE_BLAS := 1/HAVE_BLAS := 0/; /BLAS/d" fresh/build/rel/config.mk >m &&
	echo "HAVE_BLAS := 0" >>m && cat m >fresh/build/rel/config.mk &&
	make -s -C fresh SAN=0 deps &&
	make -s -C fresh SAN=0 BLAS=auto build/rel/config.mk 2>err &&
	test_grep "probe: BLAS: OpenBLAS" err &&
	test_grep "HAVE_BLAS := 1" fresh/build/rel/config.mk
'

test_expect_success 'make deps is quiet when everything is installed' '
	sh $TOP/mk/deps.sh >out 2>&1 && test_must_fail test -s out
'

test_expect_success 'make install puts programs and man pages under PREFIX' '
	make -s -C "$TOP" install PREFIX="$TRASH/inst" >out 2>&1 &&
	test -x inst/bin/llm-cat && test -f inst/share/man/man1/llm-cat.1 &&
	test -f inst/share/man/man5/llmkit-formats.5 &&
	for p in "$TOP"/bin/llm-*; do
		test -s "inst/share/bash-completion/completions/${p##*/}" || return 1
	done &&
	inst/bin/llm-cat --version >v && test_grep "llm-cat (llmkit)" v
'

test_expect_success 'installed programs find their data under PREFIX/share/llmkit' '
	test -f inst/share/llmkit/samples/wordlists/en && test -f inst/share/llmkit/samples/tox/tox.bin &&
	test -f inst/share/llmkit/LICENSE && test -f inst/share/llmkit/samples/NOTICE &&
	for p in inst/bin/llm-*; do $p --help >/dev/null || { echo "$p --help"; return 1; }; done &&
	printf "{\"text\": \"A plain sentence about the weather in the park today.\"}\n" >doc.jsonl &&
	(unset LLMKIT_DATA; cd / && "$TRASH/inst/bin/llm-tox" -q "$TRASH/doc.jsonl") >tox.out &&
	test_grep tox_score tox.out &&
	inst/bin/llm-clean -q doc.jsonl >/dev/null
'

test_expect_success 'make install copies jieba'"'"'s dictionary, and installed programs read it' '
	test -s inst/share/llmkit/jieba/dict.txt && test -s inst/share/llmkit/jieba/copyright &&
	(unset LLM_ZHSEG_DICT LLMKIT_DATA; cd / &&
	 "$TRASH/inst/bin/llm-clean" -v --filters none --segment "$TRASH/doc.jsonl" 2>"$TRASH/err") >seg.out &&
	test_grep "dictionary $TRASH/inst/bin/../share/llmkit/jieba/dict.txt" err && test_grep words seg.out
'

test_expect_success 'without installed data an installed llm-tox says what is missing' '
	mkdir -p bare/bin && cp inst/bin/llm-tox bare/bin/ &&
	test_must_fail bare/bin/llm-tox -q doc.jsonl 2>err &&
	test_grep "default word list" err &&
	LLMKIT_DATA=$TOP bare/bin/llm-tox -q doc.jsonl >out && test_grep tox_score out
'

test_expect_success 'installed programs take shipped data by name, from any directory' '
	(unset LLMKIT_DATA; cd / &&
	 "$TRASH/inst/bin/llm-clean" -q --recipe default --stop-words en "$TRASH/doc.jsonl" &&
	 "$TRASH/inst/bin/llm-tox" -q --recipe default --model tox --words en:en "$TRASH/doc.jsonl" &&
	 "$TRASH/inst/bin/llm-tox" -q --recipe recipes/default --no-model --add-words de:de \
		"$TRASH/doc.jsonl") >byname.out &&
	test_grep "weather in the park" byname.out && test_grep tox_score byname.out &&
	test_must_fail inst/bin/llm-clean -q --recipe no-such-recipe doc.jsonl 2>err &&
	test_grep "llm-clean: no-such-recipe: No such file" err &&
	mkdir -p here && printf "not a recipe\n" >here/default &&
	{ (cd here && "$TRASH/inst/bin/llm-clean" -q --recipe default "$TRASH/doc.jsonl") 2>err
	  test $? = 2; } && test_grep "llm-clean: default:1: expected" err
'

test_expect_success 'make -f the installed pipelines/Makefile help, from anywhere, needs no CONFIG' '
	(cd / && make -s -f "$TRASH/inst/share/llmkit/pipelines/Makefile" help) >help.out &&
	test_grep "a whole llmkit run as file targets" help.out &&
	test_grep "clean-stage STAGE=tox" help.out &&
	test_grep "$TRASH/inst/share/llmkit/pipelines/demo.mk" help.out
'

test_expect_success 'the installed pipeline runs the installed programs' '
	mkdir -p pipe/raw && cp $SAMPLES/corpus/code.jsonl pipe/raw/ &&
	(cd pipe && make -s -f "$TRASH/inst/share/llmkit/pipelines/Makefile" \
		CONFIG="$TRASH/inst/share/llmkit/pipelines/test.mk" cat) 2>err &&
	test -s pipe/out/cat/code.jsonl && test_grep "pipeline: cat: 1 file, [0-9]* documents in" err
'

test_done
