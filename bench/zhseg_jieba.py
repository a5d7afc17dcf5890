#!/usr/bin/env python3
"""jieba, the peer of lib/text/zhseg, on the text of JSONL documents (bench/zhseg.sh).

  zhseg_jieba.py bench DICT FILE...         CPU seconds of jieba.lcut over all texts (one line)
  zhseg_jieba.py agree DICT SPANS FILE...   agreement of SPANS (zhseg_bench -s) with jieba

jieba is given the same dictionary file (jieba.set_dictionary), and its prefix dictionary is
built before timing, so both sides time segmentation alone, in CPU time (time.process_time).

Agreement, per word: a token is a byte span (offset, length) of a document's UTF-8 text.
Over all documents, with J the multiset of jieba.lcut's spans (HMM on) and Z zhseg's,
  recall    = |J & Z| / |J|    (jieba's words that zhseg also produced, same bytes exactly)
  precision = |J & Z| / |Z|
both over all tokens and over the tokens that are not white space; documents whose token
lists are identical are counted too. The first differences are printed for inspection.
"""
import json
import logging
import sys
import time

import jieba


def texts(files):
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                try:
                    t = json.loads(line).get("text")
                except ValueError:
                    continue
                if isinstance(t, str):
                    yield t


def spans(text, words):
    out, off = [], 0
    for w in words:
        n = len(w.encode("utf-8"))
        out.append((off, n))
        off += n
    return out


def setup(dict_path):
    jieba.setLogLevel(logging.WARNING)
    jieba.set_dictionary(dict_path)
    jieba.initialize()


def bench(dict_path, files):
    setup(dict_path)
    docs = list(texts(files))
    nbytes = sum(len(t.encode("utf-8")) for t in docs)
    t0 = time.process_time()
    ntok = sum(len(jieba.lcut(t)) for t in docs)
    s = time.process_time() - t0
    print(json.dumps({"docs": len(docs), "bytes": nbytes, "tokens": ntok, "seconds": round(s, 3),
                      "mb_s": round(nbytes / 1e6 / s, 3)}))


def agree(dict_path, span_file, files):
    setup(dict_path)
    both = jn = zn = 0
    both_ns = jn_ns = zn_ns = 0
    docs = same = shown = 0
    with open(span_file) as sf:
        for text in texts(files):
            zl = sf.readline().split()
            z = [tuple(map(int, s.split(","))) for s in zl]
            words = jieba.lcut(text)
            j = spans(text, words)
            b = text.encode("utf-8")
            docs += 1
            same += j == z
            js, zs = {}, {}
            for s in j:
                js[s] = js.get(s, 0) + 1
            for s in z:
                zs[s] = zs.get(s, 0) + 1
            for s, c in js.items():
                k = min(c, zs.get(s, 0))
                both += k
                if not b[s[0]:s[0] + s[1]].decode("utf-8", "replace").isspace():
                    both_ns += k
            jn += len(j)
            zn += len(z)
            jn_ns += sum(1 for s in j if not b[s[0]:s[0] + s[1]].decode("utf-8", "replace").isspace())
            zn_ns += sum(1 for s in z if not b[s[0]:s[0] + s[1]].decode("utf-8", "replace").isspace())
            if j != z and shown < 5:
                shown += 1
                k = next(i for i in range(min(len(j), len(z)) + 1) if i >= len(j) or i >= len(z) or j[i] != z[i])
                lo = max(0, k - 3)
                w = lambda sp: [b[o:o + n].decode("utf-8", "replace") for o, n in sp[lo:k + 4]]
                print("differs in document %d: jieba %s / zhseg %s" % (docs, w(j), w(z)), file=sys.stderr)
    print(json.dumps({
        "docs": docs, "docs_identical": same, "jieba_tokens": jn, "zhseg_tokens": zn, "common": both,
        "recall": round(both / max(jn, 1), 6), "precision": round(both / max(zn, 1), 6),
        "recall_nonspace": round(both_ns / max(jn_ns, 1), 6),
        "precision_nonspace": round(both_ns / max(zn_ns, 1), 6)}))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "bench":
        bench(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "agree":
        agree(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
