#!/usr/bin/env python3
"""Write lib/text/fineweb2.h from FineWeb-2's per-language configs (lib/text/fineweb2/*.yml).

Usage: python3 scripts/fineweb2-langs.py [DIR] > lib/text/fineweb2.h

Each config gives, for one language, the thresholds of FineWeb-2's three datatrove filter
calls and the stop words (huggingface/fineweb-2, fineweb-2-pipeline.py). The header holds them
as comma-separated lists in one language order, for the parameter table (lib/text/filter.c)
and the language rows (lib/text/quality.c). Needs PyYAML (Debian python3-yaml).
"""
import glob
import os
import sys

import yaml

# ISO 639-1 code of each configured language, and the tags that also name it (639-3 codes of
# its macrolanguage); Chinese tags are llm_quality_is_zh's.
ISO1 = {"arb": ("ar", "ara"), "cmn": ("zh", "zho"), "deu": ("de", ""), "fra": ("fr", ""),
        "ind": ("id", ""), "ita": ("it", ""), "jpn": ("ja", ""), "kor": ("ko", ""),
        "nld": ("nl", ""), "pol": ("pl", ""), "por": ("pt", ""), "rus": ("ru", ""),
        "spa": ("es", ""), "tur": ("tr", ""), "vie": ("vi", "")}
# config key -> header list name; pairs ([n, value]) become one list per n
SCALARS = ["dup_line_frac", "line_punct_thr", "max_avg_word_length", "min_avg_word_length",
           "max_non_alpha_words_ratio", "new_line_ratio"]


def c_string(s):
    out = []
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o < 0xA0:
            out.append("\\x%02x" % o)
        else:
            out.append("\\u%04X" % o if o <= 0xFFFF else "\\U%08X" % o)
    return '"' + "".join(out) + '"'


def num(x):
    return repr(float(x)) if isinstance(x, float) else str(x)


def define(name, items):
    """#define name a, b, c: wrapped under 100 columns with backslashes."""
    lines, cur = [], "#define %s" % name
    for i, it in enumerate(items):
        piece = " " + it + ("," if i + 1 < len(items) else "")
        if len(cur) + len(piece) > 96:
            lines.append(cur + " \\")
            cur = "\t" + piece.lstrip()
        else:
            cur += piece
    lines.append(cur)
    return "\n".join(lines) + "\n"


def main():
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "lib", "text", "fineweb2")
    names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(d, "*.yml")))
    cfg = {}
    for n in names:
        with open(os.path.join(d, n + ".yml"), encoding="utf-8") as f:
            cfg[n] = yaml.safe_load(f)
    w = sys.stdout.write
    w("/* lib/text/fineweb2.h: written by scripts/fineweb2-langs.py from the configs in lib/text/fineweb2\n"
      " * (FineWeb-2's configs, Apache-2.0); do not edit, run the script. One entry per language,\n"
      " * in the order of LLM_FW2_LANGS. */\n#ifndef LLM_TEXT_FINEWEB2_H\n#define LLM_TEXT_FINEWEB2_H\n\n")
    w("#define LLM_FW2_NLANGS %d\n\n" % len(names))
    w("/* X(name, iso1, alias): name is LANG_Script, iso1 the two-letter code, alias another tag */\n")
    w("#define LLM_FW2_LANGS(X) \\\n")
    for n in names:
        iso1, alias = ISO1[n.split("_")[0]]
        w("\tX(%s, \"%s\", \"%s\") \\\n" % (n, iso1, alias))
    w("\n")
    w(define("LLM_FW2_ALL(x)", ["x"] * len(names)) + "\n")
    for k in SCALARS:
        w(define("LLM_FW2_" + k, [num(cfg[n][k]) for n in names]))
    for k in ("top_n_grams", "dup_n_grams"):
        ns = sorted({p[0] for n in names for p in cfg[n][k]})
        for g in ns:
            vals = []
            for n in names:
                v = dict((p[0], p[1]) for p in cfg[n][k])
                vals.append(num(v[g]))
            w(define("LLM_FW2_%s_%d" % (k, g), vals))
    w("\n")
    for n in names:
        w(define("LLM_FW2_STOP_" + n, [c_string(s) for s in cfg[n]["stopwords"]]))
    w("\n#endif\n")


if __name__ == "__main__":
    main()
