#!/usr/bin/env python3
"""Publication dates of web pages: llm-clean's "published" beside htmldate, on pages whose
dates are known.

The pages are htmldate's own public evaluation set (adbar/htmldate, Apache-2.0): the 200
news pages of 2020 in tests/test_set/ with their dates in tests/eval_mediacloud_2020.json
({url: {"file", "date"}}), many languages. Pass the folder that holds them (a checkout's
tests/) as --tests, or HTMLDATE_TESTS; without it the bench is skipped.

For each tool, over the pages with a known date: the share given a date (found) and the
share given the right one (correct); over the pages the set marks undated ("nan"): the share
given a date anyway (false); and pages per CPU second. llmkit's time is the user + system time
of `llm-clean --filters none` over JSONL records of the pages (HTML to text included, so an
upper bound of the date's own cost); htmldate's the process time of its find_date calls
(original_date=True: the publication date, not the last change).

usage: bench/pubdate_eval.py [--tests DIR] [--bin DIR] [--misses]
"""
import argparse
import json
import os
import resource
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_llmkit(pages, bindir):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as f:
        for url, html in pages:
            f.write(json.dumps({"format": "html", "url": url, "text": html}, ensure_ascii=False))
            f.write("\n")
        f.flush()
        t0 = cpu_children()
        out = subprocess.run([os.path.join(bindir, "llm-clean"), "-q", "--filters", "none",
                              f.name], capture_output=True, check=True).stdout
        secs = cpu_children() - t0
    got = [json.loads(l).get("published") for l in out.decode().splitlines()]
    return dict(zip([u for u, _ in pages], got)), secs


def run_htmldate(pages):
    from htmldate import find_date
    t0 = time.process_time()
    got = {u: find_date(h, url=u, original_date=True) for u, h in pages}
    return got, time.process_time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tests", default=os.environ.get("HTMLDATE_TESTS", ""))
    ap.add_argument("--bin", default=os.path.join(TOP, "bin"))
    ap.add_argument("--misses", action="store_true", help="list llmkit's wrong and missed pages")
    a = ap.parse_args()
    truth_path = os.path.join(a.tests, "eval_mediacloud_2020.json")
    if not a.tests or not os.path.exists(truth_path):
        print("publication dates: no htmldate test pages (HTMLDATE_TESTS=htmldate/tests); skipped")
        return
    truth = json.load(open(truth_path, encoding="utf-8"))
    pages, want = [], {}
    for url, v in sorted(truth.items()):
        raw = open(os.path.join(a.tests, "test_set", v["file"]), "rb").read()
        pages.append((url, raw.decode("utf-8", "replace")))
        want[url] = v["date"] if isinstance(v["date"], str) else "nan"  # JSON NaN: undated
    print("publication dates: %d pages of htmldate's evaluation set (news of 2020)" % len(pages))
    dated = [u for u in want if want[u] != "nan"]
    undated = [u for u in want if want[u] == "nan"]
    print("%d pages with a known date, %d undated" % (len(dated), len(undated)))
    print("%-10s %7s %8s %7s %12s" % ("tool", "found", "correct", "false", "pages/CPU s"))
    for tool in ("llmkit", "htmldate"):
        try:
            got, secs = run_llmkit(pages, a.bin) if tool == "llmkit" else run_htmldate(pages)
        except ImportError as e:
            print("%-10s not installed (pip install htmldate): %s; skipped" % (tool, e))
            continue
        found = sum(1 for u in dated if got.get(u))
        right = sum(1 for u in dated if got.get(u) == want[u])
        false = sum(1 for u in undated if got.get(u))
        print("%-10s %7.3f %8.3f %7.3f %12.0f" % (
            tool, found / len(dated), right / len(dated), false / max(1, len(undated)),
            len(want) / secs if secs > 0 else float("nan")))
        if a.misses and tool == "llmkit":
            for u in want:
                if got.get(u) != (want[u] if want[u] != "nan" else None):
                    print("  want %s got %-10s %s" % (want[u], got.get(u) or "-", u))


if __name__ == "__main__":
    main()
