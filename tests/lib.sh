# tests/lib.sh — shell test harness in the style of git's t/test-lib.sh. Source it first:
#
#   test_description='llm-cat reads JSONL'
#   . "$(dirname "$0")/../lib.sh"
#   test_expect_success 'passthrough' 'llm-cat in.jsonl >out && test_cmp in.jsonl out'
#   test_expect_success ZSTD 'zstd input' '...'      # runs only when prereq ZSTD is set
#   test_done
#
# Each script runs in its own empty directory build/trash/<script>/ with bin/ first on PATH,
# LC_ALL=C and TZ=UTC. Output is TAP. $TOP is the source root, $SAMPLES and $TESTDATA the data.
# Bodies run in a subshell with `set -e` off: chain commands with && as git's tests do; a body
# whose chain is broken fails ("broken &&-chain"; what follows the break may have run once).

LC_ALL=C
TZ=UTC
export LC_ALL TZ
# A test runs make as a user does: not as a child of the suite's make, whose jobserver it
# cannot reach (make would warn on stderr that it is unavailable, and -j would leak in).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES MAKEOVERRIDES
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SAMPLES=$TOP/samples
TESTDATA=$TOP/tests/data
PATH=$TOP/bin:$PATH
LLM_TOP=$TOP
export TOP SAMPLES TESTDATA PATH LLM_TOP
: "${B:=build/rel}"

test_name=$(basename "$0" .sh)
TRASH=$TOP/build/trash/$test_name
rm -rf "$TRASH" && mkdir -p "$TRASH" && cd "$TRASH" || exit 1

test_count=0
test_failures=0
test_prereqs=" "

test_set_prereq() { test_prereqs="$test_prereqs$1 "; }
test_have_prereq() {
	for p in $(echo "$1" | tr ',' ' '); do
		case $p in
		!*) case "$test_prereqs" in *" ${p#!} "*) return 1 ;; esac ;;
		*) case "$test_prereqs" in *" $p "*) ;; *) return 1 ;; esac ;;
		esac
	done
	return 0
}

command -v zstd >/dev/null 2>&1 && test_set_prereq ZSTD
command -v gzip >/dev/null 2>&1 && test_set_prereq GZIP
command -v jq >/dev/null 2>&1 && test_set_prereq JQ
command -v python3 >/dev/null 2>&1 && test_set_prereq PYTHON
[ "$(id -u)" != 0 ] && test_set_prereq NOT_ROOT
[ "${SAN:-0}" = 1 ] && test_set_prereq SAN
[ "${SAN:-0}" != 1 ] && test_set_prereq NO_SAN
# MPI: make passes HAVE_MPI; a test run by hand reads what this build's probe found
: "${HAVE_MPI:=$(sed -n 's/^HAVE_MPI := //p' "$TOP/$B/config.mk" 2>/dev/null)}"
[ "${HAVE_MPI:-0}" = 1 ] && test_set_prereq MPI
[ -w /dev/full ] && test_set_prereq DEVFULL

# The CUDA side, decided here and nowhere else:
#   NVCC        an nvcc to compile with, $NVCC_BIN
#   CUDA_BUILD  this build has the CUDA backend ($B/config.mk says so; libllmcuda.a is built)
#   GPU         that, and the driver lists a GPU: the GPU checks run instead of skipping
NVCC_BIN=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
[ -n "$NVCC_BIN" ] && test_set_prereq NVCC
if grep -q '^HAVE_CUDA := 1$' "$TOP/$B/config.mk" 2>/dev/null && [ -f "$TOP/$B/libllmcuda.a" ]; then
	test_set_prereq CUDA_BUILD
	nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]' && test_set_prereq GPU
fi

test_expect_success() {
	if [ $# = 3 ]; then prereq=$1; shift; else prereq=; fi
	test_count=$((test_count + 1))
	if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
		echo "ok $test_count - $1 # skip missing $prereq"
		return
	fi
	out=$TRASH/.test-output
	# git's &&-chain check: with every command joined by &&, a false first command ends the
	# body at once with its status; a break in the chain runs on past it.
	( eval "(exit 117) && $2" ) >"$out" 2>&1 </dev/null
	if [ $? != 117 ]; then
		test_failures=$((test_failures + 1))
		echo "not ok $test_count - $1 # broken &&-chain"
		echo "$2" | sed 's/^/#	/'
		return
	fi
	( eval "$2" ) >"$out" 2>&1 </dev/null
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok $test_count - $1"
	else
		test_failures=$((test_failures + 1))
		echo "not ok $test_count - $1"
		echo "$2" | sed 's/^/#	/'
		tail -n 40 "$out" | sed 's/^/# > /'
	fi
}

# test_must_fail [--code=N] cmd...: cmd must exit with N (default 1); death by a signal
# (status > 128) or success always fails.
test_must_fail() {
	want=1
	case $1 in --code=*) want=${1#--code=}; shift ;; esac
	"$@"
	got=$?
	if [ $got -gt 128 ]; then
		echo "test_must_fail: $1 died of signal $((got - 128))" >&2
		return 1
	fi
	if [ $got != "$want" ]; then
		echo "test_must_fail: $1 exited $got, expected $want" >&2
		return 1
	fi
	return 0
}

test_cmp() { diff -u "$1" "$2"; }

# test_tiny_run: in the current directory, docs.jsonl (16 English documents of each curated
# sample, cut to 1,000 characters), a 384-token BPE trained on them (tok.json), their tokens
# (docs.tok), shards/ with a quarter held out, and run/: the tiny preset trained 8 steps.
test_tiny_run() {
	for d in books legal qa web wiki; do
		jq -c "select(.lang == \"en\") | .text |= .[0:1000]" "$SAMPLES/corpus/$d.jsonl" |
			head -n 16 || return 1
	done >docs.jsonl &&
	llm-tokenize train -q --vocab-size 384 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json docs.jsonl >docs.tok &&
	llm-shard -q --val-fraction 0.25 --tokenizer tok.json -o shards docs.tok &&
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 8 --warmup 2 \
		--lr 3e-3 --tokenizer tok.json --run-dir run
}

# Lines in a file (portable wc -l without padding).
test_line_count() {
	n=$(wc -l <"$3" | tr -d ' ')
	[ "$n" "$1" "$2" ] || { echo "test_line_count: $3 has $n lines, expected $1 $2" >&2; return 1; }
}

# The stderr of the last command must match a grep pattern.
test_grep() { grep -e "$1" "$2" >/dev/null || { echo "test_grep: '$1' not in $2:" >&2; cat "$2" >&2; return 1; }; }

test_done() {
	echo "1..$test_count"
	[ $test_failures = 0 ]
}
