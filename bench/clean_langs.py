#!/usr/bin/env python3
"""Agreement of llm-clean with FineWeb-2's filters per language, on text nobody here chose.

The text: every translated manual page installed under /usr/share/man/LANG (Debian's
manpages-* and the packages' own translations: human-written German, French, Spanish, ...),
rendered by groff to plain paragraphs, one document per page. FineWeb-2 filters each
language with datatrove's GopherRepetitionFilter, FineWebQualityFilter and
GopherQualityFilter, the values of configs/LANG.yml (lib/text/fineweb2/) and language=LANG,
which picks the word tokenizer (spaCy's for the language; Kiwi for Korean, SudachiPy for
Japanese, pyvi for Vietnamese). This script runs those filters, each alone, and
`llm-clean --filters F --normalize none` on the same documents, and prints per language the
keep/drop agreement per filter, the share kept by all three on each side, and the share
llm-clean kept before it had per-language settings (the English rules: lang=en).
A language without settings (sv) shows what llm-clean does with it: lang_not_configured.

Usage: python3 bench/clean_langs.py [--bin bin/llm-clean] [--langs de,fr,...] [--max N]
Needs `pip install datatrove spacy pyyaml` (and kiwipiepy, sudachipy sudachidict_core, pyvi
for ko, ja, vi); a language whose tokenizer is missing is skipped with the reason.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clean_fineweb2 import run_datatrove as fw2_run_datatrove  # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FW2 = {"ar": "arb_Arab", "de": "deu_Latn", "fr": "fra_Latn", "id": "ind_Latn", "it": "ita_Latn",
       "ja": "jpn_Jpan", "ko": "kor_Hang", "nl": "nld_Latn", "pl": "pol_Latn", "pt": "por_Latn",
       "ru": "rus_Cyrl", "es": "spa_Latn", "tr": "tur_Latn", "vi": "vie_Latn"}
FILTERS = ["gopher-rep", "fineweb", "gopher-quality"]


def man_docs(lang, limit):
    docs = []
    for path in sorted(glob.glob("/usr/share/man/%s/man*/*" % lang))[:limit]:
        try:
            src = subprocess.run(["zcat", "-f", path], stdout=subprocess.PIPE, check=True).stdout
            out = subprocess.run(["groff", "-k", "-man", "-Tutf8", "-P-cbou", "-rLL=5000n",
                                  "-rHY=0", "-dAD=l"], input=src, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, check=True).stdout
        except subprocess.CalledProcessError:
            continue
        lines = out.decode("utf-8", "replace").splitlines()[1:-1]  # page header and footer
        paras, cur = [], []
        for l in lines:
            l = l.strip()
            if l:
                cur.append(l)
            elif cur:
                paras.append(" ".join(cur))
                cur = []
        if cur:
            paras.append(" ".join(cur))
        text = "\n".join(paras).strip()
        if text:
            docs.append({"id": "%s:%s" % (lang, os.path.relpath(path, "/usr/share/man")), "text": text})
    return docs


def run_datatrove(docs, name):
    import yaml
    with open(os.path.join(TOP, "lib", "text", "fineweb2", name + ".yml"), encoding="utf-8") as f:
        return fw2_run_datatrove(docs, yaml.safe_load(f), name)


def run_ours(binary, docs, lang, flt):
    with tempfile.TemporaryDirectory() as tmp:
        inp, rej = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "rej.jsonl")
        with open(inp, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"id": d["id"], "lang": lang, "text": d["text"]}, ensure_ascii=False) + "\n")
        res = subprocess.run([binary, "-q", "--normalize", "none", "--filters", flt, "--rejects", rej, inp],
                             stdout=subprocess.PIPE, check=True)
        kept = {json.loads(l)["id"] for l in res.stdout.decode().splitlines()}
        reasons = {}
        with open(rej, encoding="utf-8") as f:
            for l in f:
                r = json.loads(l)
                reasons[r["id"]] = r["reject_reason"]
    return ["keep" if d["id"] in kept else reasons.get(d["id"], "?") for d in docs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(TOP, "bin", "llm-clean"))
    ap.add_argument("--langs", default="de,fr,es,it,nl,pl,pt,ru,tr,id,ja,ko,sv")
    ap.add_argument("--max", type=int, default=200, help="pages per language")
    a = ap.parse_args()
    print("%-4s %5s  %-28s %-9s %-9s %-12s" % ("lang", "docs", "agree rep/fineweb/quality", "kept dt", "kept ours",
                                            "kept as en"))
    for lang in a.langs.split(","):
        docs = man_docs(lang, a.max)
        if not docs:
            print("%-4s no pages under /usr/share/man/%s" % (lang, lang))
            continue
        allf = ",".join(FILTERS)
        ours_all = run_ours(a.bin, docs, lang, allf)
        as_en = run_ours(a.bin, docs, "en", allf)
        kept = lambda rows: sum(r == "keep" for r in rows)
        if lang not in FW2:
            reasons = sorted({r for r in ours_all if r != "keep"})
            print("%-4s %5d  %-28s %-9s %-9s %-12s %s" % (lang, len(docs), "(no FineWeb-2 settings)", "-",
                  "%d" % kept(ours_all), "%d" % kept(as_en), " ".join(reasons)))
            continue
        try:
            theirs = run_datatrove(docs, FW2[lang])
        except Exception as e:  # a missing word tokenizer
            print("%-4s %5d  datatrove: %s" % (lang, len(docs), str(e).splitlines()[0][:80]))
            continue
        agree = []
        for k, flt in enumerate(FILTERS):
            ours = run_ours(a.bin, docs, lang, flt)
            agree.append(sum((o == "keep") == (t[k] == "keep") for o, t in zip(ours, theirs)))
        dt_kept = sum(all(x == "keep" for x in t) for t in theirs)
        print("%-4s %5d  %-28s %-9d %-9d %-12d" % (lang, len(docs), "/".join("%.3f" % (x / len(docs)) for x in agree),
                                                 dt_kept, kept(ours_all), kept(as_en)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
