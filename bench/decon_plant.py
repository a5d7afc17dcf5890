#!/usr/bin/env python3
"""Planted benchmark contamination for llm-dedup --decontaminate (tests/t/t2005, bench/dedup.sh).

  decon_plant.py TASK CLEAN OUT [SEED]

TASK: an llm-eval choice file (context, choices, gold). CLEAN: documents that hold none of
it. Writes to OUT one document per line: every clean document as it is ("id": "clean-N"),
then three planted documents per item, each a clean document with the item pasted at a word
boundary: "whole" (context and gold choice), "part" (a run of at least 60% of the context's
words) and "edited" (the whole item with light edits: a word in eight changes case, a word
in twenty is replaced, punctuation is added or dropped now and then). Ids end in the
number of words pasted ("planted-part-7-12w"). Deterministic.
"""
import json
import random
import sys


def paste(rng, text, passage):
    words = text.split(" ")
    at = rng.randrange(len(words) + 1)
    return " ".join(words[:at] + [passage] + words[at:])


def edit(rng, passage):
    out = []
    for w in passage.split():
        r = rng.random()
        if r < 1 / 8:
            w = w.upper() if rng.random() < 0.5 else w.lower()
        elif r < 1 / 8 + 1 / 20:
            w = rng.choice(["very", "quite", "indeed", "perhaps", "then"])
        elif r < 1 / 8 + 1 / 20 + 1 / 20:
            w = w.rstrip(".,;:!?") if w[-1:] in ".,;:!?" else w + ","
        out.append(w)
    return " ".join(out)


def main():
    task, clean, out = sys.argv[1:4]
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    items = [json.loads(l) for l in open(task, encoding="utf-8")]
    docs = [json.loads(l) for l in open(clean, encoding="utf-8")]
    docs = [d for d in docs if isinstance(d.get("text"), str) and d["text"].strip()]
    with open(out, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": "clean-%d" % i, "text": d["text"]}, ensure_ascii=False) + "\n")
        for k, it in enumerate(items):
            whole = it["context"] + " " + it["choices"][it["gold"]]
            cw = it["context"].split()
            n = max(1, int(len(cw) * 0.6 + 0.999))
            s = rng.randrange(len(cw) - n + 1)
            part = " ".join(cw[s:s + n])
            for kind, passage in (("whole", whole), ("part", part), ("edited", edit(rng, whole))):
                base = docs[rng.randrange(len(docs))]["text"]
                f.write(json.dumps({"id": "planted-%s-%d-%dw" % (kind, k, len(passage.split())),
                                    "text": paste(rng, base, passage)}, ensure_ascii=False) + "\n")


main()
