#!/bin/sh
test_description='llm-eval: loss equals the trainer'"'"'s, shards equal documents, choice, generation, compare'
. "$(dirname "$0")/../lib.sh"

# One thread: these models are too small for threads to help, and a loaded machine makes
# OpenBLAS's waiting threads cost more than the products.
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

# The first N English documents of each domain, text cut to 3 kB: a corpus that trains a tiny
# model for a few steps in a second.
test_expect_success JQ 'setup: tokenizer, shards and a tiny trained run' '
	for d in books legal qa web wiki; do
		jq -c "select(.lang == \"en\") | .text |= .[0:1000]" "$SAMPLES/corpus/$d.jsonl" |
			head -n 16 || exit 1
	done >docs.jsonl &&
	llm-tokenize train -q --vocab-size 384 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json docs.jsonl >docs.tok &&
	llm-shard -q --val-fraction 0.25 --tokenizer tok.json -o shards docs.tok &&
	awk "NR % 8 == 1" docs.jsonl >few.jsonl &&
	llm-tokenize -q -t tok.json few.jsonl | llm-shard -q --val-fraction 0 --tokenizer tok.json -o few &&
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 8 --warmup 2 \
		--lr 3e-3 --eval-every 4 --eval-batches 3 --ckpt-every 4 --keep 0 --run-dir run &&
	test -d run/ckpt/step-0000004 && test -d run/ckpt/step-0000008
'

test_expect_success JQ 'loss on the trainer'"'"'s validation batches equals its val_loss' '
	for s in 4 8; do
		llm-eval loss -q --ckpt run/ckpt/step-000000$s --sampled 3 --json l$s.json shards ||
			exit 1
		want=$(jq -r "select(.step == $s) | .val_loss" run/metrics.jsonl) &&
		got=$(jq -r .all.loss l$s.json) &&
		echo "step $s: llm-train $want, llm-eval $got" &&
		awk -v a="$want" -v b="$got" "BEGIN { d = a - b; exit !(d < 2e-6 * a && -d < 2e-6 * a) }" ||
			exit 1
	done &&
	test "$(jq -r .all.tokens l8.json)" = $((3 * 4 * 32)) &&
	test "$(jq -r .mode l8.json)" = sampled
'

test_expect_success JQ 'val split: every token once, per domain, bits per byte' '
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --json v.json shards >v.out &&
	test "$(jq -r .all.tokens v.json)" = "$(jq -r .splits.val.tokens shards/manifest.json)" &&
	test "$(jq -r .all.documents v.json)" = "$(jq -r .splits.val.documents shards/manifest.json)" &&
	for d in $(jq -r ".domains | keys[]" shards/manifest.json); do
		test "$(jq -r ".domains.$d.val_tokens" shards/manifest.json)" = \
			"$(jq -r ".domains.$d.tokens // 0" v.json)" || exit 1
	done &&
	grep "^all  " v.out && test "$(jq -r .step v.json)" = 8 &&
	jq -e ".all.bits_per_byte > 0 and .all.bytes > 0 and .all.ppl > 1" v.json
'

test_expect_success JQ 'documents give what their shards give; bytes are the text bytes' '
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --split train --json s.json few >s.out &&
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --json d.json few.jsonl >d.out &&
	test_cmp s.out d.out &&
	test "$(jq -r .all.tokens s.json)" = "$(jq -r .splits.train.tokens few/manifest.json)" &&
	test "$(jq -r .all.bytes d.json)" = "$(jq -j .text few.jsonl | wc -c)" &&
	llm-eval loss -q --ckpt run --seq-len 32 --split train few >nobytes.out &&
	grep "^all .* -$" nobytes.out &&
	awk "{ \$NF = \"\"; print }" s.out >a && awk "{ \$NF = \"\"; print }" nobytes.out >b && test_cmp a b
'

test_expect_success JQ 'deterministic, whatever the batch' '
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --batch 3 --json b3.json shards >b3.out &&
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --batch 3 --json b3b.json shards &&
	jq -c "del(.seconds)" b3.json >x && jq -c "del(.seconds)" b3b.json >y && test_cmp x y &&
	test_cmp v.out b3.out
'

# script(1) gives the command a terminal: the progress line is drawn only there.
command -v script >/dev/null 2>&1 && test_set_prereq SCRIPT

test_expect_success SCRIPT 'loss: progress on a terminal (tokens, rate, share and ETA), none with -q' '
	script -qec "llm-eval loss --ckpt run -t tok.json --seq-len 32 shards" /dev/null >tty.out &&
	grep "llm-eval: [0-9.k]* tokens, [0-9.k]* tokens/s, shards/.*val-[0-9]*\.bin [0-9]*% ETA" tty.out &&
	grep "^all .* 4\.[0-9]*" tty.out &&
	script -qec "llm-eval loss --ckpt run -t tok.json --seq-len 32 few.jsonl" /dev/null >doc.out &&
	grep "llm-eval: [0-9.k]* tokens, [0-9.k]* tokens/s" doc.out &&
	script -qec "llm-eval loss -q --ckpt run -t tok.json --seq-len 32 shards" /dev/null >q.out &&
	grep "^all " q.out && ! grep "tokens/s" q.out &&
	llm-eval loss --ckpt run -t tok.json --seq-len 32 shards >out 2>err &&
	grep "tokens in .* s (" err && ! grep "tokens, .* tokens/s" err
'

test_expect_success 'documents from stdin; malformed lines warn, count and fail' '
	printf "%s\n" "{\"text\": \"one two\", \"domain\": \"a\"}" "{bad" "{\"x\": 1}" \
		"{\"text\": \"three\"}" >bad.jsonl &&
	test_must_fail llm-eval loss --ckpt run -t tok.json --json bad.json <bad.jsonl >out 2>err &&
	test_grep "<stdin>:2: " err && test_grep "<stdin>:3: no text field" err &&
	grep "^a  " out && grep "^unknown  " out && test "$(grep -c ": skipped$" err)" = 2 &&
	! test -e bad.json && test_grep "bad.json not written" err &&
	test_must_fail llm-eval loss --strict --ckpt run -t tok.json bad.jsonl 2>err &&
	test_grep "bad.jsonl:2: " err &&
	printf "" | llm-eval loss -q --ckpt run -t tok.json >empty.out &&
	grep "^all  *0  *0 " empty.out &&
	printf "{\"text\": \"no newline\"}" | llm-eval loss -q --ckpt run -t tok.json >nl.out &&
	grep "^unknown  *1 " nl.out &&
	printf "{\"text\": \"crlf\"}\r\n" | llm-eval loss -q --ckpt run -t tok.json >cr.out &&
	grep "^unknown  *1 " cr.out &&
	printf "{\"text\": \"\377\376\"}\n{\"text\": \"%0300d\"}\n{\"text\": \"ok\"}\n" 0 >odd.jsonl &&
	test_must_fail llm-eval loss --ckpt run -t tok.json --max-line 200 --json odd.json odd.jsonl \
		>odd.out 2>err &&
	test_grep "odd.jsonl:1: " err && test_grep "odd.jsonl:2: line over --max-line" err &&
	test "$(grep -c ": skipped$" err)" = 2 && ! test -e odd.json && grep "^unknown  *1 " odd.out
'

test_expect_success JQ 'loss --rejects: every malformed line with its reason; in = scored + rejected' '
	llm-eval loss --ckpt run -t tok.json --max-line 200 --rejects rej.jsonl --json ok.json \
		bad.jsonl odd.jsonl >out 2>err &&
	jq -r "[.reject_reason, .source // \"-\", .line // \"-\"] | join(\" \")" rej.jsonl >got &&
	printf "%s\n" "bad_json bad.jsonl 2" "no_text - -" "bad_json odd.jsonl 1" \
		"too_long odd.jsonl 2" >want &&
	test_cmp want got &&
	test "$(jq -c "select(.reject_reason == \"no_text\") | del(.error)" rej.jsonl)" = \
		"{\"x\":1,\"reject_reason\":\"no_text\"}" &&
	test "$(jq -r "select(.reject_reason == \"too_long\") | .length" rej.jsonl)" = 312 &&
	test "$(jq -r .all.documents ok.json)" = 3 && test "$(jq -r .skipped ok.json)" = 4 &&
	test_grep "7 in, 3 out, 4 rejected (bad_json 2, no_text 1, too_long 1)" err &&
	test_must_fail llm-eval loss --strict --ckpt run -t tok.json --rejects strict.jsonl \
		bad.jsonl 2>err &&
	test_grep "bad.jsonl:2: " err && ! test -e strict.jsonl &&
	llm-eval loss -q --ckpt run -t tok.json --rejects none.jsonl --seq-len 32 shards >/dev/null &&
	test -f none.jsonl && ! test -s none.jsonl
'

test_expect_success 'a Hugging Face directory evaluates like the checkpoint it came from' '
	mkdir hf && cp run/ckpt/step-0000008/config.json run/ckpt/step-0000008/model.safetensors hf/ &&
	llm-eval loss -q --ckpt hf -t tok.json --seq-len 32 shards >hf.out &&
	test_cmp v.out hf.out
'

test_expect_success JQ 'choice: the shipped task' '
	llm-eval choice -q --ckpt run -t tok.json --json c.json \
		"$SAMPLES/eval/next-sentence.jsonl" >c.out &&
	test "$(jq -r .all.items c.json)" = "$(wc -l <"$SAMPLES/eval/next-sentence.jsonl")" &&
	test "$(jq -r .skipped c.json)" = 0 &&
	jq -e ".all.acc >= 0 and .all.acc <= 1 and .all.acc_norm >= 0 and .all.acc_norm <= 1" c.json &&
	for d in books legal qa web wiki; do grep "^$d  " c.out || exit 1; done &&
	cat c.out
'

test_expect_success JQ 'choice: accuracy counts the gold index; malformed items' '
	head -n 20 "$SAMPLES/eval/next-sentence.jsonl" >t20.jsonl &&
	llm-eval choice -q --ckpt run -t tok.json --json a.json t20.jsonl &&
	cp t20.jsonl t21.jsonl &&
	# each item is right under exactly one of the four gold indices
	total=0 && for k in 0 1 2 3; do
		jq -c ".gold = (.gold + $k) % 4" t20.jsonl >shift.jsonl &&
		llm-eval choice -q --ckpt run -t tok.json --json s$k.json shift.jsonl &&
		n=$(jq -r ".all.acc * 20 | round" s$k.json) && total=$((total + n)) || exit 1
	done && test $total = 20 &&
	test "$(jq .all.acc s0.json)" = "$(jq .all.acc a.json)" &&
	printf "%s\n" "{\"context\": \"a\", \"choices\": [\"b\"], \"gold\": 0}" >>t21.jsonl &&
	test_must_fail llm-eval choice --ckpt run -t tok.json t21.jsonl >out 2>err &&
	test_grep "t21.jsonl:21: 1 choices (at least 2)" err &&
	test_must_fail llm-eval choice --strict --ckpt run -t tok.json t21.jsonl 2>err
'

test_expect_success JQ 'choice --no-prefix: no start token; an empty context then fails' '
	llm-eval choice -q --ckpt run -t tok.json --no-prefix --json np.json t20.jsonl &&
	test "$(jq -r .all.items np.json)" = 20 &&
	printf "%s\n" "{\"context\": \"\", \"choices\": [\"b\", \"c\"], \"gold\": 0}" >empty.jsonl &&
	llm-eval choice -q --ckpt run -t tok.json empty.jsonl &&
	test_must_fail llm-eval choice --ckpt run -t tok.json --no-prefix empty.jsonl 2>err &&
	test_grep "empty context needs a prefix token" err
'

test_expect_success JQ 'choice and compare --rejects: each bad item once, with its reason' '
	cp t21.jsonl t22.jsonl &&
	printf "%s\n" "{bad" "{\"context\": \"\", \"choices\": [\"b\", \"c\"], \"gold\": 0}" >>t22.jsonl &&
	llm-eval choice --ckpt run -t tok.json --no-prefix --rejects crej.jsonl --json cc.json \
		t22.jsonl >out 2>err &&
	jq -r "[.reject_reason, .error] | join(\": \")" crej.jsonl >got &&
	printf "%s\n" "bad_item: 1 choices (at least 2)" "bad_json: byte 1: expected string key" \
		"unscorable: an empty context needs a prefix token" >want &&
	test_cmp want got &&
	test "$(jq -r .all.items cc.json)" = 20 && test "$(jq -r .skipped cc.json)" = 3 &&
	test_grep "23 in, 20 out, 3 rejected (bad_item 1, bad_json 1, unscorable 1)" err &&
	test_must_fail llm-eval choice -q --ckpt run -t tok.json --no-prefix t22.jsonl >/dev/null &&
	llm-eval compare -q --data shards -t tok.json --seq-len 32 --no-prefix --task t22.jsonl \
		--rejects cmprej.jsonl run/ckpt/step-* >/dev/null &&
	test_cmp crej.jsonl cmprej.jsonl &&
	test_must_fail --code=2 llm-eval choice --ckpt run -t tok.json --json same.json \
		--rejects same.json t22.jsonl 2>err &&
	test_grep "same file" err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --sampled 3 --rejects r.jsonl shards 2>err &&
	test_grep "sampled" err
'

gen() { llm-eval generate -q --ckpt run -t tok.json --prompt "The King said" --max-tokens 24 "$@"; }

test_expect_success 'generation: a seed fixes it, greedy is temperature 0, the cache changes nothing' '
	gen --seed 7 --ids >s7a && gen --seed 7 --ids >s7b && test_cmp s7a s7b &&
	gen --seed 8 --ids >s8 && ! cmp -s s7a s8 &&
	gen --seed 7 --ids --no-cache >s7n && test_cmp s7a s7n &&
	gen --seed 7 --ids --top-k 5 --top-p 0.9 --temperature 0.7 >k && test -s k &&
	gen --seed 7 --ids --top-k 5 --top-p 0.9 --temperature 0.7 --no-cache >kn && test_cmp k kn &&
	gen --temperature 0 --ids >g0 && gen --temperature 0 --ids --seed 99 >g1 && test_cmp g0 g1 &&
	gen --temperature 3 --top-k 1 --ids >gk && test_cmp g0 gk &&
	gen --temperature 0 --ids --no-cache >gn && test_cmp g0 gn &&
	test "$(wc -w <g0)" = 24 &&
	gen --temperature 0 >text && test -s text
'

test_expect_success JQ 'generation JSON carries the tokens and their text' '
	gen --temperature 0 --json g.json >text2 &&
	test "$(jq -r ".tokens | map(tostring) | join(\" \")" g.json)" = "$(cat g0)" &&
	test "$(jq -j .text g.json)" = "$(cat text2)"
'

test_expect_success JQ 'compare: one row per checkpoint, as text and JSON' '
	llm-eval compare -q --data shards -t tok.json --seq-len 32 --task t20.jsonl \
		--json cmp.json run/ckpt/step-* >cmp.out &&
	cat cmp.out && test_line_count = 3 cmp.out &&
	awk "NR > 1 { print \$1, \$2 }" cmp.out >steps && printf "4 512\n8 1024\n" >want &&
	test_cmp want steps &&
	test "$(jq -r ".[1].val.loss" cmp.json)" = "$(jq -r .all.loss v.json)" &&
	test "$(jq -r ".[1].choice.acc" cmp.json)" = "$(jq -r .all.acc a.json)" &&
	jq -e ".[0].val.loss > .[1].val.loss" cmp.json
'

test_expect_success 'the EXAMPLES of the man page run' '
	ln -s "$SAMPLES" samples &&
	sed -n "/^\.Sh EXAMPLES/,/^\.Sh SEE/p" "$TOP/man/man1/llm-eval.1" | grep "^llm-eval " >examples &&
	test_line_count = 8 examples &&
	while read -r cmd; do
		eval "$cmd -q" >/dev/null || { echo "failed: $cmd"; exit 1; }
	done <examples
'

test_expect_success 'usage errors exit 2' '
	test_must_fail --code=2 llm-eval 2>err && test_grep "a command is required" err &&
	test_must_fail --code=2 llm-eval frobnicate 2>err && test_grep "unknown command" err &&
	test_must_fail --code=2 llm-eval loss --bogus 2>err &&
	test_must_fail --code=2 llm-eval loss shards 2>err && test_grep "needs --ckpt" err &&
	test_must_fail --code=2 llm-eval generate --ckpt run -t tok.json 2>err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --top-p 0 2>err &&
	test_must_fail --code=2 llm-eval compare --data shards 2>err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --seq-len 100000 shards 2>err &&
	test_grep "max_position_embeddings" err
'

test_expect_success NOT_ROOT 'runtime errors exit 1 and name the file' '
	test_must_fail llm-eval loss --ckpt nowhere shards 2>err && test_grep "nowhere" err &&
	test_must_fail llm-eval loss --ckpt run -t tok.json missing.jsonl 2>err &&
	test_grep "missing.jsonl" err &&
	printf "{}" >unreadable.jsonl && chmod 000 unreadable.jsonl &&
	test_must_fail llm-eval loss --ckpt run -t tok.json unreadable.jsonl 2>err &&
	test_grep "unreadable.jsonl" err
'

test_expect_success 'stdout to a full disk, --json to nowhere: exit 1 with a message' '
	test_must_fail llm-eval loss --ckpt run --seq-len 32 shards >/dev/full 2>err &&
	test_grep "write error" err &&
	test_must_fail llm-eval loss --ckpt run --seq-len 32 --json no/such/dir/x.json shards 2>err &&
	test_grep "no/such/dir" err
'

test_expect_success 'a tokenizer other than the shards'"'"' is refused for bits per byte' '
	llm-tokenize train -q --vocab-size 300 -o other.json docs.jsonl &&
	test_must_fail llm-eval loss --ckpt run -t other.json shards 2>err &&
	test_grep "tokenizer id" err
'

test_expect_success JQ 'the tokenizer a run keeps: choice and generate need no -t' '
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 2 --warmup 1 \
		--eval-every 0 --tokenizer tok.json --run-dir runtok &&
	cmp tok.json runtok/tokenizer.json &&
	llm-eval generate -q --ckpt runtok --prompt "The law" --temperature 0 --ids >g1 &&
	llm-eval generate -q --ckpt runtok -t tok.json --prompt "The law" --temperature 0 --ids >g2 &&
	test_cmp g1 g2 &&
	task=$SAMPLES/eval/next-sentence.jsonl &&
	llm-eval choice -q --ckpt runtok/ckpt/step-0000002 --json c1.json "$task" >/dev/null &&
	llm-eval choice -q --ckpt runtok -t tok.json --json c2.json "$task" >/dev/null &&
	test "$(jq -c .all c1.json)" = "$(jq -c .all c2.json)" &&
	test_must_fail --code=2 llm-eval generate --ckpt run --prompt x 2>err &&
	test_grep "generate needs -t: no tokenizer.json beside run/ckpt/latest" err &&
	test_must_fail --code=2 llm-train -q --data shards --model tiny --steps 1 \
		--tokenizer other.json --run-dir rt2 2>err &&
	test_grep "other.json: tokenizer id [0-9a-f]*, but the shards were made with" err
'

test_expect_success JQ 'JSONL scored with a tokenizer the checkpoint was not trained with: exit 1' '
	jq -c ".text |= ascii_downcase" docs.jsonl >lower.jsonl &&
	llm-tokenize train -q --vocab-size 384 -o same-size.json lower.jsonl &&
	test_must_fail llm-eval loss --ckpt run -t same-size.json docs.jsonl 2>err &&
	test_grep "same-size.json: tokenizer id [0-9a-f]*, but run/ckpt/latest was trained with" err &&
	test_must_fail llm-eval choice --ckpt run -t same-size.json "$SAMPLES/eval/next-sentence.jsonl" 2>err &&
	test_grep "was trained with" err
'

test_done
