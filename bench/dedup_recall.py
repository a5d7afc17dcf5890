#!/usr/bin/env python3
"""Recall and precision of llm-dedup on near-duplicate pairs of known character 5-gram
Jaccard similarity (bench/dedup.sh runs this).

  dedup_recall.py LLM_DEDUP WORKDIR CORPUS.jsonl... -- OPTIONS...

Pairs: distinct documents of the corpus (those llm-dedup itself finds no near duplicate of),
cut to their first 2000 characters, each with a copy edited at a random rate (up to 15% of
its words replaced, dropped or repeated; for text without spaces, its characters), so that
the pairs spread over Jaccard 0.5 to 1, most of them near the threshold. The similarity of a pair is computed exactly on
character 5-gram sets after llm-dedup's default normalisation (lower case, punctuation
removed, digit runs as "0", white space runs as one space). llm-dedup runs with OPTIONS and
--annotate on the originals followed by the copies; a pair is found when both are in one
cluster. Prints one JSON line: pairs at J >= 0.8, recall there, precision of the pairs found,
joins that are no designed pair, CPU seconds of the run.
"""
import json
import os
import random
import re
import resource
import subprocess
import sys
import unicodedata

DIGITS = re.compile(r"\d+")
SPACE = re.compile(r"\s+")


def norm(t):
    t = "".join(" " if unicodedata.category(c)[0] in "ZC" else c for c in t.lower())
    t = "".join(c for c in t if unicodedata.category(c)[0] != "P")
    return SPACE.sub(" ", DIGITS.sub("0", t)).strip()


def grams(t, n=5):
    t = norm(t)
    return {t[i:i + n] for i in range(max(1, len(t) - n + 1))} if t else set()


def edit(rng, text):
    rate = rng.uniform(0.0, 0.15)
    spaced = text.count(" ") > len(text) / 20
    units = text.split(" ") if spaced else list(text)
    out = []
    for u in units:
        r = rng.random()
        if r < rate / 3:
            out.append(rng.choice(units))
        elif r < 2 * rate / 3:
            continue
        elif r < rate:
            out += [u, u]
        else:
            out.append(u)
    return (" " if spaced else "").join(out)


def cpu_of(cmd, **kw):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    k = sys.argv.index("--")
    corpus, opts = sys.argv[3:k], sys.argv[k + 1:]
    os.makedirs(work, exist_ok=True)
    docs = []
    for f in corpus:
        for line in open(f, encoding="utf-8"):
            d = json.loads(line)
            if isinstance(d.get("text"), str) and len(d["text"]) >= 200:
                docs.append(d["text"][:2000])
    cand = os.path.join(work, "candidates.jsonl")
    with open(cand, "w", encoding="utf-8") as f:
        for i, t in enumerate(docs):
            f.write(json.dumps({"id": "c%d" % i, "text": t}, ensure_ascii=False) + "\n")
    # originals: no near duplicate among them, by llm-dedup's own loosest reading
    out = subprocess.run([exe, "-q", "--annotate", "--units", "char", "--ngram", "5",
                          "--threshold", "0.3", cand], check=True, capture_output=True).stdout
    keep = [json.loads(l) for l in out.decode().splitlines()]
    keep = [d["text"] for d in keep if "dup_cluster" not in d]
    rng = random.Random(20261201)
    pairs = [(t, edit(rng, t)) for t in keep]
    sims = []
    for a, b in pairs:
        ga, gb = grams(a), grams(b)
        sims.append(len(ga & gb) / len(ga | gb) if ga | gb else 1.0)
    inp = os.path.join(work, "pairs.jsonl")
    with open(inp, "w", encoding="utf-8") as f:
        for i, (a, _) in enumerate(pairs):
            f.write(json.dumps({"id": "a%d" % i, "text": a}, ensure_ascii=False) + "\n")
        for i, (_, b) in enumerate(pairs):
            f.write(json.dumps({"id": "b%d" % i, "text": b}, ensure_ascii=False) + "\n")
    res = os.path.join(work, "result.jsonl")
    with open(res, "wb") as fo:
        secs = cpu_of([exe, "-q", "--annotate"] + opts + [inp], stdout=fo)
    cluster = {}
    for line in open(res, encoding="utf-8"):
        d = json.loads(line)
        cluster[d["id"]] = d.get("dup_cluster", d["id"])
    found = [cluster["a%d" % i] == cluster["b%d" % i] for i in range(len(pairs))]
    hi = [i for i, s in enumerate(sims) if s >= 0.8]
    tp = sum(1 for i in hi if found[i])
    nfound = sum(found)
    members = {}
    for d, c in cluster.items():
        members.setdefault(c, []).append(d)
    stray = sum(len(m) - 1 for m in members.values()) - sum(found)
    print(json.dumps({"options": " ".join(opts), "pairs": len(pairs), "pairs_at_0.8": len(hi),
                      "recall_at_0.8": round(tp / len(hi), 4) if hi else None,
                      "precision": round(tp / nfound, 4) if nfound else None,
                      "found": nfound, "other_joins": stray, "cpu_s": round(secs, 2)}))


main()
