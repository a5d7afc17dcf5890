#!/usr/bin/env python3
"""Documents that MinHash dedup removes without a known copy in bench/scale's generated
corpus: real near duplicates, or precision lost?

  dedup_nocopy.py TRUTH_TSV INPUT.jsonl REJECTS.jsonl

TRUTH_TSV is bench/scale/gen.py's truth, INPUT the documents dedup read, REJECTS its
--rejects (dup_of names the survivor). A removed document has a known copy when the truth
makes it a copy of a document present in INPUT, or the original of one. For the others it
prints the exact Jaccard similarity of 5-word shingles (bench/scale/near.py's, as
--preset datatrove signs them) with the survivor, and how many of their lines the
survivor holds too: gen.py draws every original's lines from its domain's pool, so two
originals of a small pool share lines by chance, more often the more documents there are.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "scale"))
from near import jaccard, shingles  # noqa: E402


def main():
    truth, inp, rej = sys.argv[1:4]
    text = {}
    for line in open(inp, encoding="utf-8"):
        d = json.loads(line)
        text[d["id"]] = d["text"]
    src = {}
    for line in open(truth):
        i, kind, s = line.rstrip("\n").split("\t")
        if kind != "orig":
            src[i] = s
    has_copy = set()
    for i, s in src.items():
        if i in text and s in text:
            has_copy.update((i, s))
    removed = {}
    for line in open(rej, encoding="utf-8"):
        d = json.loads(line)
        if d.get("reject_reason") == "duplicate" and d.get("dup_of"):
            removed[d["id"]] = d["dup_of"]
    nocopy = [(i, s) for i, s in removed.items() if i not in has_copy]
    js, shared = [], []
    for i, s in nocopy:
        js.append(jaccard(shingles(text[i], False), shingles(text[s], False)))
        li = [x for x in text[i].split("\n") if x.strip()]
        ls = set(text[s].split("\n"))
        shared.append(sum(x in ls for x in li) / len(li) if li else 0.0)
    unsorted = list(js)
    js.sort()
    n = len(js)
    print("documents %d, removed %d, without a known copy %d (%.1f%% of removals)"
          % (len(text), len(removed), n, 100.0 * n / len(removed) if removed else 0.0))
    if n:
        q = lambda f: js[min(n - 1, int(f * n))]
        print("their 5-word Jaccard with the survivor: min %.3f, 10%% %.3f, median %.3f, "
              "90%% %.3f; >= 0.8: %d, >= 0.7: %d, < 0.5: %d"
              % (js[0], q(0.1), q(0.5), q(0.9), sum(j >= 0.8 for j in js),
                 sum(j >= 0.7 for j in js), sum(j < 0.5 for j in js)))
        # dup_of names the cluster's survivor: a member may have joined through another
        members = {}
        for i, s in removed.items():
            members.setdefault(s, [s]).append(i)
        low = [(i, s) for (i, s), j in zip(nocopy, unsorted) if j < 0.7]
        best = [max(jaccard(shingles(text[i], False), shingles(text[o], False))
                    for o in members[s] if o != i) for i, s in low]
        print("of the %d under 0.7 with the survivor, %d have a cluster member at >= 0.7"
              % (len(low), sum(b >= 0.7 for b in best)))
        short = sum(len(text[i].split()) < 50 for i, _ in nocopy)
        print("lines the survivor holds too: median %.2f; documents under 50 words: %d"
              % (sorted(shared)[n // 2], short))


if __name__ == "__main__":
    main()
