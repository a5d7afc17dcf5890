# bench/tokenize_data.sh — the text bench/tokenize.sh and bench/tokenize_spm.sh time (sourced
# after bench/lib.sh): ~10 MB of text per language (lang en / zh*), documents in corpus order.
if [ ! -s "$W/tok-en.jsonl" ] || [ ! -s "$W/tok-zh.jsonl" ]; then
	python3 - "$TOP/samples/corpus" "$W" <<-\PY
	import glob, json, sys
	src, out = sys.argv[1], sys.argv[2]
	sel = {"en": [], "zh": []}
	size = {"en": 0, "zh": 0}
	for f in sorted(glob.glob(src + "/*.jsonl")):
	    for line in open(f, encoding="utf-8"):
	        d = json.loads(line)
	        l = "zh" if str(d.get("lang", "")).startswith("zh") else d.get("lang")
	        if l in sel and size[l] < 10e6:
	            sel[l].append(line)
	            size[l] += len(d["text"].encode())
	for l in sel:
	    open(f"{out}/tok-{l}.jsonl", "w", encoding="utf-8").writelines(sel[l])
	PY
fi
