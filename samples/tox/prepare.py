#!/usr/bin/env python3
"""Convert the labelled toxicity sets to llmkit JSONL: {"id", "text", "lang", "label", "source"}.

label is 1 for toxic (COLD "offensive"; Davidson "hate speech" or "offensive language") and 0
otherwise. The split is a function of the row id (XXH-free: a stable SHA-1 of the id), so the
same rows land in the same file on every run:

  prepare.py SRC_DIR OUT_DIR
    SRC_DIR/cold/{train,dev}.csv, SRC_DIR/davidson/labeled_data_train.csv
    OUT_DIR/train.jsonl   COLD train + Davidson rows whose id hash is not in the eval tenth
    OUT_DIR/eval.jsonl    1000 rows of COLD dev + the Davidson eval tenth (first 1000)
"""
import csv
import hashlib
import json
import re
import sys


def bucket(key):
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 10


def rec(rid, text, lang, label, source):
    text = re.sub(r"[\r\n]+", "\n", text).strip()
    return json.dumps({"id": rid, "text": text, "lang": lang, "label": label, "source": source},
                      ensure_ascii=False)


def main():
    src, out = sys.argv[1], sys.argv[2]
    train, ev = [], []
    with open(f"{src}/cold/train.csv", encoding="utf-8-sig", newline="") as f:
        for r in csv.DictReader(f):
            train.append(rec(f"cold-train:{r['']}", r["TEXT"], "zh", int(r["label"]), "cold/train"))
    with open(f"{src}/cold/dev.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    rows.sort(key=lambda r: hashlib.sha1(r[""].encode()).hexdigest())
    for r in rows[:1000]:
        ev.append(rec(f"cold-dev:{r['']}", r["TEXT"], "zh", int(r["label"]), "cold/dev"))
    n_dav_eval = 0
    with open(f"{src}/davidson/labeled_data_train.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            rid = f"davidson:{r['']}"
            label = 0 if r["class"] == "2" else 1
            line = rec(rid, r["tweet"], "en", label, "davidson")
            if bucket(rid) == 0:
                if n_dav_eval < 1000:
                    ev.append(line)
                    n_dav_eval += 1
            else:
                train.append(line)
    with open(f"{out}/train.jsonl", "w", encoding="utf-8") as f:
        f.write("\n".join(train) + "\n")
    with open(f"{out}/eval.jsonl", "w", encoding="utf-8") as f:
        f.write("\n".join(ev) + "\n")


main()
