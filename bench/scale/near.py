#!/usr/bin/env python3
"""Near-duplicate recall of a bench-scale run by Jaccard similarity, language and edit.

  near.py WORKDIR [N] [REJECTS...]

For N near copies (default 3000, taken in truth order) whose original also left the clean
stage: the exact Jaccard similarity of the pair's shingle sets (5-unit shingles of the text
normalised as lib/dedup/shingle.h says: lower case, full-width ASCII folded, punctuation
removed, digit runs as "0", white space runs as one space) with the units of the run's
--preset datatrove, runs of non-space characters ("word"), and with --units auto's, where
a run of Han characters is cut into words by jieba (the segmenter llm-dedup reproduces);
which of the generator's edits the copy shows; and whether dedup put the two in one
cluster (a document removed belongs to the cluster of its dup_of). REJECTS (default the
run's dedup/*.rejects.jsonl.zst) can name the rejects of another dedup run over the same
clean output. Prints, per band of word-unit Jaccard, per language and per edit, the pairs,
the recall, and the recall that 14 bands of 8 rows predict, 1 - (1 - J^8)^14, averaged
over the pairs: recall below the prediction would be dedup missing what it should find;
recall at the prediction with many pairs at low J is the edits being too heavy for the
layout and units.
"""
import glob
import json
import re
import subprocess
import sys
import unicodedata

BANDS = [0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01]
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")
KANA = re.compile(r"[\u3040-\u30ff]")
DIGITS = re.compile(r"\d+")
SPACE = re.compile(r"\s+")


def _table():
    t = {}
    for o in range(0x110000):
        c = chr(o)
        cat = unicodedata.category(c)
        if cat[0] == "P":
            t[o] = None
        elif cat[0] in "ZC" and c != " ":
            t[o] = " "
        elif 0xFF01 <= o <= 0xFF5E:
            t[o] = None if unicodedata.category(chr(o - 0xFEE0))[0] == "P" else chr(o - 0xFEE0)
    return t


TABLE = _table()


def norm(t):
    return SPACE.sub(" ", DIGITS.sub("0", t.lower().translate(TABLE))).strip()


def units(t):
    import jieba  # only --units auto's similarity needs it
    jieba.setLogLevel(60)
    u = []
    for w in t.split(" "):
        pos = 0
        for m in HAN.finditer(w):
            u.extend(kana_split(w[pos:m.start()]))
            u.extend(jieba.lcut(m.group(), HMM=True))
            pos = m.end()
        u.extend(kana_split(w[pos:]))
    return u


def kana_split(s):
    out, cur = [], ""
    for c in s:
        if KANA.match(c):
            if cur:
                out.append(cur)
                cur = ""
            out.append(c)
        else:
            cur += c
    return out + ([cur] if cur else [])


def shingles(text, auto, n=5):
    t = norm(text)
    u = units(t) if auto else t.split(" ") if t else []
    if not u:
        return set()
    if len(u) < n:
        return {" ".join(u)}
    return {"\x00".join(u[i:i + n]) for i in range(len(u) - n + 1)}


def unit_key(line):
    """The line's words (characters, in text without spaces) as gen.py's swap sees them."""
    spaced = line.count(" ") > len(line) / 20
    return tuple(sorted(line.split(" ") if spaced else line))


def edits(a, b):
    """The generator's edits (bench/scale/gen.py near()) that copy b shows of original a."""
    la, lb = a.split("\n"), b.split("\n")
    ops = []
    if len(lb) < len(la):
        ops.append("truncate")
    if lb and lb[-1] not in la and (len(lb) > len(la) or len(la) <= 9):
        ops.append("append")
    common = [x for x in lb if x in la]
    if common != [x for x in la if x in common]:
        ops.append("shuffle")
    keys = {unit_key(x) for x in la}
    if any(x not in la and unit_key(x) in keys for x in lb):
        ops.append("swap")
    return "+".join(ops) or "none"


def docs_of(pattern, want, field=None):
    out = {}
    for f in sorted(glob.glob(pattern)):
        if f.endswith(".rejects.jsonl.zst") and "rejects" not in pattern:
            continue
        data = subprocess.run(["zstd", "-dcqf", f], check=True, capture_output=True).stdout
        for line in data.splitlines():
            d = json.loads(line)
            if want is None or d["id"] in want:
                out[d["id"]] = d["text"] if field is None else d.get(field)
    return out


def jaccard(a, b):
    return len(a & b) / len(a | b) if a | b else 1.0


def main():
    w = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rejects = sys.argv[3:] or [w + "/out/dedup/*.rejects.jsonl.zst"]
    near = []
    for line in open(w + "/truth.tsv"):
        i, kind, s = line.rstrip("\n").split("\t")
        if kind == "near":
            near.append((i, s))
    want = {x for p in near for x in p}
    kept = docs_of(w + "/out/clean/*.jsonl.zst", want)
    dup_of = {}
    for r in rejects:
        dup_of.update(docs_of(r, None, "dup_of"))
    cluster = lambda x: dup_of.get(x) or x
    pairs = [(i, s) for i, s in near if i in kept and s in kept][:limit]
    rows = []
    for i, s in pairs:
        han = sum(map(len, HAN.findall(kept[s])))
        rows.append({"jw": jaccard(shingles(kept[s], False), shingles(kept[i], False)),
                     "ja": jaccard(shingles(kept[s], True), shingles(kept[i], True)),
                     "lang": "Chinese" if han > len(kept[s]) / 3 else "other",
                     "edits": edits(kept[s], kept[i]), "found": cluster(i) == cluster(s)})
    print("near pairs: %d of %d (both kept by clean); in one cluster: %.3f" %
          (len(rows), len(near), sum(r["found"] for r in rows) / len(rows)))

    def table(title, key, keys):
        print("%-22s %6s %6s %7s %9s %9s %9s" % (title, "pairs", "share", "recall", "LSH 14x8",
              "median J", "J auto"))
        for k in keys:
            sel = [r for r in rows if key(r) == k]
            if not sel:
                continue
            jw, ja = sorted(r["jw"] for r in sel), sorted(r["ja"] for r in sel)
            pred = sum(1 - (1 - r["jw"] ** 8) ** 14 for r in sel) / len(sel)
            print("%-22s %6d %6.3f %7.3f %9.3f %9.3f %9.3f" % (k, len(sel), len(sel) / len(rows),
                  sum(r["found"] for r in sel) / len(sel), pred, jw[len(jw) // 2], ja[len(ja) // 2]))

    names = ["J %.1f-%.1f" % (lo, min(hi, 1.0)) for lo, hi in zip(BANDS, BANDS[1:])]
    table("word-unit Jaccard", lambda r: next(n for n, hi in zip(names, BANDS[1:]) if r["jw"] < hi), names)
    table("language", lambda r: r["lang"], ["Chinese", "other"])
    ops = sorted({r["edits"] for r in rows}, key=lambda k: -sum(1 for r in rows if r["edits"] == k))
    table("edits seen", lambda r: r["edits"], ops)


if __name__ == "__main__":
    main()
