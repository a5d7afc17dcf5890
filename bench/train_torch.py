#!/usr/bin/env python3
"""The llm-train model written with torch.nn, for the CPU throughput comparison in train.sh.

Same architecture (LLaMA: RMSNorm, RoPE rotate_half, grouped-query causal attention, SwiGLU,
untied or tied LM head), same shapes, same optimizer (AdamW 0.9/0.95, weight decay 0.1,
clipping 1.0), fp32, random tokens. Prints one JSON line: tokens per second of wall clock
(median step) and per CPU second (median of the steps' process CPU time, every thread's, so that
threads which spin waiting for work count as what they cost).
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.h, self.kvh, self.d = a.heads, a.kv_heads, a.hidden // a.heads
        self.ln1 = RMSNorm(a.hidden, 1e-5)
        self.q = nn.Linear(a.hidden, self.h * self.d, bias=False)
        self.k = nn.Linear(a.hidden, self.kvh * self.d, bias=False)
        self.v = nn.Linear(a.hidden, self.kvh * self.d, bias=False)
        self.o = nn.Linear(self.h * self.d, a.hidden, bias=False)
        self.ln2 = RMSNorm(a.hidden, 1e-5)
        self.gate = nn.Linear(a.hidden, a.inter, bias=False)
        self.up = nn.Linear(a.hidden, a.inter, bias=False)
        self.down = nn.Linear(a.inter, a.hidden, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        n = self.ln1(x)
        q = self.q(n).view(B, T, self.h, self.d).transpose(1, 2)
        k = self.k(n).view(B, T, self.kvh, self.d).transpose(1, 2)
        v = self.v(n).view(B, T, self.kvh, self.d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.h // self.kvh
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.d) + mask
        y = F.softmax(att, dim=-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(B, T, self.h * self.d))
        n = self.ln2(x)
        return x + self.down(F.silu(self.gate(n)) * self.up(n))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden, 1e-5)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)
        if a.tied:
            self.head.weight = self.embed.weight
        d = a.hidden // a.heads
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        f = torch.outer(torch.arange(a.seq).float(), inv)
        emb = torch.cat((f, f), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.full((a.seq, a.seq), float("-inf")).triu(1))

    def forward(self, idx, targets):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin, self.mask)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def main():
    p = argparse.ArgumentParser()
    for k, v in dict(vocab=4096, hidden=128, inter=352, layers=4, heads=4, kv_heads=2, batch=8,
                     seq=256, steps=8, warmup_steps=2, threads=0, tied=1).items():
        p.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Model(a)
    decay = [q for q in model.parameters() if q.dim() == 2]
    other = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8)
    g = torch.Generator().manual_seed(1)
    times, cpus = [], []
    for step in range(a.warmup_steps + a.steps):
        idx = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g)
        tgt = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g)
        t0, c0 = time.perf_counter(), time.process_time()
        loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step >= a.warmup_steps:
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    times.sort()
    cpus.sort()
    med, cpu = times[len(times) // 2], cpus[len(cpus) // 2]
    print(json.dumps({"peer": "pytorch " + torch.__version__, "threads": torch.get_num_threads(),
                      "tokens_per_s": a.batch * a.seq / med, "step_s": med,
                      "tokens_per_cpu_s": a.batch * a.seq / cpu, "step_cpu_s": cpu,
                      "params": sum(q.numel() for q in model.parameters())}))


if __name__ == "__main__":
    main()
