#!/usr/bin/env python3
"""Agreement of llm-clean with FineWeb-2's Chinese filters on the Chinese samples.

FineWeb-2 (huggingface/fineweb-2, fineweb-2-pipeline.py) filters each language with
datatrove's GopherRepetitionFilter, FineWebQualityFilter and GopherQualityFilter, the values of
configs/LANG.yml and language=LANG, which picks the word tokenizer: for cmn_Hani spaCy's
Chinese tokenizer with jieba. (datatrove's plain "zh" would not segment at all.) This script
runs those three filters, each alone, with the cmn_Hani values (tests/data/clean/
fineweb2-cmn_Hani.yml) on every record of samples/corpus whose lang is zh or zh-Hant, runs
`llm-clean --filters F --normalize none` on the same records, and prints the keep/drop
agreement per filter and every disagreement with both reasons.

Usage: python3 bench/clean_fineweb2.py [--bin bin/llm-clean] [--recipe FILE] [--golden FILE]
  --recipe FILE  pass --recipe FILE to llm-clean (its zh thresholds are then the recipe's)
  --golden FILE  also write datatrove's decisions (id, then one reason or "keep" per filter,
                 tab-separated): the reference tests/unit/test_quality.c checks against.
Needs `pip install datatrove spacy jieba pyyaml`; exits 0 with a note when they are missing.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clean_datatrove import load_docs  # noqa: E402

FILTERS = ["gopher-rep", "fineweb", "gopher-quality"]
LANG = "cmn_Hani"


def datatrove_filters(cfg, lang=LANG):
    """The three filters exactly as fineweb-2-pipeline.py builds them for one language."""
    from datatrove.pipeline.filters import FineWebQualityFilter, GopherQualityFilter, GopherRepetitionFilter
    return [
        GopherRepetitionFilter(language=lang, dup_para_frac=0, dup_line_char_frac=0, dup_para_char_frac=0,
                               dup_line_frac=cfg["dup_line_frac"], top_n_grams=cfg["top_n_grams"],
                               dup_n_grams=cfg["dup_n_grams"]),
        FineWebQualityFilter(language=lang, short_line_thr=999, char_duplicates_ratio=0.1,
                             line_punct_thr=cfg["line_punct_thr"], new_line_ratio=cfg["new_line_ratio"]),
        GopherQualityFilter(language=lang, max_avg_word_length=cfg["max_avg_word_length"],
                            min_avg_word_length=cfg["min_avg_word_length"], stop_words=cfg["stopwords"],
                            max_non_alpha_words_ratio=cfg["max_non_alpha_words_ratio"], min_stop_words=2),
    ]


def run_datatrove(docs, cfg, lang=LANG):
    from datatrove.data import Document
    filters = datatrove_filters(cfg, lang)
    out = []
    for d in docs:
        row = []
        for f in filters:
            r = f.filter(Document(text=d["text"], id=d["id"]))
            row.append("keep" if r is True else r[1])
        out.append(row)
    return out


def run_ours(binary, recipe, docs, flt):
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in.jsonl")
        rej = os.path.join(tmp, "rejects.jsonl")
        with open(inp, "w", encoding="utf-8") as f:
            for d in docs:
                # no domain: the web settings of the language apply, whatever the sample's domain
                f.write(json.dumps({"id": d["id"], "lang": d["lang"], "text": d["text"]},
                                   ensure_ascii=False) + "\n")
        cmd = [binary, "-q", "--normalize", "none", "--filters", flt, "--rejects", rej, inp]
        if recipe:
            cmd[1:1] = ["--recipe", recipe]
        res = subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
        kept = {json.loads(l)["id"] for l in res.stdout.decode().splitlines()}
        reasons = {}
        with open(rej, encoding="utf-8") as f:
            for l in f:
                r = json.loads(l)
                reasons[r["id"]] = r["reject_reason"]
    return [("keep" if d["id"] in kept else reasons.get(d["id"], "?")) for d in docs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden")
    ap.add_argument("--bin", default="bin/llm-clean")
    ap.add_argument("--recipe")
    a = ap.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        import datatrove  # noqa: F401
        import jieba  # noqa: F401
        import spacy  # noqa: F401
        import yaml
    except ImportError:
        print("clean_fineweb2: datatrove, spacy, jieba or pyyaml not installed "
              "(pip install datatrove spacy jieba pyyaml); skipped")
        return 0
    import logging
    jieba.setLogLevel(logging.WARNING)
    with open(os.path.join(top, "tests/data/clean/fineweb2-cmn_Hani.yml"), encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    docs = load_docs(top, ("zh", "zh-Hant"))
    mb = sum(len(d["text"].encode()) for d in docs) / 1e6
    print(f"{len(docs)} Chinese documents (zh, zh-Hant), {mb:.2f} MB of text; datatrove with "
          f"language={LANG} (spaCy + jieba) and the FineWeb-2 {LANG} values")
    dt = run_datatrove(docs, cfg)
    if a.golden:
        from importlib.metadata import version
        with open(a.golden, "w", encoding="utf-8") as f:
            f.write("# datatrove %s (spaCy %s, jieba %s) decisions with FineWeb-2's %s filters on the "
                    "Chinese samples: id, %s\n" % (version("datatrove"), version("spacy"), jieba.__version__,
                                                   LANG, ", ".join(FILTERS)))
            for d, row in zip(docs, dt):
                f.write("\t".join([d["id"]] + row) + "\n")
    for k, flt in enumerate(FILTERS):
        ours = run_ours(os.path.join(top, a.bin), a.recipe, docs, flt)
        agree = sum((x == "keep") == (y[k] == "keep") for x, y in zip(ours, dt))
        print(f"{flt:15s} agreement {agree}/{len(docs)} = {100 * agree / len(docs):.2f}%")
        shown = 0
        for d, x, y in zip(docs, ours, dt):
            if (x == "keep") != (y[k] == "keep"):
                shown += 1
                if shown <= 20:
                    print(f"    {d['id']}: datatrove {y[k]}, llm-clean {x}")
        if shown > 20:
            print(f"    ... {shown - 20} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
