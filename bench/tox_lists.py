#!/usr/bin/env python3
"""Make block lists of N Chinese rules for bench/tox_lists.sh, the size of the rule sets of
Chinese safety pipelines (SkyPile's: over two million), deterministically.

  tox_lists.py CORPUS.jsonl ZHLIST OUT N...

Each rule is 2 to 5 Han characters drawn by their frequency in the Chinese text of CORPUS
(fixed seed), so rules look like Chinese words and phrases and most are rare in real text, as
block-list rules are; the entries of ZHLIST (LDNOOBW zh) of two or more characters come first. OUT.N gets
the first N distinct rules, one per line.
"""
import json
import random
import re
import sys


def main():
    corpus, zhlist, out = sys.argv[1:4]
    sizes = [int(n) for n in sys.argv[4:]]
    han = re.compile(r"[\u4e00-\u9fff]")
    freq = {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            for ch in han.findall(json.loads(line).get("text", "")):
                freq[ch] = freq.get(ch, 0) + 1
    chars = sorted(freq)
    cum, total = [], 0
    for c in chars:
        total += freq[c]
        cum.append(total)
    rng = random.Random(20250101)
    rules, seen = [], set()
    with open(zhlist, encoding="utf-8") as f:
        for line in f:
            w = line.strip()
            if len(w) >= 2 and w not in seen:
                seen.add(w)
                rules.append(w)
    want = max(sizes)
    while len(rules) < want:
        w = "".join(rng.choices(chars, cum_weights=cum, k=rng.randint(2, 5)))
        if w not in seen:
            seen.add(w)
            rules.append(w)
    for n in sizes:
        with open(f"{out}.{n}", "w", encoding="utf-8") as f:
            f.write("\n".join(rules[:n]) + "\n")


main()
