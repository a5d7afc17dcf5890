#!/usr/bin/env python3
"""Convert the labelled toxicity sets to llmkit JSONL: {"id", "text", "lang", "label", "source"}.

label is 1 for toxic (COLD "offensive"; Davidson "hate speech" or "offensive language") and 0
otherwise. Three splits that share no text:

  prepare.py eval SRC_DIR EVAL            the held-apart evaluation set: COLD's test split
                                          (fully hand-labelled) and the Davidson tweets whose
                                          id hash falls in bucket 0 of 10
  prepare.py train SRC_DIR EVAL OUT_DIR   OUT_DIR/train.jsonl: COLD train + Davidson buckets 2-9
                                          OUT_DIR/dev.jsonl: COLD dev + Davidson bucket 1, for
                                          choosing settings and thresholds
                                          Rows whose text is in EVAL are left out of both.

SRC_DIR holds cold/{train,dev,test}.csv (thu-coai/COLDataset, COLDataset/) and
davidson/labeled_data_train.csv. Ids are the source, the split and the row's position in its
file (COLD's own index column repeats across topics), so the same rows get the same ids on
every run; buckets are a stable SHA-1 of the Davidson id.
"""
import csv
import hashlib
import json
import re
import sys


def bucket(key):
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 10


def clean(text):
    return re.sub(r"[\r\n]+", "\n", text).strip()


def rec(rid, text, lang, label, source):
    return {"id": rid, "text": clean(text), "lang": lang, "label": label, "source": source}


def cold(src, split):
    with open(f"{src}/cold/{split}.csv", encoding="utf-8-sig", newline="") as f:
        for n, r in enumerate(csv.DictReader(f), 1):
            yield rec(f"cold-{split}:{n}", r["TEXT"], "zh", int(r["label"]), f"cold/{split}")


def davidson(src, buckets):
    with open(f"{src}/davidson/labeled_data_train.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            rid = f"davidson:{r['']}"
            if bucket(rid) in buckets:
                yield rec(rid, r["tweet"], "en", 0 if r["class"] == "2" else 1, "davidson")


def write(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "eval":
        src, out = sys.argv[2], sys.argv[3]
        write(out, list(cold(src, "test")) + list(davidson(src, {0})))
    elif len(sys.argv) == 5 and sys.argv[1] == "train":
        src, ev, out = sys.argv[2], sys.argv[3], sys.argv[4]
        with open(ev, encoding="utf-8") as f:
            held = {json.loads(line)["text"] for line in f}
        keep = lambda rows: [r for r in rows if r["text"] not in held]
        write(f"{out}/train.jsonl", keep(list(cold(src, "train")) + list(davidson(src, set(range(2, 10))))))
        write(f"{out}/dev.jsonl", keep(list(cold(src, "dev")) + list(davidson(src, {1}))))
    else:
        sys.exit(__doc__)


main()
