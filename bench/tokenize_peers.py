#!/usr/bin/env python3
"""Peers of llm-tokenize: tiktoken, Hugging Face tokenizers and quicktok, all optional.

  check --ranks FILE --encoding NAME --docs D.jsonl --ours O.jsonl
      tiktoken (ranks read from the local file, pattern and special tokens from tiktoken's own
      definition of the encoding) must give the ids of llm-tokenize's JSONL output, line by line.
  bench --ranks FILE --encoding NAME [--hf tokenizer.json | --hf ranks] [--quicktok DIR]
        [--llm E --llm-input F --llm-empty Z --llm-bytes N --rounds R] --docs D.jsonl
      MB/s of tiktoken (encode_ordinary per document), HF tokenizers (its batch API,
      encode_batch_fast, held to one thread: RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false)
      and quicktok (its C ABI through ctypes, one call per document) encoding the documents'
      text on one thread, from CPU time (best of two; tiktoken best of R rounds, default 5), so
      that a busy machine does not distort the ratios much. Prints "NAME MBPS SAME/DOCS" per
      peer (documents whose ids equal tiktoken's), or "NAME unavailable". "--hf ranks" gives HF the rank file through
      transformers' TikTokenConverter, as transformers loads one. DIR is a quicktok source
      tree built with its Makefile (build/libquicktok.so, data/); it has no r50k.
      With --llm, tiktoken and llm-tokenize (-t FILE -e E, from PATH) are timed in R
      alternating rounds (default 5; each round a tiktoken pass, llm-tokenize on F, which holds
      N bytes of text, and on the empty input Z, its load time), best of the rounds for each,
      and "llm-tokenize MBPS LOAD" is printed first: on a machine whose speed drifts from one
      second to the next (a shared host), timing the two minutes apart moved their ratio by a
      third from one run to the next.
  Encodings that tiktoken does not define (llama3, qwen) take their pattern from
  tests/data/tokenize/gen-peer-tokenizers.py and no special tokens.
  train --docs D.jsonl --vocab-size N --out tokenizer.json
      HF tokenizers' BPE trainer (ByteLevel, like llm-tokenize train); prints "hf-train SECONDS".
  hfcheck --hf tokenizer.json --docs D.jsonl --ours O.jsonl [--decoded T.jsonl]
      HF tokenizers' ids (no post-processor) against llm-tokenize's JSONL output, line by line;
      with --decoded, llm-tokenize decode's texts against HF's decode of the same ids. Prints
      "N of M documents identical" and exits 1 on any difference.
"""
import argparse
import ctypes
import json
import os
import sys
import time

# Before tokenizers is imported: its batch API on one thread, for the single-thread figure.
os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"


def peer_patterns():
    """The patterns of the encodings tiktoken lacks, from the peer tokenizers' generator."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                        "tokenize", "gen-peer-tokenizers.py")
    spec = importlib.util.spec_from_file_location("gen_peer_tokenizers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {"llama3": mod.LLAMA3_PAT, "qwen": mod.QWEN_PAT}


def tiktoken_encoding(ranks, name):
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as pub
    own = peer_patterns()
    if name in own:
        return tiktoken.Encoding(name=name, pat_str=own[name], special_tokens={},
                                 mergeable_ranks=tiktoken.load.load_tiktoken_bpe(ranks))
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


def rate(encode_all, docs):
    """MB/s of text from the CPU time of encode_all(docs) (best of two), and what it returned
    (the ids, or what holds them: turning that into lists is not timed)."""
    n = sum(len(t if isinstance(t, bytes) else t.encode("utf-8")) for t in docs)
    best = None
    for _ in range(2):
        t0 = time.process_time()
        out = encode_all(docs)
        dt = time.process_time() - t0
        best = dt if best is None else min(best, dt)
    return n / best / 1e6, out


def report(name, mbps, ids, ref):
    same = sum(a == b for a, b in zip(ids, ref)) if ref is not None else 0
    print(f"{name} {mbps:.2f} {same}/{len(ids)}")


QUICKTOK_NAMES = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "llama3": "llama3",
                  "qwen": "qwen3"}


def quicktok_encoder(tree, encoding):
    """quicktok's encode through its C ABI, or None when it lacks the encoding."""
    if encoding not in QUICKTOK_NAMES:
        return None
    lib = ctypes.CDLL(os.path.join(tree, "build", "libquicktok.so"))
    lib.qt_load_dir.restype = ctypes.c_void_p
    lib.qt_load_dir.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.qt_encode.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                              ctypes.POINTER(ctypes.POINTER(ctypes.c_uint32)),
                              ctypes.POINTER(ctypes.c_size_t)]
    lib.qt_ids_free.argtypes = [ctypes.POINTER(ctypes.c_uint32)]
    err = ctypes.create_string_buffer(512)
    h = lib.qt_load_dir(os.path.join(tree, "data").encode(), QUICKTOK_NAMES[encoding].encode(),
                        err, len(err))
    if not h:
        raise RuntimeError("quicktok: " + err.value.decode())

    def encode_all(docs, keep=False):
        out = []
        p, n = ctypes.POINTER(ctypes.c_uint32)(), ctypes.c_size_t()
        pp, pn = ctypes.byref(p), ctypes.byref(n)
        for b in docs:
            if lib.qt_encode(h, b, len(b), pp, pn):
                raise RuntimeError("quicktok: encode failed")
            if keep:
                out.append(p[:n.value])
            lib.qt_ids_free(p)
        return out
    return encode_all


def child_cpu(cmd):
    """User + system seconds of the command, run to its end (its output discarded)."""
    import resource
    import subprocess
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime


def rounds(a, docs, enc):
    """tiktoken's MB/s and ids (enc: None for none) and, with --llm, llm-tokenize's MB/s and
    load time, timed in alternating rounds, best of them for each."""
    cmd = ["llm-tokenize", "-q", "-t", a.ranks, "-e", a.llm] if a.llm else None
    n = sum(len(t.encode("utf-8")) for t in docs)
    tk = run = load = ref = None
    for _ in range(a.rounds):
        if enc:
            t0 = time.process_time()
            ref = [enc.encode_ordinary(t) for t in docs]
            dt = time.process_time() - t0
            tk = dt if tk is None else min(tk, dt)
        if cmd:
            dt = child_cpu(cmd + [a.llm_input, "-o", os.devnull])
            run = dt if run is None else min(run, dt)
            dt = child_cpu(cmd + [a.llm_empty, "-o", os.devnull])
            load = dt if load is None else min(load, dt)
    mbps = n / tk / 1e6 if enc else None
    ours = a.llm_bytes / (run - load) / 1e6 if cmd else None
    return mbps, ref, ours, load


def bench(a):
    docs = texts(a.docs)
    try:
        enc = tiktoken_encoding(a.ranks, a.encoding)
    except ImportError:
        enc = None
        print("tiktoken unavailable")
    mbps, ref, ours, load = rounds(a, docs, enc)
    if a.llm:
        print(f"llm-tokenize {ours:.2f} {load:.3f}")
    if enc:
        report("tiktoken", mbps, ref, ref)
    if a.hf:
        try:
            from tokenizers import Tokenizer
            if a.hf == "ranks":
                from transformers.convert_slow_tokenizer import TikTokenConverter
                pat = tiktoken_encoding(a.ranks, a.encoding)._pat_str
                tk = TikTokenConverter(vocab_file=a.ranks, pattern=pat).converted()
            else:
                tk = Tokenizer.from_file(a.hf)
            # the ids of the text alone: GPT-2's tokenizer.json pads every batch to its longest
            tk.no_padding()
            tk.no_truncation()
            batch = getattr(tk, "encode_batch_fast", tk.encode_batch)
            mbps, out = rate(lambda d: batch(d, add_special_tokens=False), docs)
            report("hf", mbps, [e.ids for e in out], ref)
        except ImportError:
            print("hf unavailable")
    if a.quicktok:
        qt = quicktok_encoder(a.quicktok, a.encoding)
        if qt:
            raw = [t.encode("utf-8") for t in docs]
            mbps, _ = rate(qt, raw)
            report("quicktok", mbps, qt(raw, keep=True), ref)
        else:
            print("quicktok unavailable")
    return 0


def train(a):
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        print("hf-train unavailable")
        return 0
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tr = trainers.BpeTrainer(vocab_size=a.vocab_size, min_frequency=2, show_progress=False,
                             special_tokens=["<|endoftext|>"],
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    docs = texts(a.docs)
    t0 = time.perf_counter()
    tk.train_from_iterator(docs, trainer=tr)
    print(f"hf-train {time.perf_counter() - t0:.2f}")
    tk.save(a.out)
    return 0


def hfcheck(a):
    from tokenizers import Tokenizer
    tk = Tokenizer.from_file(a.hf)
    docs = texts(a.docs)
    ours = [json.loads(line)["tokens"] for line in open(a.ours)]
    dec = [json.loads(line)["text"] for line in open(a.decoded)] if a.decoded else None
    same = 0
    for i, (t, o) in enumerate(zip(docs, ours)):
        ids = tk.encode(t, add_special_tokens=False).ids
        ok = ids == o
        if ok and dec is not None:
            ok = dec[i] == tk.decode(ids, skip_special_tokens=False)
        if not ok and same + 5 > i:
            print(f"document {i + 1}: differs", file=sys.stderr)
        same += ok
    print(f"{same} of {len(docs)} documents identical")
    return 0 if same == len(docs) == len(ours) else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["check", "bench", "train", "hfcheck"])
    p.add_argument("--ranks")
    p.add_argument("--encoding")
    p.add_argument("--docs", required=True)
    p.add_argument("--vocab-size", type=int, default=32000)
    p.add_argument("--out")
    p.add_argument("--ours")
    p.add_argument("--hf")
    p.add_argument("--decoded")
    p.add_argument("--quicktok")
    p.add_argument("--llm")
    p.add_argument("--llm-input")
    p.add_argument("--llm-empty")
    p.add_argument("--llm-bytes", type=int)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    return {"check": check, "bench": bench, "train": train, "hfcheck": hfcheck}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
