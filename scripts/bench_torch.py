#!/usr/bin/python3
"""PyTorch reference timings for docs/benchmarks.md (not part of the build or tests).

Times forward + backward of sum(output) on CPU for three mechanisms at the
papers' efficiency setting (batch 64, length 64, 300 features, float32):
MTSA (the released code's variant, Algorithm 1: two batched GEMMs, never the
n x n x d tensor), one multi-head attention layer (torch.nn.MultiheadAttention,
6 heads, 300 wide), one direction of DiSA (the [B, n, n, d] score tensor), and
the engine's DiSAN and one-layer Transformer encoders written in PyTorch
(--models disan,transformer; scripts/bench_vs_torch.py compares them).

    /usr/bin/python3 scripts/bench_torch.py [--threads 2] [--reps 3] [--batch 64] [--length 64]
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Source2Token(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w1, self.w2 = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):  # x [B, n, d]
        p = torch.softmax(self.w2(F.relu(self.w1(x))), dim=1)
        return (p * x).sum(1)


class Mtsa(nn.Module):
    """The 'original' variant: v = relu(W_v x); per head q, k from v; forward/backward head masks."""

    def __init__(self, d_in, hidden=300, heads=2):
        super().__init__()
        self.h, self.dh = heads, hidden // heads
        self.v = nn.Linear(d_in, hidden)
        p = lambda *s: nn.Parameter(torch.randn(*s) * 0.05)
        self.q, self.k = p(heads, self.dh, self.dh), p(heads, self.dh, self.dh)
        self.s1, self.b1 = p(heads, self.dh, self.dh), p(heads, 1, self.dh)
        self.s2, self.b2 = p(heads, self.dh, self.dh), p(heads, 1, self.dh)
        self.g, self.bg = p(heads, 2 * self.dh, self.dh), p(heads, 1, self.dh)
        self.s2t = Source2Token(hidden)

    def forward(self, x):
        b, n, _ = x.shape
        v = F.relu(self.v(x)).view(b, n, self.h, self.dh).transpose(1, 2)  # [B, h, n, dh]
        q, k = v @ self.q, v @ self.k
        r = q @ k.transpose(-1, -2) / self.dh ** 0.5  # [B, h, n, n]
        idx = torch.arange(n)
        fw = (idx[None, :] < idx[:, None]).float()
        mask = torch.stack([fw, fw.t()] * (self.h // 2))[None]  # head 0 forward, head 1 backward
        er = torch.sigmoid(r) * mask
        s = F.relu(v @ self.s1 + self.b1) @ self.s2 + self.b2
        es = torch.exp(s - s.max(dim=2, keepdim=True).values.detach())
        num, den = er @ (v * es), er @ es
        hh = torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(den))
        gate = torch.sigmoid(torch.cat([v, hh], -1) @ self.g + self.bg)
        out = (gate * v + (1 - gate) * hh).transpose(1, 2).reshape(b, n, -1)
        return out, self.s2t(out)


class MultiHead(nn.Module):
    def __init__(self, d, heads=6):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)

    def forward(self, x):
        out, _ = self.attn(x, x, x, need_weights=False)
        return out, out.sum(1)


class DisaForward(nn.Module):
    """One direction of DiSA: the [B, n, n, d] multi-dimensional score tensor, forward mask
    (backward mask with forward=False)."""

    def __init__(self, d, c=5.0, forward=True):
        super().__init__()
        self.forward_mask = forward
        self.fc, self.w1, self.w2 = nn.Linear(d, d), nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.b = nn.Parameter(torch.zeros(d))
        self.f1, self.f2 = nn.Linear(d, d, bias=False), nn.Linear(d, d)
        self.c = c

    def forward(self, x):
        b, n, d = x.shape
        h = F.relu(self.fc(x))
        f = self.c * torch.tanh((self.w1(h)[:, :, None, :] + self.w2(h)[:, None, :, :] + self.b) / self.c)
        idx = torch.arange(n)
        before = idx[None, :] < idx[:, None]  # key j before query i
        allowed = (before if self.forward_mask else before.t())[None, :, :, None]
        p = torch.softmax(f.masked_fill(~allowed, -1e30), dim=2) * allowed
        s = (p * h[:, None, :, :]).sum(2)
        g = torch.sigmoid(self.f1(s) + self.f2(h))
        u = g * h + (1 - g) * s
        return u, u.sum(1)


class Disan(nn.Module):
    """DiSAN as models/disan: forward and backward DiSA, concatenated, two-layer source2token."""

    def __init__(self, d):
        super().__init__()
        self.fw, self.bw = DisaForward(d, forward=True), DisaForward(d, forward=False)
        self.s2t = Source2Token(2 * d)

    def forward(self, x):
        u = torch.cat([self.fw(x)[0], self.bw(x)[0]], -1)
        return u, self.s2t(u)


class Transformer(nn.Module):
    """The Transformer baseline as models/transformer: sinusoidal positions, one post-norm layer
    (10 heads, FFN 1200, no dropout), two-layer source2token readout."""

    def __init__(self, d, heads=10, ffn=1200):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, batch_first=True)
        self.s2t = Source2Token(d)

    def forward(self, x):
        n, d = x.shape[1], x.shape[2]
        pos = torch.arange(n, dtype=torch.float32)[:, None]
        rate = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-torch.log(torch.tensor(10000.0)) / d))
        pe = torch.zeros(n, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
        u = self.layer(x + pe)
        return u, self.s2t(u)


MODELS = {
    "mtsa": Mtsa,
    "multi-head": MultiHead,
    "disa-fw": DisaForward,
    "disan": Disan,
    "transformer": Transformer,
}


def time_step(model, x, reps, warmup):
    times = []
    for i in range(warmup + reps):
        model.zero_grad(set_to_none=True)
        start = time.perf_counter()
        tokens, sentence = model(x)
        (tokens.sum() + sentence.sum()).backward()
        elapsed = (time.perf_counter() - start) * 1000
        if i >= warmup:
            times.append(elapsed)
    return statistics.median(times), min(times), max(times)


def step_arguments(description, reps, models):
    """The flags this script and bench_vs_torch.py share: the step's shape, threads, repetitions."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--features", type=int, default=300)
    ap.add_argument("--models", default=models, help="comma list of: " + ", ".join(MODELS))
    return ap


def random_batch(args):
    """Seeds torch, sets its threads and draws the U(-1, 1) input [batch, length, features]."""
    torch.manual_seed(1)
    torch.set_num_threads(args.threads)
    return torch.rand(args.batch, args.length, args.features) * 2 - 1


def main():
    ap = step_arguments(__doc__, 3, "mtsa,multi-head,disa-fw")
    args = ap.parse_args()
    x = random_batch(args)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch}, "
          f"length {args.length}, {args.features} features, forward + backward, {args.reps} reps after "
          f"{args.warmup} warm-up")
    for name in args.models.split(","):
        if name not in MODELS:
            ap.error(f"unknown model '{name}' (known: {', '.join(MODELS)})")
        med, lo, hi = time_step(MODELS[name](args.features), x, args.reps, args.warmup)
        print(f"  {name:22s} median {med:9.1f} ms  (min {lo:.1f}, max {hi:.1f})", flush=True)


if __name__ == "__main__":
    main()
