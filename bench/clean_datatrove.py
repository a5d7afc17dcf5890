#!/usr/bin/env python3
"""Agreement and speed of llm-clean against datatrove's filters on the English samples.
Times are CPU seconds of one process (datatrove: time.process_time around each filter call;
llm-clean: the child's user + system time), so they are per core.

For each of Gopher quality, Gopher repetition, C4 and FineWeb, run datatrove's filter
(GopherQualityFilter, GopherRepetitionFilter, C4QualityFilter, FineWebQualityFilter, default
arguments) and `llm-clean --normalize none --filters F` on the same documents (every record
with "lang": "en" in samples/corpus/*.jsonl) and report the keep/drop agreement and every
disagreement with both reasons. Also times both on the same documents (one core).

Usage: python3 bench/clean_datatrove.py [--golden FILE] [--bin bin/llm-clean]
       python3 bench/clean_datatrove.py --pipeline FILE [--mb N]
  --golden FILE  also write datatrove's decisions (id, then one reason or "keep" per filter,
                 tab-separated) — the reference tests/unit/test_quality.c checks against.
  --pipeline F   write the first N MB (default 2) of English documents to F and time
                 datatrove's FineWeb-order pipeline on them (GopherRepetition, GopherQuality,
                 C4Quality, FineWebQuality; C4 edits the text as in datatrove); prints
                 "text_bytes B docs D kept K cpu_seconds S" for bench/clean.sh.
Needs `pip install datatrove spacy`; exits 0 with a note when they are missing.
"""
import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

FILTERS = ["gopher-quality", "gopher-rep", "c4", "fineweb"]


def load_docs(top, langs=("en",)):
    """Every record of samples/corpus (but the toxicity sample) whose lang is in langs."""
    docs = []
    for path in sorted(glob.glob(os.path.join(top, "samples/corpus/*.jsonl"))):
        if "toxicity" in path:
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                if d.get("lang") in langs:
                    docs.append(d)
    return docs


def run_datatrove(docs):
    from datatrove.data import Document
    from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter,
                                            GopherQualityFilter, GopherRepetitionFilter)
    filters = [GopherQualityFilter(), GopherRepetitionFilter(), C4QualityFilter(), FineWebQualityFilter()]
    out, secs = [], [0.0] * 4
    for d in docs:
        row = []
        for k, f in enumerate(filters):
            t = time.process_time()
            r = f.filter(Document(text=d["text"], id=d["id"]))
            secs[k] += time.process_time() - t
            row.append("keep" if r is True else r[1])
        out.append(row)
    return out, secs


def run_ours(binary, docs, flt):
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in.jsonl")
        rej = os.path.join(tmp, "rejects.jsonl")
        with open(inp, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"id": d["id"], "lang": "en", "text": d["text"]}, ensure_ascii=False) + "\n")
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = subprocess.run([binary, "-q", "--normalize", "none", "--filters", flt, "--rejects", rej, inp],
                             stdout=subprocess.PIPE, check=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        kept = {json.loads(l)["id"] for l in res.stdout.decode().splitlines()}
        reasons = {}
        with open(rej, encoding="utf-8") as f:
            for l in f:
                r = json.loads(l)
                reasons[r["id"]] = r["reject_reason"]
    return [("keep" if d["id"] in kept else reasons.get(d["id"], "?")) for d in docs], cpu


def pipeline(docs, path, mb):
    from datatrove.data import Document
    from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter,
                                            GopherQualityFilter, GopherRepetitionFilter)
    sub, size = [], 0
    for d in docs:
        if size >= mb * 1e6:
            break
        sub.append(d)
        size += len(d["text"].encode())
    with open(path, "w", encoding="utf-8") as f:
        for d in sub:
            f.write(json.dumps({"id": d["id"], "lang": "en", "text": d["text"]}, ensure_ascii=False) + "\n")
    filters = [GopherRepetitionFilter(), GopherQualityFilter(), C4QualityFilter(), FineWebQualityFilter()]
    kept = 0
    t = time.process_time()
    for d in sub:
        doc = Document(text=d["text"], id=d["id"])
        if all(f.filter(doc) is True for f in filters):
            kept += 1
    cpu = time.process_time() - t
    print(f"text_bytes {size} docs {len(sub)} kept {kept} cpu_seconds {cpu:.3f}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden")
    ap.add_argument("--bin", default="bin/llm-clean")
    ap.add_argument("--pipeline")
    ap.add_argument("--mb", type=float, default=2.0)
    a = ap.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        import datatrove  # noqa: F401
        import spacy  # noqa: F401
    except ImportError:
        print("clean_datatrove: datatrove or spacy not installed (pip install datatrove spacy); skipped")
        return 0
    docs = load_docs(top)
    if a.pipeline:
        return pipeline(docs, a.pipeline, a.mb)
    mb = sum(len(d["text"].encode()) for d in docs) / 1e6
    print(f"{len(docs)} English documents, {mb:.2f} MB of text")
    dt, dt_secs = run_datatrove(docs)
    if a.golden:
        from importlib.metadata import version
        with open(a.golden, "w", encoding="utf-8") as f:
            f.write("# datatrove %s (spaCy %s) decisions on the English samples: id, gopher-quality, "
                    "gopher-rep, c4, fineweb\n" % (version("datatrove"), version("spacy")))
            for d, row in zip(docs, dt):
                f.write("\t".join([d["id"]] + row) + "\n")
    total_ours = 0.0
    for k, flt in enumerate(FILTERS):
        ours, cpu = run_ours(os.path.join(top, a.bin), docs, flt)
        total_ours += cpu
        agree = sum((x == "keep") == (y[k] == "keep") for x, y in zip(ours, dt))
        print(f"{flt:15s} agreement {agree}/{len(docs)} = {100 * agree / len(docs):.2f}%   "
              f"datatrove {dt_secs[k]:.2f} s ({mb / dt_secs[k]:.2f} MB/s), llm-clean {cpu:.2f} s "
              f"({mb / cpu:.1f} MB/s) CPU, one core")
        for d, x, y in zip(docs, ours, dt):
            if (x == "keep") != (y[k] == "keep"):
                print(f"    {d['id']}: datatrove {y[k]}, llm-clean {x}")
    print(f"all four filters: datatrove {sum(dt_secs):.1f} s CPU, llm-clean {total_ours:.2f} s CPU "
          f"(llm-clean {sum(dt_secs) / total_ours:.0f}x faster per core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
