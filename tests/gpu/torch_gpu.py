#!/usr/bin/env python3
"""The llmkit model in PyTorch eager on the GPU: the peer of `test_cuda_model --bench`.

Same architecture (LLaMA: RMSNorm, RoPE rotate_half, grouped-query causal attention, SwiGLU,
tied or untied LM head), same shapes, random tokens, AdamW (0.9/0.95, decay 0.1 on matrices,
fused), clipping at 1.0. bf16 runs under torch.autocast with fp32 master weights, as llmkit
does; attention is F.scaled_dot_product_attention (FlashAttention kernels). Prints one JSON
line: median step time, tokens/s and MFU with llmkit's FLOP count (6 N + 12 L C T per token)
against --peak-tflops.
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps))).to(x.dtype)


def rope(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * sin


class Layer(nn.Module):
    def __init__(self, c, i, h, kvh):
        super().__init__()
        self.h, self.kvh, self.d = h, kvh, c // h
        self.input_layernorm = RMSNorm(c)
        self.q_proj = nn.Linear(c, h * self.d, bias=False)
        self.k_proj = nn.Linear(c, kvh * self.d, bias=False)
        self.v_proj = nn.Linear(c, kvh * self.d, bias=False)
        self.o_proj = nn.Linear(h * self.d, c, bias=False)
        self.post_attention_layernorm = RMSNorm(c)
        self.gate_proj = nn.Linear(c, i, bias=False)
        self.up_proj = nn.Linear(c, i, bias=False)
        self.down_proj = nn.Linear(i, c, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        n = self.input_layernorm(x)
        q = self.q_proj(n).view(B, T, self.h, self.d).transpose(1, 2)
        k = self.k_proj(n).view(B, T, self.kvh, self.d).transpose(1, 2)
        v = self.v_proj(n).view(B, T, self.kvh, self.d).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        rep = self.h // self.kvh
        if rep > 1:
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o_proj(y.transpose(1, 2).reshape(B, T, -1))
        n = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Layer(a.hidden, a.inter, a.heads, a.kv_heads) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)
        if a.tied:
            self.head.weight = self.embed.weight
        d = a.hidden // a.heads
        inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2).float() / d))
        f = torch.outer(torch.arange(a.seq).float(), inv)
        emb = torch.cat((f, f), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, idx, tgt):
        x = self.embed(idx)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1))


def main():
    p = argparse.ArgumentParser()
    for k, v in dict(vocab=32000, hidden=768, inter=2048, layers=12, heads=12, kv_heads=4, tied=0,
                     batch=8, seq=1024, steps=20, warmup=3).items():
        p.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--peak-tflops", type=float, default=0)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"impl": "pytorch", "skipped": "no CUDA device"}))
        return
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = Model(a).to(dev)
    decay = [q for q in model.parameters() if q.dim() == 2]
    other = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[a.precision]
    scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")
    g = torch.Generator(device=dev).manual_seed(1)
    times = []
    for step in range(a.warmup + a.steps):
        idx = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g, device=dev)
        tgt = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g, device=dev)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=dtype, enabled=a.precision != "fp32"):
            loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        torch.cuda.synchronize()
        if step >= a.warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    med = times[len(times) // 2]
    tps = a.batch * a.seq / med
    n = sum(q.numel() for q in model.parameters())
    counted = n - (0 if a.tied else a.vocab * a.hidden)  # the embedding lookup costs no products
    fpt = 6 * counted + 12 * a.layers * a.hidden * a.seq
    print(json.dumps({"impl": "pytorch " + torch.__version__, "device": torch.cuda.get_device_name(),
                      "params": n, "batch": a.batch, "seq": a.seq, "precision": a.precision,
                      "step_s": round(med, 6), "tokens_per_s": round(tps, 1),
                      "mfu": round(fpt * tps / (a.peak_tflops * 1e12), 4) if a.peak_tflops else None,
                      "loss": round(loss.item(), 4),
                      "gpu_mem_mb": round(torch.cuda.max_memory_allocated() / 2**20)}))


if __name__ == "__main__":
    main()
