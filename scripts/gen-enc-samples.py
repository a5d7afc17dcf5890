#!/usr/bin/env python3
"""Build tests/data/cat/enc/: one UTF-8 text per legacy encoding that the charset tests use.

Each text is real prose in a language the encoding was made for: the translated messages
of GNU programs as Debian ships them (/usr/share/locale/LANG/LC_MESSAGES/*.mo, GPL-3+, the
Translation Project's translations), or, for Arabic, which no installed catalogue has, the
Arabic blurbs of samples/corpus/news.jsonl (CC BY-SA 3.0). Only lines that glibc's iconv can
encode in the target encoding are kept, so `iconv -t ENC` of the file is lossless and
decoding it back must give the file again. About MAX bytes each, deterministic.

usage: scripts/gen-enc-samples.py [OUTDIR]   (default tests/data/cat/enc)
"""
import gettext
import json
import os
import subprocess
import sys

MAX = 3000
DOMAINS = ["wget", "grep", "sed", "diffutils", "make", "findutils", "tar", "coreutils"]

# file name (the encoding as iconv names it), language catalogue
SAMPLES = [
    ("GB18030", "zh_CN"), ("BIG5", "zh_TW"), ("SHIFT_JIS", "ja"), ("EUC-JP", "ja"),
    ("ISO-2022-JP", "ja"), ("EUC-KR", "ko"),
    ("CP1250", "cs"), ("ISO-8859-2", "pl"), ("CP1251", "ru"), ("ISO-8859-5", "bg"),
    ("KOI8-R", "ru"), ("KOI8-U", "uk"), ("IBM866", "ru"), ("CP1252", "fr"), ("ISO-8859-15", "de"),
    ("CP1253", "el"), ("ISO-8859-7", "el"), ("CP1254", "tr"), ("ISO-8859-9", "tr"),
    ("CP1255", "he"), ("ISO-8859-8", "he"), ("CP1256", "ar"), ("ISO-8859-6", "ar"),
    ("CP1257", "lt"), ("ISO-8859-13", "lt"), ("ISO-8859-4", "lt"), ("CP1258", "vi"),
    ("ISO-8859-3", "eo"), ("ISO-8859-10", "da"), ("ISO-8859-14", "ga"), ("ISO-8859-16", "ro"),
    ("CP874", "th"),
]


def catalogue_lines(lang):
    """Translated messages of lang, one text line each, in a fixed order."""
    if lang == "ar":
        top = os.path.join(os.path.dirname(__file__), "..")
        for line in open(os.path.join(top, "samples/corpus/news.jsonl"), encoding="utf-8"):
            rec = json.loads(line)
            if rec.get("lang") == "ar":
                yield from rec["text"].splitlines()
        return
    for dom in DOMAINS:
        path = "/usr/share/locale/%s/LC_MESSAGES/%s.mo" % (lang, dom)
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            cat = gettext.GNUTranslations(f)._catalog
        for key in sorted(cat, key=lambda k: k if isinstance(k, str) else k[0]):
            if key == "":
                continue
            for line in cat[key].splitlines():
                yield line


def encodable(line, enc):
    r = subprocess.run(["iconv", "-f", "UTF-8", "-t", enc], input=line.encode(),
                       capture_output=True)
    return r.returncode == 0


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/cat/enc"
    os.makedirs(out, exist_ok=True)
    for enc, lang in SAMPLES:
        seen, text, size = set(), [], 0
        for line in catalogue_lines(lang):
            line = line.strip()
            # prose only: lines with three letters or more beyond ASCII, no control characters
            if len(line) < 20 or line in seen or any(ord(c) < 32 for c in line):
                continue
            if sum(ord(c) > 127 and c.isalpha() for c in line) < 3:
                continue
            if not encodable(line, enc):
                continue
            seen.add(line)
            text.append(line)
            size += len(line.encode()) + 1
            if size >= MAX:
                break
        with open(os.path.join(out, enc + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(text) + "\n")
        print("%-12s %-6s %5d bytes, %3d lines" % (enc, lang, size, len(text)))


if __name__ == "__main__":
    main()
