#!/usr/bin/env python3
"""A deterministic corpus of any size from the samples, with duplicates at known rates
(make bench-scale runs this).

  gen.py SAMPLES_CORPUS_DIR OUTDIR GB [SEED]

Writes OUTDIR/raw/part-00.jsonl ... part-15.jsonl (about GB * 10^9 bytes in all) and
OUTDIR/truth.tsv, one line per document: id, kind (orig, exact, near) and the id of the
original it copies ("-" for an original), so that dedup recall is measured against the
truth rather than against another deduplicator.

- An original is a new document of one sample domain: as many lines as a random sample
  document of that domain has (at most 120), each drawn at random from all the lines of
  that domain's samples. Chinese and English (and the other languages of the samples) mix
  as they do there; the domain, lang and source fields follow the line's document.
- 10% of the documents are exact copies of a recent original (one of 50,000 kept at random),
  15% are near copies: one to three of these real edits applied to it: two lines swapped
  (sentence shuffle), a few adjacent words (characters, in text without spaces) swapped,
  the last tenth of the lines cut (truncation), a line from elsewhere appended.
- Documents go to the 16 files at random, so most copies are in another file than their
  original, as in a crawl: dedup must be global to find them.
Same SAMPLES, GB and SEED give the same bytes.
"""
import json
import os
import random
import sys

FILES = 16
EXACT, NEAR = 0.10, 0.15
RECENT = 50000


def load(corpus):
    """Per domain: its lines (text, lang) and its documents' line counts."""
    pools = {}
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".jsonl"):
            continue
        for raw in open(os.path.join(corpus, name), encoding="utf-8"):
            d = json.loads(raw)
            dom = d.get("domain") or name[:-6]
            lines = [x for x in d["text"].split("\n") if x.strip()]
            if not lines:
                continue
            p = pools.setdefault(dom, {"lines": [], "sizes": [], "source": d.get("source", name)})
            p["lines"].extend((x, d.get("lang", "und")) for x in lines)
            p["sizes"].append(min(len(lines), 120))
    return pools


def near(rng, text, pool):
    lines = text.split("\n")
    for op in rng.sample(["shuffle", "swap", "truncate", "append"], rng.randint(1, 3)):
        if op == "shuffle" and len(lines) > 1:
            i, j = rng.sample(range(len(lines)), 2)
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "swap":
            i = rng.randrange(len(lines))
            spaced = lines[i].count(" ") > len(lines[i]) / 20
            u = lines[i].split(" ") if spaced else list(lines[i])
            for _ in range(3):
                if len(u) > 1:
                    k = rng.randrange(len(u) - 1)
                    u[k], u[k + 1] = u[k + 1], u[k]
            lines[i] = (" " if spaced else "").join(u)
        elif op == "truncate" and len(lines) > 9:
            lines = lines[:len(lines) - len(lines) // 10]
        elif op == "append":
            lines.append(rng.choice(pool)[0])
    return "\n".join(lines)


def main():
    corpus, out, gb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    rng = random.Random(seed)
    pools = load(corpus)
    doms = sorted(pools)
    weights = [len(pools[d]["lines"]) for d in doms]
    os.makedirs(os.path.join(out, "raw"), exist_ok=True)
    files = [open(os.path.join(out, "raw", "part-%02d.jsonl" % i), "w", encoding="utf-8")
             for i in range(FILES)]
    truth = open(os.path.join(out, "truth.tsv"), "w", encoding="utf-8")
    recent = []
    target, written, n = int(gb * 1e9), 0, 0
    while written < target:
        r = rng.random()
        n += 1
        doc_id = "scale:%09d" % n
        if recent and r < EXACT + NEAR:
            src = recent[rng.randrange(len(recent))]
            kind = "exact" if r < EXACT else "near"
            text = src["text"] if kind == "exact" else near(rng, src["text"], pools[src["domain"]]["lines"])
            d = {"id": doc_id, "text": text, "domain": src["domain"], "lang": src["lang"],
                 "source": src["source"]}
            truth.write("%s\t%s\t%s\n" % (doc_id, kind, src["id"]))
        else:
            dom = rng.choices(doms, weights)[0]
            p = pools[dom]
            picked = [rng.choice(p["lines"]) for _ in range(rng.choice(p["sizes"]))]
            langs = [lang for _, lang in picked]
            d = {"id": doc_id, "text": "\n".join(x for x, _ in picked), "domain": dom,
                 "lang": max(sorted(set(langs)), key=langs.count), "source": p["source"]}
            truth.write("%s\torig\t-\n" % doc_id)
            if len(recent) < RECENT:
                recent.append(d)
            else:
                recent[rng.randrange(RECENT)] = d
        line = json.dumps(d, ensure_ascii=False) + "\n"
        files[rng.randrange(FILES)].write(line)
        written += len(line.encode("utf-8"))
    for f in files:
        f.close()
    truth.close()
    print("gen: %d documents, %d bytes in %d files" % (n, written, FILES), file=sys.stderr)


if __name__ == "__main__":
    main()
