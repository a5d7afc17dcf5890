#!/usr/bin/env python3
"""Small tokenizer.json files, each exercising features of Hugging Face tokenizers, with the ids
and decoded texts tokenizers gives for a set of test strings.

    python3 gen-hf-features.py OUTDIR     (needs tokenizers; run by hand, output committed)

Writes OUTDIR/NAME.json (a tokenizer trained here on the strings below, so every file is ours
to ship) and OUTDIR/NAME.expected.jsonl: {"text", "ids", "decoded"} per test string, where ids
are tokenizer.encode(text, add_special_tokens=False).ids and decoded is
tokenizer.decode(ids, skip_special_tokens=False). The added-token cases follow those of
tokenizers' own tests (lstrip / rstrip around <mask>, single_word, normalized or not, special
or not, added tokens that are vocabulary entries).
"""
import json
import os
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers as pt
from tokenizers import trainers

TRAIN = [
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs!",
    "Hello, world: hello again, WORLD. I'm sure you're fine, aren't you?",
    "Numbers 12345 and 3.14159, dates 2024-06-01, prices $19.99 and €5.",
    "中文的文本，包括标点符号。我们正在测试分词器的功能！北京大学和清华大学。",
    "Mixed 中英文 text with 数字 123 and emoji 😀🎉 plus café, naïve, ﬁne, Ｆｕｌｌｗｉｄｔｈ.",
    "singing sing sings ing ring king thing",
    "  leading and trailing spaces  \t tabs\nnew lines\r\n and more   spaces",
    "<mask> tokens and [CLS] markers, hey <mask> there, word<mask>word",
]
TESTS = TRAIN + [
    "",
    " ",
    "A",
    "ÅÅÅ Ångström Å",           # NFC vs NFD forms
    "Ａｂｃ１２３ ﬁ ½ ①",       # compatibility forms (NFKC)
    "İstanbul ΣΑΣ ß ǅ",          # case mapping
    "   ",
    "hey <mask>  there <mask>",
    "I like ing, singing and ing.",
    "ALL all All",
    "a\u00a0b\u3000c\u2028d",   # White_Space beyond ASCII
    "tab\tnl\ncr\r end",
    "123456789 0 ٣٤٥",
    "unknown: ☃ 𝔘 ᚠ",
    "[CLS] x [SEP]",
    "dog.dog..dog...",
    "it's don't WE'LL",
]


def train(tk, vocab_size=400, alphabet=None, special=()):
    tr = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=1, show_progress=False,
                             special_tokens=list(special), initial_alphabet=alphabet or [])
    tk.train_from_iterator(TRAIN, trainer=tr)
    return tk


def bytelevel(pre=None, **kw):
    tk = Tokenizer(models.BPE(**kw))
    tk.pre_tokenizer = pre or pt.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    return tk


def spm(pre=None, norm=None, **kw):
    """SentencePiece-style: characters, byte_fallback, Metaspace or Llama 2's normalizers."""
    tk = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True, **kw))
    tk.normalizer = norm
    tk.pre_tokenizer = pre
    tk.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                    decoders.Fuse(), decoders.Strip(content=" ", left=1)])
    return tk


def byte_tokens():
    return ["<0x%02X>" % b for b in range(256)]


def cases():
    A = pt.ByteLevel.alphabet()
    out = {}
    # normalizers, one by one and in a Sequence (empty too), over a byte-level model
    for name, norm in [("nfc", normalizers.NFC()), ("nfd", normalizers.NFD()),
                       ("nfkc", normalizers.NFKC()), ("nfkd", normalizers.NFKD()),
                       ("lowercase", normalizers.Lowercase()),
                       ("strip", normalizers.Strip(left=True, right=True)),
                       ("replace", normalizers.Sequence([normalizers.Replace("fox", "cat"),
                                                         normalizers.Replace(Regex("[0-9]+"), "#")])),
                       ("prepend", normalizers.Prepend("> ")),
                       ("seq-empty", normalizers.Sequence([])),
                       ("seq", normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase(),
                                                     normalizers.Strip(left=False, right=True)]))]:
        tk = bytelevel()
        tk.normalizer = norm
        out["norm-" + name] = train(tk, alphabet=A)
    # Split behaviours, inverted or not, before a ByteLevel without its regex
    for beh in ["isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous"]:
        for inv in (False, True):
            pre = pt.Sequence([pt.Split(Regex(r"\s+|[,.;:!?]"), behavior=beh, invert=inv),
                               pt.ByteLevel(add_prefix_space=False, use_regex=False)])
            out[f"split-{beh}{'-inv' if inv else ''}"] = train(bytelevel(pre), alphabet=A)
    out["split-string"] = train(bytelevel(pt.Sequence([
        pt.Split("dog", behavior="isolated"), pt.ByteLevel(add_prefix_space=False)])), alphabet=A)
    # DeepSeek-style: several Splits (digits, CJK runs, then a main pattern) before ByteLevel
    out["split-seq"] = train(bytelevel(pt.Sequence([
        pt.Split(Regex(r"\p{N}{1,3}"), behavior="isolated"),
        pt.Split(Regex("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"), behavior="isolated"),
        pt.Split(Regex(r"[^\r\n\p{L}\p{N}]?\p{L}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
                 behavior="isolated"),
        pt.ByteLevel(add_prefix_space=False, use_regex=False)])), alphabet=A)
    out["bytelevel-prefix"] = train(bytelevel(pt.ByteLevel(add_prefix_space=True)), alphabet=A)
    out["bytelevel-prefix-seq"] = train(bytelevel(pt.Sequence([
        pt.Split(Regex(r"\p{N}"), behavior="isolated"),
        pt.ByteLevel(add_prefix_space=True, use_regex=True)])), alphabet=A)
    out["digits"] = train(bytelevel(pt.Sequence([pt.Digits(individual_digits=True), pt.ByteLevel()])), alphabet=A)
    out["digits-contiguous"] = train(bytelevel(pt.Sequence([pt.Digits(individual_digits=False),
                                                            pt.ByteLevel()])), alphabet=A)
    out["punctuation"] = train(bytelevel(pt.Sequence([pt.Punctuation(), pt.ByteLevel()])), alphabet=A)
    out["punctuation-next"] = train(bytelevel(pt.Sequence([pt.Punctuation("merged_with_next"),
                                                           pt.ByteLevel()])), alphabet=A)
    out["whitespace"] = train(bytelevel(pt.Sequence([pt.Whitespace(), pt.ByteLevel(use_regex=False)])), alphabet=A)
    out["whitespacesplit"] = train(bytelevel(pt.Sequence([pt.WhitespaceSplit(),
                                                          pt.ByteLevel(use_regex=False)])), alphabet=A)
    out["ignore-merges"] = train(bytelevel(ignore_merges=True), alphabet=A)
    # SentencePiece-style BPE: Metaspace schemes, Llama 2's normalizers, byte_fallback, unk
    for scheme in ("always", "first", "never"):
        for split in (False, True):
            tk = spm(pt.Metaspace(replacement="\u2581", prepend_scheme=scheme, split=split))
            if scheme == "never":
                tk.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="never")
            out[f"metaspace-{scheme}{'-split' if split else ''}"] = train(
                tk, special=["<unk>", "<s>", "</s>"] + byte_tokens())
    out["spm-legacy"] = train(spm(norm=normalizers.Sequence([normalizers.Prepend("\u2581"),
                                                             normalizers.Replace(" ", "\u2581")])),
                              special=["<unk>", "<s>", "</s>"] + byte_tokens())
    tk = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=False))
    tk.pre_tokenizer = pt.Metaspace()
    tk.decoder = decoders.Metaspace()
    out["unk"] = train(tk, special=["<unk>"])
    # added tokens (tokenizers' test cases): lstrip/rstrip, single_word, normalized, special
    tk = bytelevel()
    tk.normalizer = normalizers.Lowercase()
    train(tk, alphabet=A, special=["[CLS]"])
    tk.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False)])
    tk.add_tokens([AddedToken("ing", single_word=True, normalized=False),
                   AddedToken("ALL", normalized=False),
                   AddedToken("world", normalized=True),
                   AddedToken("dog", normalized=True, rstrip=True),
                   AddedToken("[SEP]", special=True, rstrip=True, lstrip=True, normalized=False)])
    out["added"] = tk
    tk = spm(pt.Metaspace(replacement="\u2581", prepend_scheme="first", split=False))
    train(tk, special=["<unk>", "<s>", "</s>"] + byte_tokens())
    # added tokens that are vocabulary entries, special and not
    tk.add_tokens([AddedToken("\u2581the", normalized=False, special=False),
                   AddedToken("<s>", normalized=False, special=True)])
    tk.add_special_tokens([AddedToken("<mask>", rstrip=True, normalized=False)])
    out["added-spm"] = tk
    return out


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, tk in cases().items():
        tk.save(f"{d}/{name}.json")
        tk = Tokenizer.from_file(f"{d}/{name}.json")
        with open(f"{d}/{name}.expected.jsonl", "w", encoding="utf-8") as f:
            for t in TESTS:
                ids = tk.encode(t, add_special_tokens=False).ids
                f.write(json.dumps({"text": t, "ids": ids,
                                    "decoded": tk.decode(ids, skip_special_tokens=False)},
                                   ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
