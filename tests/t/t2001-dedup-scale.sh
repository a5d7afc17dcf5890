#!/bin/sh
test_description='llm-dedup: incremental index and sign/cluster/apply stages equal the single run'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus

# same_index A B: the two index files hold the same clusters (ids and sizes, in order) and
# the same number of bucket entries; the records of the runs that built them may differ.
same_index() {
	for i in "$1" "$2"; do
		llm-dedup --info --clusters "$i" | sed "s/, \"run\": [0-9]*//" >"$i.clusters" &&
		llm-dedup --info "$i" | grep -e "^clusters:" -e "^bucket entries:" >>"$i.clusters" ||
		return 1
	done
	test_cmp "$1.clusters" "$2.clusters"
}

# Two months of data: A and B, with exact and near duplicates within and across them.
test_expect_success 'setup' '
	cat $C/web.jsonl $C/news.jsonl $C/qa.jsonl $C/wiki.jsonl >all &&
	awk "NR % 3 != 0" all >A &&
	awk "NR % 3 == 0" all >B && test -s B &&
	split -l 1500 -d -a 1 all shard. && ls shard.? >shards && test $(wc -l <shards) -gt 2
'

for m in --minhash --exact --simhash "--preset datatrove"; do
	test_expect_success "index: A then B equals A+B ($m)" '
		rm -f idx idx2 &&
		llm-dedup -q $m --index idx --rejects rA A >oA &&
		llm-dedup -q $m --index idx --rejects rB B >oB &&
		llm-dedup -q $m --index idx2 --rejects rAB A B >oAB &&
		cat oA oB >o && cat rA rB >r &&
		test_cmp oAB o && test_cmp rAB r && same_index idx2 idx &&
		grep -q "\"dup_of\"" rB
	'

	test_expect_success "sign/cluster/apply equals the single run ($m)" '
		llm-dedup -q $m --rejects r1 all >o1 &&
		for s in $(cat shards); do llm-dedup sign -q $m -o $s.sig $s || return 1; done &&
		llm-dedup cluster -q $(sed "s/\$/.sig/" shards) &&
		: >o2 && : >r2 &&
		for s in $(cat shards); do
			llm-dedup apply -q --removals $s.rm --rejects rr $s >>o2 || return 1
			cat rr >>r2
		done &&
		test_cmp o1 o2 && test_cmp r1 r2
	'
done

# Bounded memory: a budget far below the tables' size sends the buckets to sorted runs on
# disk; the result must not change, byte for byte, indexes included.
for m in --minhash --exact --simhash --verify; do
	test_expect_success "--memory: sorted runs on disk give the same result ($m)" '
		llm-dedup -q $m --rejects r1 --stats s1 all >o1 &&
		llm-dedup -q $m --memory 64K --rejects r2 --stats s2 all >o2 &&
		test_cmp o1 o2 && test_cmp r1 r2 &&
		grep -q "\"sorted_runs\": 0" s1 && ! grep -q "\"sorted_runs\": [01]}" s2
	'
done

for m in --minhash --exact --simhash; do
	test_expect_success "--memory: index A then B on disk equals A+B in memory ($m)" '
		rm -f idx idx2 &&
		llm-dedup -q $m --memory 64K --index idx A >oA &&
		llm-dedup -q $m --memory 64K --index idx --rejects rB B >oB &&
		llm-dedup -q $m --index idx2 A B >oAB &&
		cat oA oB >o && test_cmp oAB o && same_index idx idx2 &&
		grep -q "\"dup_of\"" rB
	'
done

test_expect_success '--memory: cluster on disk equals cluster in memory' '
	for s in $(cat shards); do llm-dedup sign -q -o $s.sig $s || return 1; done &&
	mkdir -p m1 m2 &&
	llm-dedup cluster -q --outdir m1 $(sed "s/\$/.sig/" shards) &&
	llm-dedup cluster -q --memory 64K --outdir m2 $(sed "s/\$/.sig/" shards) &&
	for s in $(cat shards); do cmp m1/$s.rm m2/$s.rm || return 1; done
'

test_expect_success '--tmpdir: an unusable directory is an error naming it' '
	test_must_fail llm-dedup -q --memory 64K --tmpdir /nonexistent/tmp all >/dev/null 2>err &&
	test_grep "/nonexistent/tmp" err &&
	TMPDIR=/nonexistent/tmp2 test_must_fail llm-dedup -q <all >/dev/null 2>err &&
	test_grep "/nonexistent/tmp2" err
'

test_expect_success 'scale-out with an index and --outdir, and --annotate on apply' '
	rm -f idx idx2 && mkdir -p rm &&
	llm-dedup -q --index idx A >/dev/null &&
	llm-dedup -q --index idx2 A >/dev/null &&
	llm-dedup -q --index idx --annotate B >expect &&
	llm-dedup sign -q -o B.sig B && llm-dedup cluster -q --index idx2 --outdir rm B.sig &&
	llm-dedup apply -q --annotate --removals rm/B.rm B >out &&
	test_cmp expect out && same_index idx idx2
'

test_expect_success 'verification also works through the stages' '
	llm-dedup -q --verify --rejects r1 all >o1 &&
	for s in $(cat shards); do llm-dedup sign -q --verify -o $s.sig $s || return 1; done &&
	llm-dedup cluster -q $(sed "s/\$/.sig/" shards) &&
	: >o2 && for s in $(cat shards); do llm-dedup apply -q --removals $s.rm $s >>o2 || return 1; done &&
	test_cmp o1 o2
'

test_expect_success 'compressed signature files work and name NAME.rm' '
	llm-dedup -q --rejects r1 A >o1 &&
	llm-dedup sign -q -o A.sig.zst A && llm-dedup cluster -q A.sig.zst && test -s A.rm &&
	llm-dedup apply -q --removals A.rm --rejects r2 A >o2 &&
	test_cmp o1 o2 && test_cmp r1 r2
'

test_expect_success 'a removal list refuses the wrong shard' '
	last=$(tail -n 1 shards) &&
	test_must_fail llm-dedup apply -q --removals shard.0.rm $last >out 2>err &&
	test_grep "removal list is for" err
'

test_expect_success 'damaged or foreign files are refused with their name' '
	llm-dedup -q --index idx3 A >/dev/null &&
	cp idx3 bad && printf "\001" | dd of=bad bs=1 seek=100 conv=notrunc 2>/dev/null &&
	test_must_fail llm-dedup -q --index bad B >/dev/null 2>err && test_grep "bad: index checksum" err &&
	test_must_fail llm-dedup -q --simhash --index idx3 B >/dev/null 2>err2 &&
	test_grep "other dedup parameters" err2 &&
	head -c 50 shard.0.sig >short.sig &&
	test_must_fail llm-dedup cluster -q short.sig 2>err3 && test_grep "short.sig" err3 &&
	test_must_fail llm-dedup apply -q --removals A A >/dev/null 2>err4 && test_grep "not a removal list" err4 &&
	llm-dedup sign -q --exact -o ex.sig shard.1 &&
	test_must_fail llm-dedup cluster -q shard.0.sig ex.sig 2>err5 && test_grep "other parameters" err5
'

test_expect_success 'stage usage errors exit 2' '
	test_must_fail --code=2 llm-dedup sign A &&
	test_must_fail --code=2 llm-dedup cluster &&
	test_must_fail --code=2 llm-dedup apply A &&
	test_must_fail --code=2 llm-dedup --outdir x A
'

test_done
