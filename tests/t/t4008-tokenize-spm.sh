#!/bin/sh
test_description='llm-tokenize: SentencePiece model files (BPE and Unigram) give the ids and texts
of the sentencepiece library, for models spm_train makes of each type and option set'
. "$(dirname "$0")/../lib.sh"

D=$TESTDATA/tokenize
C=$SAMPLES/corpus
CHECK=$D/spm-check.py

# The library's Python module: Debian's python3-sentencepiece may be installed for the system's
# python3 only, beside another python3 first in PATH.
SPM_PY=
for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import sentencepiece' 2>/dev/null; then
		SPM_PY=$py
		break
	fi
done
if test -n "$SPM_PY" && command -v spm_train >/dev/null 2>&1; then
	test_set_prereq SPM
else
	echo "# skipping the comparisons with sentencepiece: spm_train or python3-sentencepiece is missing"
fi

test_expect_success JQ,ZSTD 'a BPE model with byte fallback (KJV, 8k): the 61 reference strings' '
	jq -c "{text}" $D/vectors_spm_kjv_bpe8k.jsonl >kjv.jsonl &&
	llm-tokenize -q -t $D/spm_kjv_bpe8k.model.zst --no-eos -f jsonl kjv.jsonl >kjv.out &&
	jq -c .tokens kjv.out >got && jq -c .ids $D/vectors_spm_kjv_bpe8k.jsonl >want &&
	test_cmp want got &&
	llm-tokenize decode -q -t $D/spm_kjv_bpe8k.model.zst kjv.out | jq -c .text >got.text &&
	jq -c .decoded $D/vectors_spm_kjv_bpe8k.jsonl >want.text && test_cmp want.text got.text
'

test_expect_success JQ,ZSTD 'the token stream of a model: its size, BOS and EOS' '
	llm-tokenize -q -t $D/spm_kjv_bpe8k.model.zst --bos kjv.jsonl -o kjv.tok &&
	llm-tokenize decode -q -t $D/spm_kjv_bpe8k.model.zst --keep-special -f jsonl kjv.tok >k.jsonl &&
	llm-tokenize -q -t $D/spm_kjv_bpe8k.model.zst --bos -f jsonl kjv.jsonl >kb.jsonl &&
	test "$(jq -c ".tokens[0]" kb.jsonl | sort -u)" = 1 &&
	test "$(jq -c ".tokens[-1]" kb.jsonl | sort -u)" = 2 &&
	jq -c .decoded $D/vectors_spm_kjv_bpe8k.jsonl >t1 && jq -c .text k.jsonl >t2 && test_cmp t1 t2
'

test_expect_success 'a model cut short is an error naming the file' '
	zstd -q -d -c $D/spm_kjv_bpe8k.model.zst | head -c 5000 >cut.model &&
	echo "{\"text\": \"a\"}" >a.jsonl &&
	test_must_fail llm-tokenize -q -t cut.model a.jsonl >/dev/null 2>err &&
	test_grep "cut.model: not a SentencePiece model" err &&
	test_must_fail llm-tokenize -q -t $D/spm_kjv_bpe8k.model.zst --pattern o200k a.jsonl 2>err &&
	test_grep "a SentencePiece model takes no pattern" err
'

test_expect_success 'sampling needs a SentencePiece model' '
	{ llm-tokenize -t $D/r50k_base.tiktoken.zst --sample a.jsonl 2>err; test $? = 2; } &&
	test_grep "sampling needs a SentencePiece model" err
'

# Training text (about 300 KB of Wikipedia) and held-apart text: web pages and news, plus
# strings for the normalizer (full-width forms, odd spaces, user-defined symbols, emoji).
test_expect_success JQ,SPM 'setup: training and held-apart text, rule TSV' '
	jq -r .text $C/wiki.jsonl | tr -s "\n" | head -c 300000 >train.txt &&
	{ jq -c "{text}" $C/web.jsonl | head -n 60; jq -c "{text}" $C/news.jsonl | head -n 60;
	  jq -c "{text}" $D/vectors_spm_kjv_bpe8k.jsonl; } >held.jsonl &&
	printf "%s\n" "{\"text\": \"  two   spaces  \"}" "{\"text\": \"@@ the@@thing %ctl% foo\"}" \
		"{\"text\": \"A B AB BA\\u3000x\"}" "{\"text\": \"\\uff21\\uff22 \\u2460 caf\\u00e9\"}" >>held.jsonl &&
	printf "41\t61\n42\t62 20 62\nFF21\t66 75 6C 6C\n3000\t20\n" >rules.tsv
'

# spm_model NAME OPTIONS...: train NAME.model; spm_same NAME: encode and decode held.jsonl
# with it and compare with the library.
spm_model() {
	n=$1 && shift &&
	spm_train --input=train.txt --model_prefix="$n" --vocab_size=1500 --num_threads=1 "$@" \
		>"$n.log" 2>&1 || { tail -n 3 "$n.log"; return 1; }
}
spm_same() {
	llm-tokenize -q -t "$1.model" --no-eos -f jsonl held.jsonl >"$1.ids" &&
	llm-tokenize decode -q -t "$1.model" "$1.ids" >"$1.text" &&
	"$SPM_PY" "$CHECK" ids "$1.model" held.jsonl "$1.ids" "$1.text"
}

while read -r name opts; do
	test_expect_success JQ,SPM "spm_train $opts: ids and text of sentencepiece" "
		spm_model $name $opts && spm_same $name
	"
done <<-\END
	bpe --model_type=bpe
	bpe_bf --model_type=bpe --byte_fallback=true
	bpe_id --model_type=bpe --normalization_rule_name=identity --add_dummy_prefix=false
	bpe_nfkc --model_type=bpe --normalization_rule_name=nfkc --remove_extra_whitespaces=false --user_defined_symbols=@@,foo
	bpe_suf --model_type=bpe --treat_whitespace_as_suffix=true --byte_fallback=true --split_digits=true
	uni --model_type=unigram
	uni_bf --model_type=unigram --byte_fallback=true --normalization_rule_name=nmt_nfkc_cf
	uni_ud --model_type=unigram --user_defined_symbols=@@,the,ing --control_symbols=%ctl% --remove_extra_whitespaces=false
	uni_tsv --model_type=unigram --normalization_rule_tsv=rules.tsv --byte_fallback=true
	uni_suf --model_type=unigram --treat_whitespace_as_suffix=true --add_dummy_prefix=false
END

# The samples of a few words over 200 seeds against the library's 200 draws: the distributions
# agree (total variation distance at most 0.1) over all segmentations and over the 5 best.
# Both sides are seeded, so the outcome is the same on every run.
sample_like_spm() {
	for w in information international understanding; do echo "{\"text\": \"$w\"}"; done >w.jsonl &&
	for s in $(seq 1 200); do
		llm-tokenize -q -t uni.model --no-eos -f jsonl --meta text --sample --nbest "$1" \
			--alpha "$2" --seed "$s" w.jsonl || return 1
	done >ours.jsonl &&
	"$SPM_PY" "$CHECK" tally uni.model ours.jsonl >ours.json &&
	"$SPM_PY" "$CHECK" sample uni.model "$1" "$2" 200 information international understanding \
		>lib.json &&
	"$SPM_PY" "$CHECK" tv ours.json lib.json 0.1
}
test_expect_success SPM '--sample --nbest -1 --alpha 1: the distribution of sentencepiece' '
	sample_like_spm -1 1
'
test_expect_success SPM '--sample --nbest 5 --alpha 0.5: the distribution of sentencepiece' '
	sample_like_spm 5 0.5
'

test_expect_success JQ,SPM '--sample: one seed, the same samples at any thread count; they decode to the text' '
	llm-tokenize -q -t uni.model --no-eos -f jsonl --sample --seed 7 held.jsonl >s1 &&
	llm-tokenize -q -t uni.model --no-eos -f jsonl --sample --seed 7 --threads 3 held.jsonl >s3 &&
	test_cmp s1 s3 &&
	llm-tokenize -q -t uni.model --no-eos -f jsonl --sample --seed 8 held.jsonl >s8 &&
	test_must_fail cmp -s s1 s8 &&
	llm-tokenize decode -q -t uni.model s1 | jq -c .text >d1 &&
	jq -c .text uni.text >d0 && test_cmp d0 d1 &&
	llm-tokenize -q -t uni.model --no-eos -f jsonl --sample --nbest 1 held.jsonl >n1 &&
	test_cmp uni.ids n1
'

test_expect_success JQ,SPM '--sample on a BPE model is BPE-dropout: other merges, the same text' '
	llm-tokenize -q -t bpe.model --no-eos -f jsonl --sample --alpha 0.2 held.jsonl >bd &&
	test_must_fail cmp -s bd bpe.ids &&
	llm-tokenize decode -q -t bpe.model bd | jq -c .text >d1 &&
	jq -c .text bpe.text >d0 && test_cmp d0 d1 &&
	llm-tokenize -q -t bpe.model --no-eos -f jsonl --sample --alpha 0 held.jsonl >b0 &&
	test_cmp bpe.ids b0
'

python3 -c 'import tokenizers' 2>/dev/null && test_set_prereq HF_TOKENIZERS
for bf in 0 1; do
	test_expect_success JQ,SPM,HF_TOKENIZERS "a tokenizer.json Unigram model (byte_fallback $bf): the ids and texts of tokenizers" "
		python3 \"\$CHECK\" hf-train train.txt hfuni$bf.json $bf &&
		llm-tokenize -q -t hfuni$bf.json --no-eos -f jsonl held.jsonl >hfuni$bf.ids &&
		llm-tokenize decode -q -t hfuni$bf.json hfuni$bf.ids >hfuni$bf.text &&
		python3 \"\$CHECK\" hf-ids hfuni$bf.json held.jsonl hfuni$bf.ids hfuni$bf.text
	"
done

test_done
