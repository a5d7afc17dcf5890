#!/usr/bin/env python3
"""Write OUT/report.html (and OUT/loss.svg) for a pipelines/Makefile run.

Reads what the stages left in OUT: each stage's --stats JSON (documents in/out per reason;
for the clean stage also per domain and language, with a bar per pair),
the shard manifest (tokens per domain), the trainer's metrics.jsonl (OUT/loss.svg), the run's
page that llm-report wrote (OUT/run.html: its curves, diagnosis and checkpoints), llm-eval's
JSON (validation loss, perplexity, bits per byte, accuracy), sample generations and the
per-stage times recorded by the Makefile. Standard library only; deterministic apart from
the timings it reports.
"""
import argparse
import glob
import html
import json
import os
import re

STAGES = ["cat", "clean", "dedup", "decon", "tox", "tokens", "noise", "shards"]


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def stage_stats(out, stage):
    """Sum the --stats files of one stage: records in/out/rejected and reasons."""
    total = {"in": 0, "out": 0, "rejected": 0, "reasons": {}, "seconds": 0.0, "files": 0}
    for path in sorted(glob.glob(os.path.join(out, stage, "*.stats.json"))):
        s = load_json(path)
        if not s:
            continue
        total["files"] += 1
        total["in"] += s.get("records_in", 0)
        total["out"] += s.get("records_out", 0)
        total["rejected"] += s.get("records_rejected", 0)
        total["seconds"] += s.get("seconds", 0.0)
        for r, n in s.get("rejected", {}).items():
            total["reasons"][r] = total["reasons"].get(r, 0) + n
    return total if total["files"] else None


def domain_langs(out):
    """Sum llm-clean's documents in/out and reasons per (domain, language) over the files."""
    pairs = {}
    for path in sorted(glob.glob(os.path.join(out, "clean", "*.stats.json"))):
        s = load_json(path) or {}
        for dom, langs in (s.get("domain_langs") or {}).items():
            for lang, d in langs.items():
                p = pairs.setdefault((dom, lang), {"in": 0, "out": 0, "reasons": {}})
                p["in"] += d.get("records_in", 0)
                p["out"] += d.get("records_out", 0)
                for r, n in (d.get("rejected") or {}).items():
                    p["reasons"][r] = p["reasons"].get(r, 0) + n
    return pairs


def bar(kept, total, width=160, height=12):
    """A small horizontal bar: the kept share in green, the rest grey."""
    w = 0 if not total else round(width * kept / total)
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">'
            '<rect width="%d" height="%d" fill="#ccc"/><rect width="%d" height="%d" fill="#2e8b57"/></svg>'
            % (width, height, width, height, w, height))


def fold_small(pairs):
    """Languages under 2% of their domain's documents, one row "other (N)" per domain."""
    totals = {}
    for (dom, _), p in pairs.items():
        totals[dom] = totals.get(dom, 0) + p["in"]
    out, other = {}, {}
    for (dom, lang), p in pairs.items():
        if p["in"] * 50 >= totals[dom] or lang in ("en", "zh", "zh-Hant"):
            out[(dom, lang)] = p
            continue
        o = other.setdefault(dom, {"in": 0, "out": 0, "reasons": {}, "langs": 0})
        o["in"] += p["in"]
        o["out"] += p["out"]
        o["langs"] += 1
        for r, n in p["reasons"].items():
            o["reasons"][r] = o["reasons"].get(r, 0) + n
    for dom, o in other.items():
        out[(dom, "other (%d)" % o["langs"])] = o
    return out


def clean_section(out):
    pairs = fold_small(domain_langs(out))
    if not pairs:
        return ""
    rows = []
    for (dom, lang), p in sorted(pairs.items(), key=lambda kv: (kv[0][0], -kv[1]["in"], kv[0][1])):
        top = sorted(p["reasons"].items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        pct = 100.0 * p["out"] / p["in"] if p["in"] else 0.0
        rows.append("<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%.1f%%</td><td>%s</td><td>%s</td></tr>"
                    % (html.escape(dom), html.escape(lang), p["in"], p["out"], pct, bar(p["out"], p["in"]),
                       html.escape(", ".join("%s %d" % kv for kv in top) or "-")))
    head = "".join("<th>%s</th>" % h for h in ["domain", "lang", "in", "out", "kept", "", "top reasons"])
    return ("<h2>Cleaning per domain and language</h2><p>llm-clean with the recipe: documents in "
            "and kept, and the most frequent reasons for the rest (languages under 2%% of a domain "
            "in one row).</p><table><tr>%s</tr>%s</table>"
            % (head, "".join(rows)))


def metrics(out):
    steps, loss, smooth, val = [], [], [], []
    path = os.path.join(out, "run", "metrics.jsonl")
    if not os.path.exists(path):
        return steps, loss, smooth, val
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if "event" in m or "step" not in m:
                continue
            if "loss" in m:
                steps.append(m["step"])
                loss.append(m["loss"])
                smooth.append(m.get("smoothed_loss", m["loss"]))
            if m.get("val_loss") is not None:
                val.append((m["step"], m["val_loss"]))
    return steps, loss, smooth, val


def svg_curve(steps, loss, smooth, val, width=640, height=320):
    if not steps:
        return ""
    pad = 48
    ys = loss + smooth + [v for _, v in val]
    lo, hi = min(ys), max(ys)
    if hi - lo < 1e-9:
        hi = lo + 1
    x0, x1 = min(steps), max(steps)
    if x1 == x0:
        x1 = x0 + 1

    def X(s):
        return pad + (s - x0) / (x1 - x0) * (width - 2 * pad)

    def Y(v):
        return height - pad - (v - lo) / (hi - lo) * (height - 2 * pad)

    def path(xs, vs):
        return " ".join(("M" if i == 0 else "L") + "%.1f,%.1f" % (X(s), Y(v))
                        for i, (s, v) in enumerate(zip(xs, vs)))

    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="12">' % (width, height),
             '<rect width="100%" height="100%" fill="white"/>',
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (pad, height - pad, width - pad, height - pad),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (pad, pad, pad, height - pad)]
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        parts.append('<text x="4" y="%.1f">%.2f</text>' % (Y(v) + 4, v))
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (pad, Y(v), width - pad, Y(v)))
    parts.append('<text x="%d" y="%d">step %d</text>' % (pad, height - pad + 20, x0))
    parts.append('<text x="%d" y="%d" text-anchor="end">step %d</text>' % (width - pad, height - pad + 20, x1))
    parts.append('<path d="%s" fill="none" stroke="#9bb7d4" stroke-width="1"/>' % path(steps, loss))
    parts.append('<path d="%s" fill="none" stroke="#1f4e79" stroke-width="2"/>' % path(steps, smooth))
    if val:
        parts.append('<path d="%s" fill="none" stroke="#c0392b" stroke-width="2"/>'
                     % path([s for s, _ in val], [v for _, v in val]))
        for s, v in val:
            parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="#c0392b"/>' % (X(s), Y(v)))
    parts.append('<text x="%d" y="16" fill="#1f4e79">train loss (smoothed)</text>' % (pad + 8))
    parts.append('<text x="%d" y="16" fill="#c0392b">validation loss</text>' % (pad + 170))
    parts.append("</svg>")
    return "\n".join(parts)


def run_part(out):
    """The run's part of the page: the style and the body of llm-report's page of OUT/run
    (OUT/run.html, which pipelines/Makefile writes); empty strings when there is none."""
    path = os.path.join(out, "run.html")
    if not os.path.exists(path):
        return "", ""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    style = re.search(r"<style>(.*?)</style>", text, re.S)
    body = re.search(r"<body>(.*)</body>", text, re.S)
    return (style.group(1) if style else ""), (body.group(1) if body else "")


def table(rows, header):
    h = "".join("<th>%s</th>" % html.escape(str(c)) for c in header)
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(c)) for c in r) for r in rows)
    return "<table><tr>%s</tr>%s</table>" % (h, body)


def main():
    ap = argparse.ArgumentParser(
        description="Write OUT/report.html (and OUT/loss.svg) for a pipelines/Makefile run.")
    ap.add_argument("out", nargs="?", default="demo",
                    help="the run's output directory, $(OUT) of the pipeline (default: demo)")
    out = ap.parse_args().out
    if not os.path.isdir(out):
        ap.error("%s: not a directory" % out)
    sections = []

    rows = []
    for st in STAGES:
        s = stage_stats(out, st)
        if not s:
            continue
        reasons = ", ".join("%s %d" % kv for kv in sorted(s["reasons"].items())) or "-"
        rows.append([st, s["in"], s["out"], s["rejected"], reasons])
    sections.append("<h2>Documents per stage</h2>" + table(rows, ["stage", "in", "out", "rejected", "rejected by reason"]))
    cs = clean_section(out)
    if cs:
        sections.append(cs)

    man = load_json(os.path.join(out, "shards", "manifest.json"))
    if man:
        drows = [[name, d.get("train_documents", ""), d.get("train_tokens", ""),
                  d.get("val_documents", ""), d.get("val_tokens", ""), d.get("truncated_documents", "")]
                 for name, d in sorted((man.get("domains") or {}).items())]
        sections.append("<h2>Tokens per domain</h2>" + table(
            drows, ["domain", "train docs", "train tokens", "val docs", "val tokens", "truncated docs"]))

    steps, loss, smooth, val = metrics(out)
    svg = svg_curve(steps, loss, smooth, val)
    if svg:
        with open(os.path.join(out, "loss.svg"), "w", encoding="utf-8") as f:
            f.write(svg + "\n")
    run_style, run_body = run_part(out)
    if run_body:
        sections.append(run_body)
    elif svg:
        sections.append("<h2>Loss</h2>" + svg)

    ev = load_json(os.path.join(out, "eval", "loss.json"))
    if ev:
        def fmt(x):
            return "-" if x is None else "%.4f" % x if isinstance(x, float) else x
        erows = [[name, d.get("tokens"), fmt(d.get("loss")), fmt(d.get("ppl")), fmt(d.get("bits_per_byte"))]
                 for name, d in sorted((ev.get("domains") or {}).items())]
        a = ev.get("all") or {}
        erows.append(["all", a.get("tokens"), fmt(a.get("loss")), fmt(a.get("ppl")), fmt(a.get("bits_per_byte"))])
        sections.append("<h2>Validation (step %s, %s tokens seen)</h2>" % (ev.get("step"), ev.get("tokens_seen"))
                        + table(erows, ["domain", "tokens", "loss", "perplexity", "bits/byte"]))
    ch = load_json(os.path.join(out, "eval", "choice.json"))
    if ch:
        crows = [[name, d.get("items"), d.get("acc"), d.get("acc_norm")]
                 for name, d in sorted((ch.get("domains") or {}).items())]
        a = ch.get("all") or {}
        crows.append(["all", a.get("items"), a.get("acc"), a.get("acc_norm")])
        sections.append("<h2>Multiple choice</h2>" + table(crows, ["domain", "items", "acc", "acc_norm"]))

    gens = []
    for path in sorted(glob.glob(os.path.join(out, "eval", "generate-*.txt"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            gens.append("<pre>%s</pre>" % html.escape(f.read()[:2000]))
    if gens:
        sections.append("<h2>Sample generations</h2>" + "".join(gens))

    times = {}
    for path in sorted(glob.glob(os.path.join(out, "times", "*.time"))):
        stage = os.path.basename(path).split(".", 1)[0]
        with open(path) as f:
            try:
                times[stage] = times.get(stage, 0.0) + float(f.read().strip())
            except ValueError:
                pass
    order = ["cat", "clean", "dedup", "decon", "tox", "tokenizer", "tokens", "noise", "shards", "train", "eval"]
    trows = [[st, "%.1f" % times[st]] for st in order if st in times]
    if trows:
        sections.append("<h2>Time per stage (s)</h2>" + table(trows, ["stage", "seconds"]))

    page = ("<!doctype html><html><head><meta charset='utf-8'><title>llmkit demo report</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
            "td:first-child,th:first-child{text-align:left}%s</style></head><body>"
            "<h1>llmkit demo report</h1>%s</body></html>\n" % (run_style, "\n".join(sections)))
    with open(os.path.join(out, "report.html"), "w", encoding="utf-8") as f:
        f.write(page)
    print(os.path.join(out, "report.html"))


main()
