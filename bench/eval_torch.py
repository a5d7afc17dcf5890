#!/usr/bin/env python3
"""PyTorch peer of `llm-eval loss` for bench/eval.sh: the same checkpoint and window shape.

Loads an llmkit checkpoint (config.json + model.safetensors, read with the standard library and
torch only) into a LLaMA forward written with torch ops (RMSNorm, RoPE rotate_half,
grouped-query causal attention, SwiGLU), runs `--batches` forwards of B x T tokens under
torch.inference_mode, and prints one JSON line: tokens/s and the mean loss over those
(random) tokens.
"""
import argparse
import json
import math
import struct
import time

import torch
import torch.nn.functional as F


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", t["dtype"]
        b, e = t["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[base + b:base + e]),
                                     dtype=torch.float32).reshape(t["shape"])
    return out


def rms(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def hidden(W, c, tokens):
    """The final norm's output [B, T, C]: what the language-model head and a classifier's score
    head read."""
    B, T = tokens.shape
    C, H = c["hidden_size"], c["num_attention_heads"]
    KVH = c.get("num_key_value_heads", H)
    D, eps = C // H, c.get("rms_norm_eps", 1e-6)
    inv = 1.0 / (c.get("rope_theta", 10000.0) ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    x = W["model.embed_tokens.weight"][tokens]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        n = rms(x, W[p + "input_layernorm.weight"], eps)
        q = (n @ W[p + "self_attn.q_proj.weight"].T).view(B, T, H, D).transpose(1, 2)
        k = (n @ W[p + "self_attn.k_proj.weight"].T).view(B, T, KVH, D).transpose(1, 2)
        v = (n @ W[p + "self_attn.v_proj.weight"].T).view(B, T, KVH, D).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KVH, dim=1)
        v = v.repeat_interleave(H // KVH, dim=1)
        # written out rather than F.scaled_dot_product_attention, which torch < 2.0 lacks
        # (Debian's python3-torch is 1.13)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        a = att @ v
        x = x + a.transpose(1, 2).reshape(B, T, C) @ W[p + "self_attn.o_proj.weight"].T
        n = rms(x, W[p + "post_attention_layernorm.weight"], eps)
        g = F.silu(n @ W[p + "mlp.gate_proj.weight"].T) * (n @ W[p + "mlp.up_proj.weight"].T)
        x = x + g @ W[p + "mlp.down_proj.weight"].T
    return rms(x, W["model.norm.weight"], eps)


def forward(W, c, tokens):
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return hidden(W, c, tokens) @ head.T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ckpt")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    c = json.load(open(f"{args.ckpt}/config.json"))
    W = load_safetensors(f"{args.ckpt}/model.safetensors")
    g = torch.Generator().manual_seed(1)
    B, T = args.batch, args.seq_len
    data = torch.randint(0, c["vocab_size"], (args.batches, B, T + 1), generator=g)
    with torch.inference_mode():
        forward(W, c, data[0, :, :T])  # warm-up
        t0 = time.perf_counter()
        nll = 0.0
        for i in range(args.batches):
            logits = forward(W, c, data[i, :, :T])
            nll += F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   data[i, :, 1:].reshape(-1), reduction="sum").item()
        dt = time.perf_counter() - t0
    n = args.batches * B * T
    print(json.dumps({"peer": f"torch {torch.__version__}", "tokens": n, "seconds": dt,
                      "tokens_per_s": n / dt, "loss": nll / n, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
