#!/bin/sh
test_description='llm-clean: peak memory bounded by --batch, not by the length of the stream'
. "$(dirname "$0")/../lib.sh"

# Batch b of 64 KiB holds b short documents and then a large one (85 KB, from the samples),
# so the large document lands in a new slot each batch: when a slot kept its largest output
# buffer, the peak grew by 85 KB a batch (11 MB for 60 batches, 41 MB for 400). Peak RSS
# (getrusage of the child) of 400 batches must stay within 4 MB of that of 60.
gen() {
	python3 -c 'import json, sys
big = next(json.loads(l) for l in open(sys.argv[2]) if "\"debian-reference:ch01.en.html\"" in l)
for b in range(int(sys.argv[1])):
    for i in range(b):
        print(json.dumps({"id": "%d-%d" % (b, i), "text": "A short line of text, here."}))
    big["id"] = "%d-big" % b
    print(json.dumps(big, ensure_ascii=False))' "$1" "$SAMPLES/corpus/web.jsonl"
}
peak() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		llm-clean -q --filters none --batch 64K --rejects rejects.jsonl "$1" -o /dev/null
}

test_expect_success NO_SAN 'peak memory does not grow with the number of batches' '
	gen 60 >short.jsonl && gen 400 >long.jsonl &&
	a=$(peak short.jsonl) && b=$(peak long.jsonl) &&
	echo "peak RSS: $a KiB for 60 batches, $b KiB for 400" &&
	test $((b - a)) -lt 4096
'

test_done
