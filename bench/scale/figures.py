#!/usr/bin/env python3
"""The figures of one bench-scale run, or a comparison of several (bench/scale/run.sh).

  figures.py WORKDIR               per stage: wall, CPU, MB/s per core, peak RSS, disk;
                                  dedup bytes per document and recall; WORKDIR/report.json
  figures.py --compare WORKDIR...  one line per size and stage: is memory flat, time linear?

Per step the pipeline's stage.sh recorded (LLM_RUSAGE=1) "wall user sys maxrss_kib" in
OUT/times/STAGE.NAME.rusage. A stage's wall time is the sum over its steps (they ran two at
a time, so the run's wall time is less); MB/s per core is raw input MB over the stage's
CPU seconds. Recall: a copy (exact or near) whose original also left the clean stage is
found when dedup put the two in one cluster (a removed document belongs to the cluster of
its dup_of); "removed without a copy" counts documents dedup removed that have no known
copy among the cleaned documents (its false positives). Near copies are also split by the
Jaccard similarity J of their 5-word shingles to the original (bench/scale/near.py, the
units of --preset datatrove; the first 20,000 pairs), each part with the recall that 14
bands of 8 rows predict, 1 - (1 - J^8)^14: what dedup should find of them.
"""
import glob
import json
import os
import subprocess
import sys

from near import docs_of, jaccard, shingles

NEAR_SAMPLE = 20000
STAGES = ["cat", "clean", "dedup", "decon", "tox", "tokens", "noise", "shards"]


def ids_of(pattern):
    out = set()
    for f in sorted(glob.glob(pattern)):
        if f.endswith(".rejects.jsonl.zst") and "rejects" not in pattern:
            continue
        data = subprocess.run(["zstd", "-dcqf", f], check=True, capture_output=True).stdout
        for line in data.splitlines():
            if line:
                out.add(json.loads(line)["id"])
    return out


def du(path):
    """Bytes of the files under path, links not followed (a linked raw file costs nothing)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.lstat(p).st_size
    return total


def measure(w):
    out = os.path.join(w, "out")
    raw = du(os.path.join(w, "raw"))
    stages = {}
    for f in glob.glob(os.path.join(out, "times", "*.rusage")):
        stage, step = os.path.basename(f)[:-7].split(".", 1)
        wall, user, sys_, rss = (float(x) for x in open(f).read().split())
        s = stages.setdefault(stage, {"steps": 0, "wall": 0.0, "cpu": 0.0, "rss_kib": 0, "max_step": ""})
        s["steps"] += 1
        s["wall"] += wall
        s["cpu"] += user + sys_
        if rss > s["rss_kib"]:
            s["rss_kib"], s["max_step"] = int(rss), step
    for st, s in stages.items():
        s["disk"] = du(os.path.join(out, st))
        s["mb_per_cpu_s"] = raw / 1e6 / s["cpu"] if s["cpu"] else None
    cluster = os.path.join(out, "times", "dedup.cluster.rusage")
    signed = sum(json.load(open(f))["records_out"] for f in glob.glob(os.path.join(out, "clean", "*.stats.json")))
    r = {"raw_bytes": raw, "stages": stages, "documents_clustered": signed,
         "disk_total": du(out), "total": open(os.path.join(w, "total.time")).read().splitlines()[-1].split()}
    if os.path.exists(cluster):
        rss = float(open(cluster).read().split()[3]) * 1024
        r["dedup_cluster_bytes_per_doc"] = rss / signed if signed else None
    # Recall against the generator's truth.
    kept = ids_of(os.path.join(out, "clean", "*.jsonl.zst"))
    dup_of = docs_of(os.path.join(out, "dedup", "*.rejects.jsonl.zst"), None, "dup_of")
    removed = set(dup_of)
    cluster = lambda x: dup_of.get(x) or x
    src, groups = {}, {}
    for line in open(os.path.join(w, "truth.tsv")):
        i, kind, s = line.rstrip("\n").split("\t")
        if kind != "orig":
            src[i] = (kind, s)
    for i, (kind, s) in src.items():
        if i in kept and s in kept:
            groups.setdefault(s, []).append(i)
    found = {"exact": [0, 0], "near": [0, 0]}
    has_copy = set()
    for s, copies in groups.items():
        has_copy.add(s)
        for i in copies:
            has_copy.add(i)
            kind = src[i][0]
            found[kind][1] += 1
            if cluster(i) == cluster(s):
                found[kind][0] += 1
    r["recall"] = {k: (v[0] / v[1] if v[1] else None) for k, v in found.items()}
    r["pairs"] = {k: v[1] for k, v in found.items()}
    r["removed"] = len(removed)
    r["removed_without_copy"] = len([i for i in removed if i not in has_copy])
    r["truth_rates"] = {k: sum(1 for x in src.values() if x[0] == k) for k in ("exact", "near")}
    near = [(i, s) for i, (kind, s) in src.items() if kind == "near" and i in kept and s in kept]
    near = near[:NEAR_SAMPLE]
    text = docs_of(os.path.join(out, "clean", "*.jsonl.zst"), {x for p in near for x in p})
    parts = {"J>=0.8": [0, 0, 0.0], "J<0.8": [0, 0, 0.0]}
    for i, s in near:
        j = jaccard(shingles(text[s], False), shingles(text[i], False))
        p = parts["J>=0.8" if j >= 0.8 else "J<0.8"]
        p[0] += 1
        p[1] += cluster(i) == cluster(s)
        p[2] += 1 - (1 - j ** 8) ** 14
    r["near_by_jaccard"] = {k: {"pairs": v[0], "recall": v[1] / v[0] if v[0] else None,
                                "lsh_predicts": v[2] / v[0] if v[0] else None}
                            for k, v in parts.items()}
    return r


def show(w, r):
    raw = r["raw_bytes"]
    print("bench-scale %s: %.0f MB raw, %d documents clustered; make -j2 %s s wall, %s s user, %s s sys"
          % (w, raw / 1e6, r["documents_clustered"], *r["total"][:3]))
    print("%-8s %5s %9s %9s %9s %9s %10s" % ("stage", "steps", "wall s", "CPU s", "MB/s/core", "peak MB", "disk MB"))
    for st in STAGES:
        s = r["stages"].get(st)
        if not s:
            continue
        print("%-8s %5d %9.1f %9.1f %9.2f %9.1f %10.1f" % (st, s["steps"], s["wall"], s["cpu"],
              s["mb_per_cpu_s"] or 0, s["rss_kib"] / 1024, s["disk"] / 1e6))
    print("disk: %.0f MB for %.0f MB raw (%.2fx, shards included)" % (r["disk_total"] / 1e6, raw / 1e6, r["disk_total"] / raw))
    if r.get("dedup_cluster_bytes_per_doc"):
        print("dedup cluster: %.0f bytes of peak RSS per document" % r["dedup_cluster_bytes_per_doc"])
    print("dedup recall: exact %.3f of %d pairs, near %.3f of %d pairs; %d removed, %d without a known copy"
          % (r["recall"]["exact"] or 0, r["pairs"]["exact"], r["recall"]["near"] or 0, r["pairs"]["near"],
             r["removed"], r["removed_without_copy"]))
    for k, v in r.get("near_by_jaccard", {}).items():
        if v["pairs"]:
            print("near copies at %s: %d pairs, recall %.3f (14x8 LSH predicts %.3f)"
                  % (k, v["pairs"], v["recall"], v["lsh_predicts"]))


def compare(ws):
    rs = [(w, json.load(open(os.path.join(w, "report.json")))) for w in ws]
    base_w, base = rs[0]
    print("sizes against %s (%.0f MB): CPU ratio / size ratio (1 = linear), peak MB" % (base_w, base["raw_bytes"] / 1e6))
    print("%-8s " % "stage" + " ".join("%18s" % ("%.0f MB" % (r["raw_bytes"] / 1e6)) for _, r in rs))
    for st in STAGES:
        cells = []
        for _, r in rs:
            s, b = r["stages"].get(st), base["stages"].get(st)
            if not s or not b or not b["cpu"]:
                cells.append("%18s" % "-")
                continue
            lin = (s["cpu"] / b["cpu"]) / (r["raw_bytes"] / base["raw_bytes"])
            cells.append("%9.2f %8.1f" % (lin, s["rss_kib"] / 1024))
        print("%-8s " % st + " ".join(cells))


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    if sys.argv[1] == "--compare":
        compare(sys.argv[2:])
        return
    w = sys.argv[1]
    r = measure(w)
    json.dump(r, open(os.path.join(w, "report.json"), "w"), indent=1)
    show(w, r)


if __name__ == "__main__":
    main()
