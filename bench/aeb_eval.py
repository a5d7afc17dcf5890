#!/usr/bin/env python3
"""Main-text extraction on the article-extraction-benchmark's 181 pages, scored by its method.

The pages and their gold article bodies are third-party (scrapinghub's
article-extraction-benchmark, MIT; see its README in the data folder). The scoring follows the
method that README describes, written here afresh: each text is lower-cased and split into
words (runs of Unicode word characters); the multiset of its 4-word shingles is compared with
the gold body's, giving per page true positives (shingles in both, counted with multiplicity),
false positives (predicted only) and false negatives (gold only). A page's three counts are
divided by their sum, so that every page weighs the same whatever its length, then summed over
the pages into precision, recall and F1. The +- figures are the standard deviation of F1 over
bootstrap resamples of the pages (fixed seed, so reruns agree).

Speed is MB of HTML (decompressed page bytes) per CPU second: for llmkit the user + system time
of `llm-cat PAGES | llm-clean --filters none` (what /usr/bin/time reports for the pipeline,
gzip, decoding and JSON included), for trafilatura the process time of its extraction calls
alone (import excluded), given the page bytes.

usage: bench/aeb_eval.py [--data DIR] [--bin DIR] [--tools LIST] [--repeat N] [--worst N]
"""
import argparse
import gzip
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text, n=4):
    words = WORD.findall(text.lower())
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def page_counts(gold, pred):
    """(tp, fp, fn) of one page, normalised to sum to 1; all zero when both texts are empty."""
    g, p = shingles(gold), shingles(pred)
    tp = sum((g & p).values())
    fp = sum(p.values()) - tp
    fn = sum(g.values()) - tp
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s else (0.0, 0.0, 0.0)


def prf(counts):
    tp = sum(c[0] for c in counts)
    fp = sum(c[1] for c in counts)
    fn = sum(c[2] for c in counts)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def bootstrap_sd(counts, rounds=1000):
    rng = random.Random(42)
    f1s = []
    for _ in range(rounds):
        f1s.append(prf([counts[rng.randrange(len(counts))] for _ in counts])[2])
    m = sum(f1s) / len(f1s)
    return (sum((f - m) ** 2 for f in f1s) / (len(f1s) - 1)) ** 0.5


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_llmkit(files, bindir, repeat):
    """page key -> text, and CPU seconds of `repeat` passes over the pages."""
    cat, clean = os.path.join(bindir, "llm-cat"), os.path.join(bindir, "llm-clean")
    def pipeline(args):
        c = subprocess.Popen([cat, "-q"] + args, stdout=subprocess.PIPE)
        out = subprocess.run([clean, "-q", "--filters", "none"], stdin=c.stdout,
                             capture_output=True, check=True).stdout
        c.stdout.close()
        if c.wait() != 0:
            raise SystemExit("llm-cat failed")
        return out
    texts = {}
    for line in pipeline(files).decode().splitlines():
        rec = json.loads(line)
        texts[os.path.basename(rec["source"])[:-len(".html.gz")]] = rec["text"]
    t0 = cpu_children()
    pipeline(files * repeat)
    return texts, cpu_children() - t0


def run_trafilatura(pages, repeat):
    import trafilatura

    def extract(body):
        return trafilatura.extract(body, include_comments=False, include_tables=True) or ""
    texts = {k: extract(b) for k, b in pages.items()}  # also warms up
    t0 = time.process_time()
    for _ in range(repeat):
        for b in pages.values():
            extract(b)
    return texts, time.process_time() - t0


def default_data():
    if os.environ.get("AEB_DATA"):
        return os.environ["AEB_DATA"]
    for up in ("..", os.path.join("..", "..")):
        d = os.path.join(TOP, up, "shared", "data", "article-extraction-benchmark")
        if os.path.isdir(d):
            return d
    return os.path.join(TOP, "..", "shared", "data", "article-extraction-benchmark")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=default_data(),
                    help="the benchmark's folder (default: AEB_DATA, else shared/data/"
                    "article-extraction-benchmark beside or above the tree)")
    ap.add_argument("--bin", default=os.path.join(TOP, "bin"))
    ap.add_argument("--tools", default="llmkit,trafilatura")
    ap.add_argument("--repeat", type=int, default=3, help="passes over the pages for speed")
    ap.add_argument("--worst", type=int, default=0, help="list the N pages of lowest precision")
    a = ap.parse_args()
    gt_path = os.path.join(a.data, "ground-truth.json")
    if not os.path.exists(gt_path):
        print("article-extraction-benchmark: no %s; skipped" % gt_path)
        return
    gold = {k: v["articleBody"] for k, v in json.load(open(gt_path, encoding="utf-8")).items()}
    keys = sorted(gold)
    files = [os.path.join(a.data, "html", k + ".html.gz") for k in keys]
    pages = {k: gzip.open(f).read() for k, f in zip(keys, files)}
    mb = sum(len(b) for b in pages.values()) / 1e6
    print("article-extraction-benchmark: %d pages, %.2f MB of HTML; speed over %d passes"
          % (len(keys), mb, a.repeat))
    print("%-12s %6s %6s %6s %7s  %10s" % ("tool", "F1", "prec", "recall", "+-F1", "MB/s/CPU"))
    for tool in [t for t in a.tools.split(",") if t]:
        try:
            if tool == "llmkit":
                texts, secs = run_llmkit(files, a.bin, a.repeat)
            elif tool == "trafilatura":
                texts, secs = run_trafilatura(pages, a.repeat)
            else:
                raise SystemExit("unknown tool " + tool)
        except ImportError as e:
            print("%-12s not installed (pip install trafilatura lxml_html_clean): %s; skipped"
                  % (tool, e))
            continue
        counts = [page_counts(gold[k], texts.get(k, "")) for k in keys]
        p, r, f = prf(counts)
        speed = mb * a.repeat / secs if secs > 0 else float("nan")
        print("%-12s %6.3f %6.3f %6.3f %7.3f  %10.1f" % (tool, f, p, r, bootstrap_sd(counts), speed))
        if a.worst:
            ranked = sorted(zip(keys, counts), key=lambda kc: kc[1][1], reverse=True)
            for k, c in ranked[:a.worst]:
                print("  fp %.3f fn %.3f  %s" % (c[1], c[2], k))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
