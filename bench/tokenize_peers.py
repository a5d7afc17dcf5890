#!/usr/bin/env python3
"""Peers of llm-tokenize: tiktoken and Hugging Face tokenizers, both optional.

  check --ranks FILE --encoding NAME --docs D.jsonl --ours O.jsonl
      tiktoken (ranks read from the local file, pattern and special tokens from tiktoken's own
      definition of the encoding) must give the ids of llm-tokenize's JSONL output, line by line.
  bench --ranks FILE --encoding NAME [--hf tokenizer.json] --docs D.jsonl
      MB/s of tiktoken (and HF tokenizers) encoding the documents' text on one thread; prints
      "tiktoken MBPS" and "hf MBPS" lines, or "NAME unavailable".
"""
import argparse
import json
import sys
import time


def tiktoken_encoding(ranks, name):
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as pub
    # tiktoken's own definition of the encoding, with the ranks read from the local file
    # instead of downloaded (load_tiktoken_bpe checks the same SHA-256).
    real = tiktoken.load.load_tiktoken_bpe
    pub.load_tiktoken_bpe = lambda url, expected_hash=None: real(ranks, expected_hash)
    spec = getattr(pub, name)()
    spec.pop("explicit_n_vocab", None)
    return tiktoken.Encoding(**spec)


def texts(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def check(a):
    enc = tiktoken_encoding(a.ranks, a.encoding)
    bad = 0
    with open(a.ours) as f:
        for i, (t, line) in enumerate(zip(texts(a.docs), f)):
            if enc.encode_ordinary(t) != json.loads(line)["tokens"]:
                bad += 1
                print(f"document {i + 1}: ids differ", file=sys.stderr)
    return 1 if bad else 0


def rate(fn, docs):
    n = sum(len(t.encode("utf-8")) for t in docs)
    best = None
    for _ in range(2):
        t0 = time.perf_counter()
        for t in docs:
            fn(t)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return n / best / 1e6


def bench(a):
    docs = texts(a.docs)
    try:
        enc = tiktoken_encoding(a.ranks, a.encoding)
        print(f"tiktoken {rate(enc.encode_ordinary, docs):.2f}")
    except ImportError:
        print("tiktoken unavailable")
    if a.hf:
        try:
            from tokenizers import Tokenizer
            tk = Tokenizer.from_file(a.hf)
            print(f"hf {rate(lambda t: tk.encode(t, add_special_tokens=False), docs):.2f}")
        except ImportError:
            print("hf unavailable")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["check", "bench"])
    p.add_argument("--ranks", required=True)
    p.add_argument("--encoding", required=True)
    p.add_argument("--docs", required=True)
    p.add_argument("--ours")
    p.add_argument("--hf")
    a = p.parse_args()
    return check(a) if a.cmd == "check" else bench(a)


if __name__ == "__main__":
    sys.exit(main())
