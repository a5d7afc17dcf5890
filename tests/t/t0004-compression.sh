#!/bin/sh
test_description='every tool reads zstd, gzip, xz and bzip2 input, checks their checksums, and writes them by name'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
TOK=$TESTDATA/tokenize/r50k_base.tiktoken.zst
command -v xz >/dev/null 2>&1 && test_set_prereq XZ
command -v bzip2 >/dev/null 2>&1 && test_set_prereq BZIP2
command -v pzstd >/dev/null 2>&1 && test_set_prereq PZSTD
test_have_prereq ZSTD,GZIP,XZ,BZIP2,PZSTD && test_set_prereq CODECS

# compress FMT FILE: FILE.FMT, with the reference tool of that format.
compress() {
	case $1 in
	gz) gzip -c "$2" ;;
	xz) xz -c "$2" ;;
	bz2) bzip2 -c "$2" ;;
	zst) zstd -q -c "$2" ;;
	pzst) pzstd -q -c "$2" ;;  # starts with a skippable frame
	esac >"$2.$1"
}
# decompress FILE: standard output, by the reference tool its suffix names.
decompress() {
	case $1 in
	*.gz) gzip -dc "$1" ;;
	*.xz) xz -dc "$1" ;;
	*.bz2) bzip2 -dc "$1" ;;
	*.zst) zstd -q -dc "$1" ;;
	esac
}
FORMATS="gz xz bz2 zst pzst"

# run_tool TOOL INPUT: the tool's output for INPUT on stdout (a dump for llm-shard).
run_tool() {
	case $1 in
	cat) llm-cat -q "$2" ;;
	clean) llm-clean -q "$2" ;;
	dedup) llm-dedup -q "$2" ;;
	tox) llm-tox -q "$2" ;;
	tokenize) llm-tokenize -q -t $TOK "$2" ;;
	noise) llm-noise -q --seed 1 "$2" ;;
	shard) rm -rf sh.d && llm-shard -q -o sh.d --eos 50256 "$2" &&
	       llm-shard --dump sh.d/manifest.json ;;
	esac
}
input_of() { case $1 in noise|shard) echo docs.tok ;; *) echo docs.jsonl ;; esac; }

test_expect_success CODECS 'setup: documents, their tokens, and every compressed form of both' '
	{ head -n 40 $C/wiki.jsonl; head -n 40 $C/news.jsonl; head -n 20 $C/web.jsonl; } >docs.jsonl &&
	llm-tokenize -q -t $TOK docs.jsonl -o docs.tok &&
	for f in $FORMATS; do compress $f docs.jsonl && compress $f docs.tok || exit 1; done &&
	od -A n -t x1 -N 4 docs.jsonl.pzst | grep "50 2a 4d 18"
'

for t in cat clean dedup tox tokenize noise shard; do
	test_expect_success CODECS "llm-$t reads zstd (with a skippable frame), gzip, xz and bzip2" "
		in=\$(input_of $t) &&
		run_tool $t \$in >plain.out && test -s plain.out &&
		for f in $FORMATS; do
			run_tool $t \$in.\$f >got.out && cmp plain.out got.out || exit 1
		done
	"
done

# Stored (level 0) deflate blocks keep the data as is, so damage to it decodes "fine": only the
# CRC-32 in the member's trailer can tell, as with a gzip file damaged on disk. The damaged byte
# is one of the first document's text (a letter changes case) or of its first token (the id
# changes by one), so every tool reads on to the trailer.
test_expect_success CODECS,PYTHON 'a gzip member whose data does not match its CRC is an error for every tool' '
	python3 - docs.jsonl docs.tok <<-\EOF &&
	import gzip, sys
	def damage(src, dst, at, bit):
	    raw = open(src, "rb").read()
	    z = bytearray(gzip.compress(raw, compresslevel=0, mtime=0))
	    z[z.index(raw[:64]) + at] ^= bit
	    open(dst, "wb").write(z)
	docs = open(sys.argv[1], "rb").read()
	damage(sys.argv[1], "bad.jsonl.gz", docs.index(b"\"text\": \"") + 12, 0x20)
	tok = open(sys.argv[2], "rb").read()
	meta = int.from_bytes(tok[36:40], "little")
	damage(sys.argv[2], "bad.tok.gz", 32 + 8 + meta, 0x01)
	EOF
	test_must_fail gzip -t bad.jsonl.gz 2>/dev/null && test_must_fail gzip -t bad.tok.gz 2>/dev/null &&
	for t in cat clean dedup tox tokenize noise shard; do
		case $t in noise|shard) in=bad.tok.gz ;; *) in=bad.jsonl.gz ;; esac
		test_must_fail run_tool $t $in >out 2>err &&
		test_grep "$in: corrupt gzip stream: incorrect data check" err || exit 1
	done
'

test_expect_success CODECS 'a gzip trailer with the wrong length is an error' '
	cp docs.jsonl.gz len.gz && n=$(wc -c <len.gz) &&
	printf "\001" | dd of=len.gz bs=1 seek=$((n - 2)) conv=notrunc 2>/dev/null &&
	test_must_fail llm-clean -q len.gz >out 2>err &&
	test_grep "len.gz: corrupt gzip stream: incorrect length check" err
'

test_expect_success CODECS 'damaged zstd, xz and bzip2 data fail their checksums, naming the file' '
	for f in zst xz bz2; do
		cp docs.jsonl.$f bad.$f && n=$(wc -c <bad.$f) &&
		# zstd: the frame ends with its content checksum; xz, bzip2: inside the block
		case $f in
		zst) at=$((n - 1)) why="checksum" ;;
		xz) at=$((n / 2)) why="damaged data or failed integrity check" ;;
		bz2) at=$((n / 2)) why="CRC" ;;
		esac &&
		printf "\125" | dd of=bad.$f bs=1 seek=$at conv=notrunc 2>/dev/null &&
		test_must_fail llm-cat -q bad.$f >out 2>err &&
		test_grep "^llm-cat: bad.$f: corrupt .* stream: .*$why" err || exit 1
	done
'

test_expect_success CODECS 'a truncated stream of any format is an error, not a short read' '
	for f in gz xz bz2 zst; do
		n=$(wc -c <docs.jsonl.$f) && head -c $((n - 3)) docs.jsonl.$f >cut.$f &&
		test_must_fail llm-cat -q cut.$f >out 2>err &&
		test_grep "^llm-cat: cut.$f: truncated .* stream" err || exit 1
	done
'

test_expect_success CODECS 'concatenated members read as one stream; NUL padding is allowed, garbage is not' '
	cat docs.jsonl.gz docs.jsonl.gz >two.gz && cat docs.jsonl docs.jsonl >two.jsonl &&
	llm-cat -q two.gz >a && llm-cat -q two.jsonl >b && test_cmp b a &&
	for f in xz bz2 zst; do
		cat docs.jsonl.$f docs.jsonl.$f >two.$f && llm-cat -q two.$f >c && test_cmp b c || exit 1
	done &&
	{ cat docs.jsonl.gz && printf "\0\0\0\0"; } >pad.gz && llm-cat -q pad.gz >d &&
	llm-cat -q docs.jsonl >e && test_cmp e d &&
	{ cat docs.jsonl.gz && printf "junk"; } >junk.gz &&
	test_must_fail llm-cat -q junk.gz >out 2>err &&
	test_grep "junk.gz: corrupt gzip stream: data after the last member" err
'

test_expect_success CODECS 'compressed standard input is detected too' '
	llm-clean -q <docs.jsonl.xz >a && llm-clean -q docs.jsonl >b && test_cmp b a
'

for f in gz xz bz2 zst; do
	test_expect_success CODECS "-o NAME.$f writes what the $f tool reads back, in every tool" "
		llm-cat -q docs.jsonl -o cat.jsonl.$f && decompress cat.jsonl.$f >got &&
		llm-cat -q docs.jsonl | cmp - got &&
		llm-clean -q docs.jsonl -o clean.jsonl.$f --rejects rej.jsonl.$f &&
		decompress clean.jsonl.$f >got && llm-clean -q docs.jsonl | cmp - got &&
		decompress rej.jsonl.$f >/dev/null &&
		llm-dedup -q docs.jsonl -o dedup.jsonl.$f && decompress dedup.jsonl.$f >got &&
		llm-dedup -q docs.jsonl | cmp - got &&
		llm-tox -q docs.jsonl -o tox.jsonl.$f && decompress tox.jsonl.$f >got &&
		llm-tox -q docs.jsonl | cmp - got &&
		llm-tokenize -q -t $TOK docs.jsonl -o tok.$f && decompress tok.$f | cmp - docs.tok &&
		llm-noise -q --seed 1 docs.tok -o noise.$f && decompress noise.$f >got &&
		llm-noise -q --seed 1 docs.tok | cmp - got &&
		rm -rf d && llm-shard -q -o d --eos 50256 docs.tok &&
		llm-shard --dump d/manifest.json -o dump.$f && decompress dump.$f >got &&
		llm-shard --dump d/manifest.json | cmp - got
	"
done

test_expect_success CODECS 'compressed output is a function of the data alone' '
	for f in gz xz bz2 zst; do
		llm-cat -q docs.jsonl -o one.$f && llm-cat -q docs.jsonl -o two.$f && cmp one.$f two.$f ||
			exit 1
	done
'

test_done
