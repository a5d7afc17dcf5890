#!/usr/bin/env python3
"""Build samples/eval/next-sentence.jsonl: a multiple-choice task from samples/corpus.

Each item gives a context of two or three consecutive sentences of an English document and four
candidate next sentences: the true one and three distractors drawn from other documents of the
same domain, of similar length, so that the domain alone does not give the answer away.
Deterministic: the same corpus gives the same file.

Usage: scripts/make-eval-task.py [--per-domain N] > samples/eval/next-sentence.jsonl
"""
import argparse
import json
import random
import re
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
DOMAINS = ["books", "legal", "news", "qa", "web", "wiki"]
SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def sentences(text):
    out = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        for s in SPLIT.split(para):
            # plain prose sentences only: no markup remnants, no numbered list lines
            if 25 <= len(s) <= 220 and s[0].isupper() and s[-1] in ".!?" and \
                    not re.search(r"[|<>{}\[\]=#*_\\]", s):
                out.append(s)
            else:
                out.append(None)  # a break: contexts never span it
    return out


def runs(sents, k):
    """Start indices of k+1 consecutive usable sentences (k of context and the next one)."""
    return [i for i in range(len(sents) - k) if all(sents[i + j] for j in range(k + 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-domain", type=int, default=40)
    ap.add_argument("--seed", type=int, default=20261130)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n = 0
    for dom in DOMAINS:
        docs = []
        for line in open(TOP / "samples" / "corpus" / f"{dom}.jsonl", encoding="utf-8"):
            d = json.loads(line)
            # Debian's licence texts may be copied verbatim only: not cut into items
            if d.get("lang") != "en" or "common-licenses" in d.get("source", ""):
                continue
            s = sentences(d["text"])
            if any(s):
                docs.append((d.get("id", ""), s))
        pool = [(di, x) for di, (_, s) in enumerate(docs) for x in s if x]
        # at most a few items per document, so no single document dominates a domain
        cands = []
        for di, (_, s) in enumerate(docs):
            k = rng.choice([2, 3])
            starts = runs(s, k)
            rng.shuffle(starts)
            cands += [(di, st, k) for st in starts[:3]]
        rng.shuffle(cands)
        made = 0
        for di, st, k in cands:
            if made == args.per_domain:
                break
            s = docs[di][1]
            context, gold = " ".join(s[st:st + k]), s[st + k]
            near = [x for dj, x in pool if dj != di and x != gold and x not in context and
                    0.6 * len(gold) <= len(x) <= 1.6 * len(gold)]
            near = sorted(set(near))
            if len(near) < 3:
                continue
            choices = rng.sample(near, 3)
            g = rng.randrange(4)
            choices.insert(g, gold)
            item = {"id": f"{dom}-{made:03d}", "domain": dom, "source": docs[di][0],
                    "context": context, "choices": choices, "gold": g}
            sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")
            made += 1
            n += 1
        print(f"{dom}: {made} items from {len(docs)} documents", file=sys.stderr)
    print(f"{n} items", file=sys.stderr)


if __name__ == "__main__":
    main()
