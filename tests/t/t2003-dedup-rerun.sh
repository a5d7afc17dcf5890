#!/bin/sh
test_description='llm-dedup --index: a rerun replaces its own earlier run, in the tool and the pipeline'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus

# Two months; the second is then "cleaned again" with other options (here: a tenth of its
# documents dropped and one changed), as a rerun after changing CLEAN_OPTS would see it.
test_expect_success 'setup' '
	cat $C/web.jsonl $C/news.jsonl $C/qa.jsonl >all &&
	awk "NR % 2 == 0" all >m1 && awk "NR % 2 == 1" all >m2 &&
	awk "NR % 10 != 3" m2 | sed "5s/\"text\": \"/\"text\": \"Changed. /" >m2.new &&
	test $(wc -l <m2.new) -lt $(wc -l <m2)
'

for m in --minhash --exact --simhash; do
	test_expect_success "a rerun with changed input equals a fresh run ($m)" '
		rm -f idx fresh.idx &&
		llm-dedup -q $m --index idx m1 >/dev/null && cp idx fresh.idx &&
		cp m2 in && llm-dedup -q $m --index idx --rejects r1 in >o1 &&
		grep -q "\"dup_of\"" r1 &&
		cp m2.new in && llm-dedup -q $m --index idx --rejects r2 --stats s2 in >o2 &&
		cp fresh.idx idx.f && llm-dedup -q $m --index idx.f --rejects r3 in >o3 &&
		test_cmp o3 o2 && test_cmp r3 r2 &&
		llm-dedup --info --clusters idx >c2 && llm-dedup --info --clusters idx.f >c3 &&
		test_cmp c3 c2 &&
		llm-dedup --info idx | grep -q "documents: .* in 2 runs"
	'
done

test_expect_success 'no document is a duplicate of itself: the same run twice' '
	rm -f idx && llm-dedup -q --index idx --rejects r1 m1 >o1 &&
	llm-dedup --index idx --rejects r2 m1 >o2 2>err &&
	test_cmp o1 o2 && test_cmp r1 r2 &&
	test_grep "replaces that run" err &&
	! grep "\"dup_of\"" r2 | jq -e "select(.id == .dup_of)" >/dev/null
'

test_expect_success 'dup_count counts the cluster, the index included' '
	rm -f idx && llm-dedup -q --exact --index idx --dup-count m1 >o1 &&
	llm-dedup -q --exact --dup-count --rejects r1 m1 >o2 && test_cmp o1 o2 &&
	n=$(jq -s "map(.dup_count) | add" o1) && test "$n" = $(wc -l <m1) &&
	jq -s -e "map(select(.dup_count > 1)) | length > 0" o1 >/dev/null &&
	llm-dedup -q --exact --index idx m1 >/dev/null &&
	cat m1 m1 >twice && cp twice m1b &&
	llm-dedup -q --exact --index idx --rejects r3 m1b >o3 && test_must_fail test -s o3 &&
	llm-dedup --info --clusters idx | jq -s "map(.dup_count) | add" >sum &&
	test "$(cat sum)" = $((3 * $(wc -l <m1)))
'

test_expect_success 'only the last run can be repeated, and only whole' '
	rm -f idx && llm-dedup -q --index idx m1 >/dev/null && llm-dedup -q --index idx m2 >/dev/null &&
	test_must_fail llm-dedup -q --index idx m1 >/dev/null 2>err &&
	test_grep "idx: input .*/m1. was deduplicated by run 1 of 2; only the last run" err &&
	rm -f idx && llm-dedup -q --index idx m1 m2 >/dev/null &&
	test_must_fail llm-dedup -q --index idx m2 >/dev/null 2>err &&
	test_grep "repeats run 1 but without its input .*/m1" err &&
	llm-dedup -q --index idx m1 m2 all >/dev/null &&
	llm-dedup --info idx | grep -q "in 1 run"
'

test_expect_success 'stages: cluster rerun with changed signature files equals a fresh one' '
	rm -f idx && llm-dedup -q --index idx m1 >/dev/null && cp idx fresh.idx &&
	cp m2 s.jsonl && llm-dedup sign -q -o s.sig s.jsonl &&
	llm-dedup cluster -q --index idx s.sig && cp s.rm first.rm &&
	cp m2.new s.jsonl && llm-dedup sign -q -o s.sig s.jsonl &&
	llm-dedup cluster -q --index idx s.sig &&
	llm-dedup apply -q --removals s.rm s.jsonl >o1 &&
	llm-dedup cluster -q --index fresh.idx s.sig &&
	llm-dedup apply -q --removals s.rm s.jsonl >o2 &&
	test_cmp o2 o1
'

test_expect_success 'a refused index names the parameters it was built with' '
	rm -f idx && llm-dedup -q --index idx m1 >/dev/null &&
	test_must_fail llm-dedup -q --ngram 3 --index idx m2 >/dev/null 2>err &&
	test_grep "idx: index was built with other dedup parameters (minhash: 112 permutations.*5-auto shingles.*), this run has .*3-auto shingles" err
'

test_expect_success '--info: usage and damaged files' '
	test_must_fail --code=2 llm-dedup --info &&
	test_must_fail --code=2 llm-dedup --clusters m1 &&
	test_must_fail llm-dedup --info m1 2>err && test_grep "m1: not a dedup index" err
'

# The pipeline of issue 17: with DEDUP_INDEX set, change CLEAN_OPTS and rerun; the dedup
# stage's output must be that of a fresh run against the index as it was before the stage.
mkdir -p raw1 raw2 bin &&
head -n 60 $C/web.jsonl >raw1/web.jsonl && head -n 60 $C/news.jsonl >raw1/news.jsonl &&
sed -n "40,120p" $C/web.jsonl >raw2/web.jsonl && sed -n "40,120p" $C/news.jsonl >raw2/news.jsonl &&
cp "$TOP"/bin/llm-* bin/ || exit 1
P="make -s -f $TOP/pipelines/Makefile CONFIG=$TOP/pipelines/test.mk BIN=$TRASH/bin Z="

test_expect_success 'pipeline: rerun after a CLEAN_OPTS change equals a fresh run' '
	$P RAW=raw1 OUT=pipe1 DEDUP_INDEX=$TRASH/p.idx dedup >log 2>&1 &&
	cp p.idx p1.idx &&
	$P RAW=raw2 OUT=pipe2 DEDUP_INDEX=$TRASH/p.idx dedup >>log 2>&1 &&
	cat pipe2/dedup/*.rejects.jsonl >first.rejects && grep -q "\"dup_of\"" first.rejects &&
	$P RAW=raw2 OUT=pipe2 DEDUP_INDEX=$TRASH/p.idx CLEAN_OPTS="--max-line 1M" dedup >>log 2>&1 &&
	$P RAW=raw2 OUT=pipe3 DEDUP_INDEX=$TRASH/p1.idx CLEAN_OPTS="--max-line 1M" dedup >>log 2>&1 &&
	for f in pipe3/dedup/*.jsonl; do cmp $f pipe2/dedup/${f##*/} || return 1; done &&
	test -s pipe2/dedup/web.jsonl &&
	llm-dedup --info --clusters p.idx >c2 && llm-dedup --info --clusters p1.idx >c3 &&
	test_cmp c3 c2
'

test_done
