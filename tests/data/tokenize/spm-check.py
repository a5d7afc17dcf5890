"""The sentencepiece library's side of t4008-tokenize-spm.sh.

  spm-check.py ids MODEL DOCS OURS DECODED
      DOCS: JSONL documents; OURS: llm-tokenize -f jsonl --no-eos of them; DECODED: llm-tokenize
      decode of OURS. Exit 1 naming the first documents whose ids or decoded text differ from
      sentencepiece's encode and decode.
  spm-check.py sample MODEL NBEST ALPHA N WORD...
      The frequencies of sentencepiece's sampled segmentations of each word over N draws
      (seeded), as JSON {"word": {"piece piece": count}}.
  spm-check.py tally MODEL OURS
      The same frequencies of llm-tokenize's samples: OURS holds -f jsonl --meta text lines.
  spm-check.py hf-train TEXT OUT BYTE_FALLBACK
      A Hugging Face tokenizer.json with a Unigram model of 1500 pieces trained by tokenizers
      on TEXT (NFKC, Metaspace), byte_fallback 0 or 1.
  spm-check.py hf-ids TOKENIZER DOCS OURS DECODED
      As ids, against tokenizers' encode and decode (special tokens kept).
  spm-check.py tv A.json B.json MAX
      Exit 1 when the total variation distance of any word's distributions is over MAX.
"""
import json
import sys

def ids(model, docs, ours, decoded):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    bad = 0
    n = 0
    for a, b, c in zip(open(docs), open(ours), open(decoded)):
        n += 1
        text = json.loads(a)["text"]
        got, gtext = json.loads(b)["tokens"], json.loads(c)["text"]
        want = sp.encode(text)
        if got != want or gtext != sp.decode(want):
            bad += 1
            if bad <= 3:
                i = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                         min(len(got), len(want)))
                print(f"{model}: document {n}: token {i}: want {want[max(0, i - 2):i + 3]} "
                      f"got {got[max(0, i - 2):i + 3]}; decoded {gtext[:60]!r} "
                      f"want {sp.decode(want)[:60]!r}", file=sys.stderr)
    if n == 0:
        print("no documents compared", file=sys.stderr)
        return 1
    print(f"{model}: {n - bad} of {n} documents identical")
    return 1 if bad else 0

def sample(model, nbest, alpha, n, words):
    import sentencepiece as spm
    spm.set_random_generator_seed(1)
    sp = spm.SentencePieceProcessor(model_file=model)
    out = {}
    for w in words:
        freq = {}
        for _ in range(int(n)):
            seg = " ".join(sp.encode(w, out_type=str, enable_sampling=True,
                                     nbest_size=int(nbest), alpha=float(alpha)))
            freq[seg] = freq.get(seg, 0) + 1
        out[w] = freq
    print(json.dumps(out, ensure_ascii=False))
    return 0

def tally(model, ours):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    out = {}
    for line in open(ours):
        r = json.loads(line)
        seg = " ".join(sp.id_to_piece(i) for i in r["tokens"])
        f = out.setdefault(r["text"], {})
        f[seg] = f.get(seg, 0) + 1
    print(json.dumps(out, ensure_ascii=False))
    return 0

def hf_train(text, out, byte_fallback):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    tk = Tokenizer(models.Unigram())
    tk.normalizer = normalizers.NFKC()
    tk.pre_tokenizer = pre_tokenizers.Metaspace()
    tk.decoder = decoders.Metaspace()
    tk.train([text], trainers.UnigramTrainer(vocab_size=1500, unk_token="<unk>",
                                            special_tokens=["<unk>", "<s>", "</s>"],
                                            byte_fallback=byte_fallback == "1",
                                            show_progress=False))
    tk.save(out)
    return 0

def hf_ids(path, docs, ours, decoded):
    from tokenizers import Tokenizer
    tk = Tokenizer.from_file(path)
    bad = n = 0
    for a, b, c in zip(open(docs), open(ours), open(decoded)):
        n += 1
        want = tk.encode(json.loads(a)["text"], add_special_tokens=False).ids
        got, gtext = json.loads(b)["tokens"], json.loads(c)["text"]
        if got != want or gtext != tk.decode(want, skip_special_tokens=False):
            bad += 1
            if bad <= 3:
                print(f"{path}: document {n} differs: want {want[:8]}, got {got[:8]}",
                      file=sys.stderr)
    print(f"{path}: {n - bad} of {n} documents identical")
    return 1 if bad or n == 0 else 0

def tv(a, b, most):
    da, db = json.load(open(a)), json.load(open(b))
    worst = 0.0
    for w in da:
        na, nb = sum(da[w].values()), sum(db[w].values())
        keys = set(da[w]) | set(db[w])
        d = 0.5 * sum(abs(da[w].get(k, 0) / na - db[w].get(k, 0) / nb) for k in keys)
        print(f"{w}: total variation {d:.3f} over {len(keys)} segmentations")
        worst = max(worst, d)
    return 1 if worst > float(most) else 0

if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    sys.exit({"ids": ids, "sample": lambda *a: sample(a[0], a[1], a[2], a[3], a[4:]),
              "tally": tally, "hf-train": hf_train, "hf-ids": hf_ids, "tv": tv}[cmd](*args))
