#!/usr/bin/env python3
"""Main-text extraction: quality and speed of llmkit beside trafilatura and resiliparse.

Quality is scored as trafilatura's own evaluation does: every page has snippets its main
text must contain ("with") and must not contain ("without"). A "with" snippet found is a
true positive, missed a false negative; a "without" snippet found is a false positive,
absent a true negative. Precision, recall, accuracy and F1 ("score") are over all snippets
of all pages. Text and snippets are compared after NFKC and with white space collapsed, so
that line breaks, table cell separators and normalisation do not count.

Speed is MB of HTML per CPU second, in this one run: for llmkit the CPU time of
`llm-cat PAGES | llm-clean --filters none` (WARC parsing, decoding and JSON included), for
the Python tools the process time of their extraction calls alone (imports excluded), each
given the HTTP body bytes and left to decode them as it does.

Pages: a WARC file of response records (as crawls hold them); labels: JSONL, one object per
page: {"url": ..., "with": [...], "without": [...]}. Rerun on your own labelled pages with
--pages and --labels. Pages whose url hashes to 0 mod 3 are the held-out part, reported on
its own; the others are the development part.

usage: bench/html_eval.py [--pages WARC] [--labels JSONL] [--bin DIR] [--tools LIST]
                          [--repeat N] [--texts NAME=FILE] [--misses TOOL] [--json FILE]
"""
import argparse
import gzip
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import unicodedata
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def warc_records(path):
    """(WARC headers with lower-case names, block bytes) of each record of a WARC file,
    gzipped or not."""
    raw = open(path, "rb").read()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    i = 0
    while True:
        j = data.find(b"WARC/1.", i)
        if j < 0:
            return
        he = data.find(b"\r\n\r\n", j)
        h = {}
        for line in data[j:he].decode("utf-8", "replace").split("\r\n")[1:]:
            k, _, v = line.partition(":")
            h[k.strip().lower()] = v.strip()
        n = int(h.get("content-length", 0))
        yield h, data[he + 4:he + 4 + n]
        i = he + 4 + n


def warc_pages(path):
    """(url, HTTP body bytes) of each response record; chunked bodies are de-chunked and
    gzip/deflate bodies decoded, as a crawl's reader must."""
    for h, block in warc_records(path):
        if h.get("warc-type") != "response":
            continue
        hb = block.find(b"\r\n\r\n")
        headers = block[:hb].decode("latin-1").lower().split("\r\n")
        body = block[hb + 4:]
        if any(l.startswith("transfer-encoding:") and "chunked" in l for l in headers):
            out, k = b"", 0
            while k < len(body):
                e = body.find(b"\r\n", k)
                size = int(body[k:e].split(b";")[0], 16)
                if size == 0:
                    break
                out += body[e + 2:e + 2 + size]
                k = e + 2 + size + 2
            body = out
        for l in headers:
            if l.startswith("content-encoding:") and "gzip" in l:
                body = gzip.decompress(body)
            elif l.startswith("content-encoding:") and "deflate" in l:
                body = zlib.decompress(body)
        yield h.get("warc-target-uri", "").strip("<>"), body


def norm(s):
    return " ".join(unicodedata.normalize("NFKC", s).split())


def heldout(url):
    return int(hashlib.md5(url.encode()).hexdigest(), 16) % 3 == 0


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_llmkit(pages_path, bindir, repeat):
    """url -> text, and CPU seconds for `repeat` passes over the pages."""
    cat, clean = os.path.join(bindir, "llm-cat"), os.path.join(bindir, "llm-clean")
    cmd = "%s -q %%s | %s -q --filters none" % (cat, clean)
    out = subprocess.run(cmd % pages_path, shell=True, capture_output=True, check=True).stdout
    texts = {}
    for line in out.decode().splitlines():
        rec = json.loads(line)
        texts[rec["url"]] = rec["text"]
    with tempfile.NamedTemporaryFile(suffix=".warc.gz") as big:
        data = open(pages_path, "rb").read()
        for _ in range(repeat):
            big.write(data)
        big.flush()
        t0 = cpu_children()
        subprocess.run(cmd % big.name + " >/dev/null", shell=True, check=True)
        secs = cpu_children() - t0
    return texts, secs


def run_python(name, pages, repeat):
    if name == "trafilatura":
        import trafilatura

        def extract(body):
            return trafilatura.extract(body, include_comments=False, include_tables=True) or ""
    elif name == "resiliparse":
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.encoding import bytes_to_str, detect_encoding
        from resiliparse.parse.html import HTMLTree

        def extract(body):
            tree = HTMLTree.parse(bytes_to_str(body, detect_encoding(body)))
            return extract_plain_text(tree, main_content=True)
    else:
        raise SystemExit("unknown tool " + name)
    texts = {url: extract(body) for url, body in pages}  # also warms up
    t0 = time.process_time()
    for _ in range(repeat):
        for _, body in pages:
            extract(body)
    return texts, time.process_time() - t0


def score(texts, labels, part=None):
    tp = fn = fp = tn = 0
    misses = []
    for lab in labels:
        if part is not None and heldout(lab["url"]) != part:
            continue
        text = norm(texts.get(lab["url"], ""))
        for s in lab["with"]:
            if norm(s) in text:
                tp += 1
            else:
                fn += 1
                misses.append((lab["url"], "missing", s))
        for s in lab["without"]:
            if norm(s) in text:
                fp += 1
                misses.append((lab["url"], "kept", s))
            else:
                tn += 1
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "accuracy": (tp + tn) / max(1, tp + tn + fp + fn),
            "f1": f, "tp": tp, "fn": fn, "fp": fp, "tn": tn}, misses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", default=os.path.join(HERE, "html-eval", "pages.warc.gz"))
    ap.add_argument("--labels", default=os.path.join(HERE, "html-eval", "labels.jsonl"))
    ap.add_argument("--bin", default=os.path.join(TOP, "bin"))
    ap.add_argument("--tools", default="llmkit,trafilatura,resiliparse")
    ap.add_argument("--repeat", type=int, default=5, help="passes over the pages for speed")
    ap.add_argument("--texts", action="append", default=[], metavar="NAME=FILE",
                    help="also score the texts in FILE (JSONL: url, text) as tool NAME (no speed)")
    ap.add_argument("--misses", help="print the missed and kept snippets of TOOL (development part)")
    ap.add_argument("--json", help="write the figures as JSON to FILE")
    a = ap.parse_args()
    labels = [json.loads(l) for l in open(a.labels, encoding="utf-8") if l.strip()]
    pages = list(warc_pages(a.pages))
    mb = sum(len(b) for _, b in pages) / 1e6
    n_dev = sum(not heldout(l["url"]) for l in labels)
    print("%d pages (%d development, %d held out), %.2f MB of HTML, %d snippets; speed over %d passes"
          % (len(pages), n_dev, len(labels) - n_dev, mb,
             sum(len(l["with"]) + len(l["without"]) for l in labels), a.repeat))
    print("%-12s %6s %6s %6s %6s  %6s %6s  %10s" % ("tool", "score", "prec", "recall", "acc",
                                                   "dev", "held", "MB/s/CPU"))
    results = {}
    given = dict(t.split("=", 1) for t in a.texts)
    for tool in [t for t in a.tools.split(",") if t] + list(given):
        try:
            if tool in given:
                texts = {}
                for line in open(given[tool], encoding="utf-8"):
                    rec = json.loads(line)
                    texts[rec["url"]] = rec["text"]
                secs = 0.0
            elif tool == "llmkit":
                texts, secs = run_llmkit(a.pages, a.bin, a.repeat)
            else:
                texts, secs = run_python(tool, pages, a.repeat)
        except ImportError as e:
            print("%-12s not installed (pip install trafilatura lxml_html_clean resiliparse): %s; skipped"
                  % (tool, e))
            continue
        s, _ = score(texts, labels)
        dev, misses = score(texts, labels, False)
        held, _ = score(texts, labels, True)
        speed = mb * a.repeat / secs if secs > 0 else float("nan")
        results[tool] = {"all": s, "development": dev, "held_out": held, "mb_per_cpu_s": speed,
                         "cpu_s": secs}
        print("%-12s %6.3f %6.3f %6.3f %6.3f  %6.3f %6.3f  %10.1f" % (
            tool, s["f1"], s["precision"], s["recall"], s["accuracy"], dev["f1"], held["f1"], speed))
        if a.misses == tool:
            for url, kind, snip in misses:
                print("  %-7s %.70s  %s" % (kind, snip, url))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"pages": len(pages), "mb": mb, "repeat": a.repeat, "tools": results}, f, indent=1)


if __name__ == "__main__":
    main()
