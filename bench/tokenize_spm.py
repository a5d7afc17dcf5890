"""The sentencepiece library's side of bench/tokenize_spm.sh.

  tokenize_spm.py MODEL DOCS [OURS]
Prints "spm SECONDS": the CPU seconds of encoding DOCS' texts on one thread (the model's
load not counted). With OURS (llm-tokenize -f jsonl --no-eos of DOCS), exits 1 unless every
document's ids are the same.
"""
import json
import sys
import time

import sentencepiece as spm

def main(model, docs, ours=None):
    texts = [json.loads(l)["text"] for l in open(docs, encoding="utf-8")]
    sp = spm.SentencePieceProcessor(model_file=model, num_threads=1)
    t0 = time.process_time()
    ids = [sp.encode(t) for t in texts]
    t = time.process_time() - t0
    print(f"spm {t:.3f}")
    if ours:
        got = [json.loads(l)["tokens"] for l in open(ours)]
        same = sum(a == b for a, b in zip(ids, got))
        print(f"identical {same} of {len(ids)}")
        return 0 if same == len(ids) == len(got) else 1
    return 0

if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
