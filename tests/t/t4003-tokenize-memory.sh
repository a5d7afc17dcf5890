#!/bin/sh
test_description='llm-tokenize: peak memory bounded by its batches, not by the length of the stream'
. "$(dirname "$0")/../lib.sh"

# With one thread llm-tokenize reads into a ring of 4 batches. Each round below is a 5 MB
# document (from the samples' books), alone in its batch, then 8 batches of 1024 short ones,
# so the large document lands in the next batch of the ring each round. When a batch kept
# the buffers of the largest document it held, the peak grew by 8 MB a round until every
# batch had held one. Peak RSS (getrusage of the child) for 8 rounds must stay within 8 MB
# of that for 1.
gen() {
	python3 -c 'import json, sys
book = json.loads(open(sys.argv[2]).readline())["text"]
big = (book * (5000000 // len(book) + 1))[:5000000]
for r in range(int(sys.argv[1])):
    print(json.dumps({"id": "big-%d" % r, "text": big}, ensure_ascii=False))
    for i in range(8 * 1024):
        print(json.dumps({"id": "%d-%d" % (r, i), "text": "A short line of text, here."}))' \
		"$1" "$SAMPLES/corpus/books.jsonl"
}
peak() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		llm-tokenize -q -t "$TESTDATA/tokenize/r50k_base.tiktoken.zst" "$1" -o /dev/null
}

test_expect_success NO_SAN 'peak memory does not grow with the number of large documents' '
	gen 1 >one.jsonl && gen 8 >eight.jsonl &&
	a=$(peak one.jsonl) && b=$(peak eight.jsonl) &&
	echo "peak RSS: $a KiB for 1 round, $b KiB for 8" &&
	test $((b - a)) -lt 8192
'

test_done
