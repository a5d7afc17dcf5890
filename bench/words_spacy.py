#!/usr/bin/env python3
"""spaCy's tokenizer, the peer of lib/text/words, on the text of JSONL documents (bench/words.sh).

  words_spacy.py LANG FILE...    one JSON line: documents, bytes, words, CPU seconds, MB/s

The documents whose "lang" starts with LANG are read into memory first; then the tokenizer
that datatrove's word tokenizer uses for them (spacy.blank("en") for English; for Chinese
spacy.blank("zh") with its jieba segmenter, as datatrove sets it up for cmn_Hani) runs over
every text, and its CPU time (time.process_time, one pass) is reported. Words
are the tokens that are not white space, as datatrove counts them.
"""
import json
import logging
import sys
import time

import spacy


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: words_spacy.py LANG FILE...")
    lang, texts = sys.argv[1], []
    for f in sys.argv[2:]:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                if isinstance(d.get("text"), str) and str(d.get("lang", "")).startswith(lang):
                    texts.append(d["text"])
    if lang == "zh":
        import jieba
        jieba.setLogLevel(logging.WARNING)
        nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "jieba"}}})
    else:
        nlp = spacy.blank(lang)
    tok = nlp.tokenizer
    tok("warm up")  # jieba builds its prefix dictionary on first use
    t0 = time.process_time()
    words = sum(sum(1 for t in tok(x) if not t.is_space) for x in texts)
    best = time.process_time() - t0
    nbytes = sum(len(x.encode("utf-8")) for x in texts)
    print(json.dumps({"docs": len(texts), "bytes": nbytes, "words": words, "seconds": round(best, 4),
                      "mb_s": round(nbytes / 1e6 / best, 2) if best else 0}))


if __name__ == "__main__":
    main()
