#!/usr/bin/env python3
"""PyTorch reference of transformers' LlamaForSequenceClassification, for llm-score's parity
test (tests/t/t3102-score-transformer.sh) and its speed bench.

Written in plain torch (torch 1.13 and the standard library: Debian's python3-torch has no
transformers beside it, and PyPI's transformers 5 needs torch 2) from transformers'
modeling_llama.py semantics: the decoder of eval_torch.hidden (RMSNorm, RoPE rotate_half,
grouped-query causal attention, SwiGLU, the final norm), then `score`, a Linear of
num_labels x hidden_size without bias, on every position, and the logits of each row taken at
transformers' pooled position:

    non_pad_mask = (input_ids != pad_token_id).int()
    last_non_pad_token = (arange(T) * non_pad_mask).argmax(-1)

(the rightmost token that is not the pad; with no pad_token_id, batches of one and the last
token). Documents of a batch are right-padded with the pad token, as a tokenizer pads them.

  seqcls_torch.py make DIR --vocab V [--labels a,b,c] [--pad ID] [--problem P] [--seed S]
        a random classifier (transformers' init: N(0, 0.02) matrices, unit norms) saved as a
        model directory: config.json and model.safetensors (F32)
  seqcls_torch.py logits DIR IDS.jsonl [--batch B]
        one JSON line of logits per line {"tokens": [...]} of IDS.jsonl (llm-tokenize
        --format jsonl --no-eos), in order, each document cut to max_position_embeddings
  seqcls_torch.py bench DIR IDS.jsonl [--batch B] [--threads N]
        documents per second of the same forward, one JSON line
"""
import argparse
import json
import struct
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from eval_torch import hidden, load_safetensors  # noqa: E402


def save_safetensors(path, tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        b = t.contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def make(args):
    labels = args.labels.split(",")
    c = {"architectures": ["LlamaForSequenceClassification"], "model_type": "llama",
         "vocab_size": args.vocab, "hidden_size": args.hidden, "intermediate_size": 2 * args.hidden,
         "num_hidden_layers": args.layers, "num_attention_heads": 4, "num_key_value_heads": 2,
         "max_position_embeddings": 128, "rope_theta": 10000.0, "rms_norm_eps": 1e-6,
         "tie_word_embeddings": False, "hidden_act": "silu",
         "id2label": {str(i): l for i, l in enumerate(labels)},
         "label2id": {l: i for i, l in enumerate(labels)},
         "pad_token_id": args.pad, "problem_type": args.problem}
    g = torch.Generator().manual_seed(args.seed)
    C, I, H, KVH = c["hidden_size"], c["intermediate_size"], 4, 2
    D = C // H

    def mat(o, i):
        # 0.2, ten times transformers' 0.02: weights that small make every logit nearly 0,
        # and a parity test on them would pass whatever the pooling
        return torch.randn(o, i, generator=g) * 0.2

    W = {"model.embed_tokens.weight": mat(args.vocab, C)}
    for i in range(args.layers):
        p = f"model.layers.{i}."
        W[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(C, generator=g)
        W[p + "self_attn.q_proj.weight"] = mat(H * D, C)
        W[p + "self_attn.k_proj.weight"] = mat(KVH * D, C)
        W[p + "self_attn.v_proj.weight"] = mat(KVH * D, C)
        W[p + "self_attn.o_proj.weight"] = mat(C, H * D)
        W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(C, generator=g)
        W[p + "mlp.gate_proj.weight"] = mat(I, C)
        W[p + "mlp.up_proj.weight"] = mat(I, C)
        W[p + "mlp.down_proj.weight"] = mat(C, I)
    W["model.norm.weight"] = 1 + 0.1 * torch.randn(C, generator=g)
    W["score.weight"] = mat(len(labels), C)
    with open(f"{args.dir}/config.json", "w") as f:
        json.dump(c, f, indent=2)
    save_safetensors(f"{args.dir}/model.safetensors", W)


def pooled_logits(W, c, docs):
    pad = c.get("pad_token_id")
    T = max(len(d) for d in docs)
    if pad is None:
        assert len(docs) == 1, "transformers: no padding token, batches of one"
    ids = torch.tensor([d + [pad if pad is not None else 0] * (T - len(d)) for d in docs])
    logits = hidden(W, c, ids) @ W["score.weight"].T
    if pad is None:
        last = torch.full((len(docs),), T - 1)
    else:
        non_pad_mask = (ids != pad).int()
        last = (torch.arange(T) * non_pad_mask).argmax(-1)
    return logits[torch.arange(len(docs)), last]


def read(args):
    c = json.load(open(f"{args.dir}/config.json"))
    W = load_safetensors(f"{args.dir}/model.safetensors")
    n = c["max_position_embeddings"]
    docs = [json.loads(line)["tokens"][:n] for line in open(args.ids)]
    B = args.batch if c.get("pad_token_id") is not None else 1
    return c, W, docs, B


def logits(args):
    c, W, docs, B = read(args)
    with torch.inference_mode():
        for s in range(0, len(docs), B):
            for row in pooled_logits(W, c, docs[s:s + B]):
                print(json.dumps([float(x) for x in row]))


def bench(args):
    if args.threads:
        torch.set_num_threads(args.threads)
    c, W, docs, B = read(args)
    docs = sorted(docs, key=len)  # as llm-score batches them: similar lengths together
    with torch.inference_mode():
        pooled_logits(W, c, docs[:B])
        t0, c0 = time.perf_counter(), time.process_time()
        for s in range(0, len(docs), B):
            pooled_logits(W, c, docs[s:s + B])
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    # CPU seconds as well as wall ones: a shared machine's wall clock measures its load
    print(json.dumps({"peer": f"torch {torch.__version__}", "documents": len(docs),
                      "seconds": dt, "cpu_seconds": cpu, "docs_per_cpu_s": len(docs) / cpu,
                      "batch": B, "threads": torch.get_num_threads()}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--vocab", type=int, required=True)
    m.add_argument("--labels", default="cc,hq")
    m.add_argument("--pad", type=int, default=None)
    m.add_argument("--problem", default=None)
    m.add_argument("--hidden", type=int, default=32)
    m.add_argument("--layers", type=int, default=2)
    m.add_argument("--seed", type=int, default=1)
    for name in ("logits", "bench"):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("ids")
        p.add_argument("--batch", type=int, default=8)
        p.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    {"make": make, "logits": logits, "bench": bench}[args.cmd](args)


if __name__ == "__main__":
    main()
