#!/bin/sh
test_description='faults: kill -9 of llm-dedup --index while it saves the index; the rerun after it'
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/lib-faults.sh"

# After a kill at any point, the index is the one the run started from or the one it would
# have saved, byte for byte, never a torn one; and the rerun of the same command (as a pipeline
# rerun does) gives what the uninterrupted run gave: output, rejects and index.

C=$SAMPLES/corpus

dedup() { llm-dedup -q --index idx --rejects r2 --stats s2 -o o2 m2; }

test_expect_success 'setup: an index of a first month, and the uninterrupted second run' '
	cat $C/web.jsonl $C/news.jsonl $C/qa.jsonl >all &&
	awk "NR % 2 == 0" all >m1 && awk "NR % 2 == 1" all >m2 &&
	llm-dedup -q --index idx -o o1 m1 && cp idx old.idx &&
	echo previous >o2 && echo previous >r2 && tar cf before.tar o2 r2 &&
	dedup && cp idx new.idx && cp o2 ref.o2 && cp r2 ref.r2 &&
	grep -q "\"dup_of\"" ref.r2 && ! cmp -s old.idx new.idx
'

# index_whole: idx is the old index or the new one (which one goes to seen), and llm-dedup
# reads it.
index_whole() {
	{ { cmp -s idx old.idx && echo old; } || { cmp -s idx new.idx && echo new; }; } >>seen &&
	llm-dedup --info idx >/dev/null
}
# The rerun equals the uninterrupted run, and leaves no temporary.
rerun_equals() {
	dedup && cmp ref.o2 o2 && cmp ref.r2 r2 && cmp new.idx idx && no_tmp_left
}
fresh() { cp old.idx idx && tar xf before.tar; }

# Four deferred outputs (-o, --rejects, --stats, the index): a kill before each rename, and
# between an anonymous temporary's naming and its rename.
for step in commit:1 commit:2 commit:3 commit:4 tmpfile-named; do
	test_expect_success "kill -9 of llm-dedup --index at $step: the index is whole, the rerun equals" "
		fresh && kill_at $step llm-dedup -q --index idx --rejects r2 --stats s2 -o o2 m2 &&
		index_whole && { cmp -s o2 ref.o2 || test \"\$(cat o2)\" = previous; } &&
		rerun_equals
	"
done

test_expect_success 'the kills came before the index was renamed and after' '
	grep -qx old seen && grep -qx new seen
'

test_expect_success 'kill -9 before any rename: everything is as before' '
	fresh && kill_at commit:1 llm-dedup -q --index idx --rejects r2 --stats s2 -o o2 m2 &&
	cmp old.idx idx && tar df before.tar && rerun_equals
'

if cc -shared -fPIC -o killat.so "$TOP/tests/killat.c" -ldl 2>/dev/null; then
	test_set_prereq KILLAT
fi
# killat NAME BYTES CMD...: run CMD with tests/killat.c killing the process that has written
# BYTES to files named like *NAME*, with named temporaries so that the index's has a name.
killat() {
	ka_name=$1 ka_bytes=$2
	shift 2
	( LD_PRELOAD=$TRASH/killat.so LLM_KILL_AT=write:$ka_name:$ka_bytes \
	  LLMKIT_FAULT=no-o-tmpfile \
	  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 &&
	  export LD_PRELOAD LLM_KILL_AT LLMKIT_FAULT ASAN_OPTIONS && exec "$@" )
}
# A torn temporary NAME of at least BYTES is there: the kill came mid-write.
torn_left() {
	test "$(find . -name "$1" -size +$(( $2 / 1024 - 1 ))k | wc -l)" = 1
}

test_expect_success KILLAT 'kill -9 half-way through writing the index: the old index, then the rerun equals' '
	fresh && half=$(( $(wc -c <new.idx) / 2 )) &&
	{ killat .idx.llmtmp. $half llm-dedup -q --index idx --rejects r2 --stats s2 -o o2 m2
	  test $? = 137; } 2>/dev/null &&
	torn_left ".idx.llmtmp.*" $half &&
	cmp old.idx idx && tar df before.tar && rerun_equals
'

# The pipeline with DEDUP_INDEX: its dedup stage killed while it saves the index, then the
# same make again; what comes out is what an uninterrupted pipeline gives.
mkdir -p raw1 raw2 bin &&
head -n 60 $C/web.jsonl >raw1/web.jsonl && head -n 60 $C/news.jsonl >raw1/news.jsonl &&
sed -n "40,120p" $C/web.jsonl >raw2/web.jsonl && sed -n "40,120p" $C/news.jsonl >raw2/news.jsonl &&
cp "$TOP"/bin/llm-* bin/ || exit 1
P="make -s -f $TOP/pipelines/Makefile CONFIG=$TOP/pipelines/test.mk BIN=$TRASH/bin Z="

test_expect_success KILLAT 'pipeline: the dedup stage killed while saving the index, then rerun' '
	$P RAW=raw1 OUT=pipe1 DEDUP_INDEX=$TRASH/p.idx dedup >log 2>&1 &&
	cp p.idx p1.idx && cp p.idx ref.idx &&
	$P RAW=raw2 OUT=ref DEDUP_INDEX=$TRASH/ref.idx dedup >>log 2>&1 &&
	size=$(wc -c <ref.idx) &&
	! killat .p.idx.llmtmp. $((size / 2)) \
		$P RAW=raw2 OUT=pipe2 DEDUP_INDEX=$TRASH/p.idx dedup >>log 2>&1 &&
	torn_left ".p.idx.llmtmp.*" $((size / 2)) && cmp p1.idx p.idx &&
	$P RAW=raw2 OUT=pipe2 DEDUP_INDEX=$TRASH/p.idx dedup >>log 2>&1 &&
	for f in ref/dedup/*.jsonl; do cmp $f pipe2/dedup/${f##*/} || return 1; done &&
	test -s pipe2/dedup/web.jsonl &&
	llm-dedup --info --clusters p.idx >c2 && llm-dedup --info --clusters ref.idx >c3 &&
	test_cmp c3 c2 && no_tmp_left
'

test_done
