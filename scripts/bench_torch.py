#!/usr/bin/python3
"""The engine's encoders written in PyTorch, and one bench step timed (not part of the build or tests).

Each module computes the same function as the engine's encoder of the same registry name at
its default configuration (models/*.h: heads, widths, FFN, relu, layer counts, masks, dropout),
or at the config keys ENGINE_CONFIG names (the recurrent baselines in the PyTorch cell form), and
engine_state maps the engine's parameter names (Module::named_parameters) onto its own (the
identity for most; torch.nn.LSTM/GRU's and nn.Conv1d's names and layouts for the baselines), so
scripts/bench_vs_torch.py can load the engine's float64 weights and compare outputs and
gradients (`attn bench --save-check`). The baselines use PyTorch's own layers: torch.nn.LSTM /
GRU on packed sequences, nn.Conv1d with F.glu. Where the engine uses a fused kernel (DiSA's
multi-dimensional attention, MTSA's Algorithm 1, the window attention) the PyTorch version is
the usual composition of tensor ops (DiSAN's [B, n, n, d] scores as in its authors' code, the
windows as banded masks over full scores); the Transformer uses torch.nn.MultiheadAttention.

A step is what `attn bench --mode train|infer` times: train = training mode (dropout and
ReSAN's RSS sampling on), forward + backward of sum(tokens) + sum(sentence) into every
parameter, gradients cleared before the clock starts; infer = evaluation mode, forward only,
under torch.inference_mode(). The input is U(-1, 1) [batch, length, features] float32 with an
all-valid mask, as `attn bench` uses.

OpenBLAS's work buffers are warmed before anything is timed, as the engine does before its first
product (docs/engine.md, "OpenBLAS's cold buffers"): a few matmuls with 512 and more columns in
float32 and float64, serial and threaded. `--blas cold` leaves them as PyTorch finds them.

    /usr/bin/python3 scripts/bench_torch.py [--models mtsa,...] [--mode train|infer|both]
        [--threads 2] [--reps 5] [--warmup 1] [--batch 64] [--length 64] [--features 300]
        [--blas warm|cold] [--json]
"""
import argparse
import ctypes
import json
import math
import resource
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

ENCODERS = ("mtsa", "disan", "biblosan", "transformer", "mstrans", "resan", "bilstm", "bigru", "multicnn", "hrchycnn")
# The engine's config (`attn bench --set`) under which its encoder computes the function written
# here: the recurrent baselines in the PyTorch cell form (see BiRnn).
ENGINE_CONFIG = {"bilstm": {"cell_form": "pytorch"}, "bigru": {"cell_form": "pytorch"}}
NEG_INF = float("-inf")


# ---------------------------------------------------------------- shared pieces

def zero_padded(x, valid):
    """x [B, n, d] with padded rows (valid [B, n] bool False) set to exactly 0."""
    return x.masked_fill(~valid[..., None], 0.0)


def masked_softmax(scores, blocked, dim):
    """Softmax over `dim` of the entries not blocked (bool, broadcastable to scores); 0 at blocked
    ones, and all 0 for a row with everything blocked, as the engine's softmax with a mask."""
    p = torch.softmax(scores.masked_fill(blocked, NEG_INF), dim)
    return p.masked_fill(blocked, 0.0)  # the NaN of an empty row is replaced too


def direction_mask(n, direction):
    """[n, n] bool, query-major: forward = keys before the query, backward = after."""
    idx = torch.arange(n)
    return idx[None, :] < idx[:, None] if direction == "forward" else idx[None, :] > idx[:, None]


def pair_mask(valid, positional):
    """[B, n, n]: both tokens valid and the positional mask allows the pair."""
    return valid[:, :, None] & valid[:, None, :] & positional[None]


def multi_dim_attention(h, query_term, key_term, bias, allowed, c=5.0):
    """DiSA's multi-dimensional attention: f = c tanh((W1 h_i + W2 h_j + b) / c), softmax over the
    allowed keys j per feature, s_i = sum_j P_ij h_j. The [B, n, n, d] scores are materialised."""
    scores = c * torch.tanh((query_term[:, :, None, :] + key_term[:, None, :, :] + bias) / c)
    p = masked_softmax(scores, ~allowed[..., None], 2)
    return (p * h[:, None, :, :]).sum(2)


def dropout(keep_prob):
    return nn.Dropout(1.0 - keep_prob) if keep_prob < 1.0 else nn.Identity()


class Source2Token(nn.Module):
    """Multi-dimensional source2token: two layers (w1, w2, relu) or one (w)."""

    def __init__(self, d, two_layer=True):
        super().__init__()
        self.two_layer = two_layer
        if two_layer:
            self.w1, self.w2 = nn.Linear(d, d), nn.Linear(d, d)
        else:
            self.w = nn.Linear(d, d)

    def forward(self, x, valid):
        scores = self.w2(F.relu(self.w1(x))) if self.two_layer else self.w(x)
        return (masked_softmax(scores, ~valid[..., None], 1) * x).sum(1)


class GatedFusion(nn.Module):
    """F = sigmoid(W1 s + W2 h + b), u = F h + (1 - F) s."""

    def __init__(self, d):
        super().__init__()
        self.w1, self.w2 = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, s, h):
        f = torch.sigmoid(self.w1(s) + self.w2(h) + self.bias)
        return f * h + (1 - f) * s


class HeadLinear(nn.Module):
    """Per-head weights [h, in, out] (and bias [h, 1, out]) on [B, h, n, in]."""

    def __init__(self, heads, d_in, d_out, bias=True):
        super().__init__()
        bound = (6.0 / (d_in + d_out)) ** 0.5  # Glorot uniform per head, as the engine
        self.weight = nn.Parameter(torch.empty(heads, d_in, d_out).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.zeros(heads, 1, d_out)) if bias else None

    def forward(self, x):
        y = x @ self.weight
        return y if self.bias is None else y + self.bias


class Encoder(nn.Module):
    """forward(x, valid) zero-pads x first, as Encoder::encode does, then runs the mechanism."""

    def forward(self, x, valid):
        return self.encode_tokens(zero_padded(x, valid), valid)

    def engine_state(self, params):
        """The engine's parameters {name: tensor} as this module's state_dict."""
        return params


# ---------------------------------------------------------------- MTSA

class MtsaLayer(nn.Module):
    """The 'original' variant (models/mtsa.h): v = relu(W_v x + b), per head q, k = v W, S from v,
    Algorithm 1 with sigma_t = log-sigmoid, the gate; half the heads forward, half backward."""

    def __init__(self, d_in, hidden=300, heads=2):
        super().__init__()
        self.h, self.dh = heads, hidden // heads
        self.v = nn.Linear(d_in, hidden)
        self.q, self.k = HeadLinear(heads, self.dh, self.dh, False), HeadLinear(heads, self.dh, self.dh, False)
        self.s1, self.s2 = HeadLinear(heads, self.dh, self.dh), HeadLinear(heads, self.dh, self.dh)
        self.gate = HeadLinear(heads, 2 * self.dh, self.dh)

    def forward(self, x, valid):
        b, n, _ = x.shape
        v = F.relu(self.v(x)).view(b, n, self.h, self.dh).transpose(1, 2)  # [B, h, n, dh]
        q, k = self.q(v), self.k(v)
        s = self.s2(F.relu(self.s1(v)))
        fw, bw = direction_mask(n, "forward"), direction_mask(n, "backward")
        positional = torch.stack([fw] * (self.h // 2) + [bw] * (self.h - self.h // 2))  # [h, n, n]
        allowed = positional[None] & valid[:, None, None, :] & valid[:, None, :, None]
        padded = ~valid[:, None, :, None]
        r = q @ k.transpose(-1, -2) / self.dh ** 0.5
        e_r = torch.sigmoid(r).masked_fill(~allowed, 0.0)  # exp(log_sigmoid(R)), masked once
        s = s.masked_fill(padded, 0.0)
        s_max = s.detach().masked_fill(padded, NEG_INF).amax(2, keepdim=True)  # shift cancels in the ratio
        e_s = torch.exp(s - s_max).masked_fill(padded, 0.0)
        num, den = e_r @ (v * e_s), e_r @ e_s
        positive = den > 0
        hh = torch.where(positive, num / torch.where(positive, den, torch.ones_like(den)), torch.zeros_like(den))
        g = torch.sigmoid(self.gate(torch.cat([v, hh], -1)))
        out = (g * v + (1 - g) * hh).transpose(1, 2).reshape(b, n, -1)
        return zero_padded(out, valid)


class Mtsa(Encoder):
    def __init__(self, d_in, hidden=300):
        super().__init__()
        self.mtsa = MtsaLayer(d_in, hidden)
        self.s2t = Source2Token(hidden)

    def encode_tokens(self, x, valid):
        tokens = self.mtsa(x, valid)
        return tokens, self.s2t(tokens, valid)


# ---------------------------------------------------------------- DiSAN

class Disa(nn.Module):
    def __init__(self, d_in, d, direction):
        super().__init__()
        self.direction = direction
        self.fc = nn.Linear(d_in, d)
        self.w1, self.w2 = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.bias = nn.Parameter(torch.zeros(d))
        self.fusion = GatedFusion(d)

    def forward(self, x, valid):
        allowed = pair_mask(valid, direction_mask(x.shape[1], self.direction))
        h = F.relu(self.fc(x))
        s = multi_dim_attention(h, self.w1(h), self.w2(h), self.bias, allowed)
        return zero_padded(self.fusion(s, h), valid)


class Disan(Encoder):
    def __init__(self, d_in, hidden=300):
        super().__init__()
        self.fw, self.bw = Disa(d_in, hidden, "forward"), Disa(d_in, hidden, "backward")
        self.s2t = Source2Token(2 * hidden)

    def encode_tokens(self, x, valid):
        tokens = torch.cat([self.fw(x, valid), self.bw(x, valid)], -1)
        return tokens, self.s2t(tokens, valid)


# ---------------------------------------------------------------- Bi-BloSAN

def block_length(n):
    """ceil(cbrt(2n)), the smallest r with r^3 >= 2n (models/blosa_block_len.h, auto mode)."""
    r = 1
    while r * r * r < 2 * n:
        r += 1
    return r


class FeatureFusionGate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.d = d
        self.proj = nn.Linear(3 * d, 2 * d)

    def forward(self, x, h, e):
        both = self.proj(torch.cat([x, h, e], -1))
        f, g = F.relu(both[..., :self.d]), torch.sigmoid(both[..., self.d:])
        return g * f + (1 - g) * x


class MBlosa(nn.Module):
    def __init__(self, d, direction):
        super().__init__()
        self.direction = direction
        self.intra_w1, self.intra_w2 = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.intra_bias = nn.Parameter(torch.zeros(d))
        self.block_s2t = Source2Token(d, two_layer=False)
        self.inter_w1, self.inter_w2 = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.inter_bias = nn.Parameter(torch.zeros(d))
        self.block_gate = GatedFusion(d)
        self.fusion = FeatureFusionGate(d)

    def forward(self, x, valid):
        b, n, d = x.shape
        r = block_length(n)
        m = -(-n // r)
        xp = F.pad(x, (0, 0, 0, m * r - n))
        vp = F.pad(valid, (0, m * r - n))
        xb, vb = xp.reshape(b * m, r, d), vp.reshape(b * m, r)
        intra = pair_mask(vb, direction_mask(r, self.direction))
        hb = multi_dim_attention(xb, self.intra_w1(xb), self.intra_w2(xb), self.intra_bias, intra)
        v = self.block_s2t(hb, vb).reshape(b, m, d)
        block_valid = vp.reshape(b, m, r).any(2)
        inter = pair_mask(block_valid, direction_mask(m, self.direction))
        o = multi_dim_attention(v, self.inter_w1(v), self.inter_w2(v), self.inter_bias, inter)
        e = self.block_gate(v, o)
        big_e = e[:, :, None, :].expand(b, m, r, d).reshape(b, m * r, d)
        u = self.fusion(xp, hb.reshape(b, m * r, d), big_e)
        return zero_padded(u[:, :n], valid)


class BiBlosan(Encoder):
    def __init__(self, d_in, hidden=300):
        super().__init__()
        self.fw_fc, self.fw = nn.Linear(d_in, hidden), MBlosa(hidden, "forward")
        self.bw_fc, self.bw = nn.Linear(d_in, hidden), MBlosa(hidden, "backward")
        self.s2t = Source2Token(2 * hidden)

    def encode_tokens(self, x, valid):
        tokens = torch.cat([self.fw(F.relu(self.fw_fc(x)), valid), self.bw(F.relu(self.bw_fc(x)), valid)], -1)
        return tokens, self.s2t(tokens, valid)


# ---------------------------------------------------------------- Transformer

def sinusoidal_positions(n, d, dtype):
    pe = torch.zeros(n, d, dtype=torch.float64)
    for i in range(0, d, 2):
        rate = math.pow(10000.0, -i / d)
        angle = torch.arange(n, dtype=torch.float64) * rate
        pe[:, i] = torch.sin(angle)
        if i + 1 < d:
            pe[:, i + 1] = torch.cos(angle)
    return pe.to(dtype)


class TransformerLayer(nn.Module):
    """Post-norm: Z = LN(H + MHA(H)), H' = LN(Z + FFN(Z)); attention biases 0, LN eps 1e-6."""

    def __init__(self, d, heads, ffn, keep_prob):
        super().__init__()
        # Biases held at exactly 0 (the engine has none): torch 1.13's inference fast path
        # (_native_multi_head_attention) fails on bias=False, and adding 0.0 changes no value.
        self.attn = nn.MultiheadAttention(d, heads, bias=True, batch_first=True)
        for bias in (self.attn.in_proj_bias, self.attn.out_proj.bias):
            nn.init.zeros_(bias)
            bias.requires_grad_(False)
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
        self.ffn1, self.ffn2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.dropout = dropout(keep_prob)

    def forward(self, h, valid):
        a = self.attn(h, h, h, key_padding_mask=~valid, need_weights=False)[0]
        z = self.ln1(h + self.dropout(zero_padded(a, valid)))
        out = self.ln2(z + self.dropout(self.ffn2(F.relu(self.ffn1(z)))))
        return zero_padded(out, valid)


class Transformer(Encoder):
    """One layer, 10 heads, FFN 4 x 300, sinusoidal positions, no dropout (keep_prob 1)."""

    def __init__(self, d_in, hidden=300, heads=10, layers=1, keep_prob=1.0):
        super().__init__()
        assert d_in == hidden, "the engine adds an input projection when input_dim != hidden"
        self.layers = nn.ModuleList([TransformerLayer(hidden, heads, 4 * hidden, keep_prob) for _ in range(layers)])
        self.dropout = dropout(keep_prob)
        self.s2t = Source2Token(hidden)

    def encode_tokens(self, x, valid):
        h = zero_padded(self.dropout(x + sinusoidal_positions(x.shape[1], x.shape[2], x.dtype)), valid)
        for layer in self.layers:
            h = layer(h, valid)
        return h, self.s2t(h, valid)

    def engine_state(self, params):
        """The engine's separate q, k, v, out become MultiheadAttention's in_proj and out_proj."""
        state = {}
        for name, t in params.items():
            head, _, rest = name.partition(".")
            if rest.startswith("attn."):
                continue
            state[name.replace("layer", "layers.", 1) if head.startswith("layer") else name] = t
        for i in range(len(self.layers)):
            p = f"layer{i}.attn."
            state[f"layers.{i}.attn.in_proj_weight"] = torch.cat(
                [params[p + "q.weight"], params[p + "k.weight"], params[p + "v.weight"]], 0)
            state[f"layers.{i}.attn.out_proj.weight"] = params[p + "out.weight"]
            state[f"layers.{i}.attn.in_proj_bias"] = torch.zeros_like(state[f"layers.{i}.attn.in_proj_weight"][:, 0])
            state[f"layers.{i}.attn.out_proj.bias"] = torch.zeros_like(params[p + "out.weight"][:, 0])
        return state


# ---------------------------------------------------------------- Multi-Scale Transformer

# The default scales "1,3,n/16,n/8,n/4": ("window", size) or ("ratio", k).
DEFAULT_SCALES = (("window", 1), ("window", 3), ("ratio", 16), ("ratio", 8), ("ratio", 4))


def scale_radius(scale, length):
    kind, value = scale
    return length // (2 * value) if kind == "ratio" else (value - 1) // 2


def scale_head_counts(layers, scales, heads, alpha):
    """Eq. 11-12 as models/multiscale.h reads them (largest remainder, ties to the smaller scale)."""
    counts = []
    for l in range(1, layers + 1):
        step = alpha * (layers - l) / (layers - 1) if layers > 1 else 0.0
        z = [(scales - 1 - k) * step for k in range(scales)]
        top = max(z)
        z = [math.exp(v - top) for v in z]
        total = sum(z)
        shares = [heads * v / total for v in z]
        row = [int(math.floor(s + 1e-9)) for s in shares]
        rest = [s - r for s, r in zip(shares, row)]
        for k in sorted(range(scales), key=lambda k: -rest[k])[:heads - sum(row)]:
            row[k] += 1
        counts.append(row)
    return counts


class MultiScaleAttention(nn.Module):
    def __init__(self, d, counts, scales=DEFAULT_SCALES):
        super().__init__()
        self.counts, self.scales = counts, scales
        self.q, self.k = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.v, self.out = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)

    def forward(self, x, valid, blocked):
        """blocked[s]: [B, 1, n, n] keys outside scale s's window or padded (window_masks)."""
        b, n, d = x.shape
        heads = sum(self.counts)
        dh = d // heads
        split = lambda t: t.view(b, n, heads, dh).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        groups, first = [], 0
        for s, c in enumerate(self.counts):
            if c == 0:
                continue
            scores = q[:, first:first + c] @ k[:, first:first + c].transpose(-1, -2) / dh ** 0.5
            groups.append(masked_softmax(scores, blocked[s], -1) @ v[:, first:first + c])
            first += c
        merged = torch.cat(groups, 1).transpose(1, 2).reshape(b, n, d)
        return zero_padded(self.out(merged), valid)


def window_masks(valid, lengths, scales=DEFAULT_SCALES):
    """Per scale, [B, 1, n, n] True where query j may not see key i: |i - j| beyond the radius the
    scale has for the example's length, or key i padded. The same for every layer."""
    n = valid.shape[1]
    idx = torch.arange(n)
    distance = (idx[:, None] - idx[None, :]).abs()
    masks = []
    for scale in scales:
        radii = torch.tensor([scale_radius(scale, length) for length in lengths])
        masks.append(((distance[None] > radii[:, None, None]) | ~valid[:, None, :])[:, None])
    return masks


class MultiScaleLayer(nn.Module):
    def __init__(self, d, counts, keep_prob):
        super().__init__()
        self.msmsa = MultiScaleAttention(d, counts)
        self.ln = nn.LayerNorm(d, eps=1e-6)
        self.dropout = dropout(keep_prob)

    def forward(self, h, valid, blocked):
        return zero_padded(self.ln(h + self.dropout(F.relu(self.msmsa(h, valid, blocked)))), valid)


class MultiScaleTransformer(Encoder):
    """3 layers, scales 1, 3, n/16, n/8, n/4, 10 heads split by Eq. 11-12 (alpha 0.5), a learned
    [CLS] in front, no FFN, no positional encoding; sentence = [CLS; max-pool of the tokens]."""

    def __init__(self, d_in, hidden=300, layers=3, heads=10, alpha=0.5, keep_prob=1.0):
        super().__init__()
        assert d_in == hidden, "the engine adds an input projection when input_dim != hidden"
        self.cls = nn.Parameter(torch.zeros(hidden).uniform_(-(6 / (1 + hidden)) ** 0.5, (6 / (1 + hidden)) ** 0.5))
        counts = scale_head_counts(layers, len(DEFAULT_SCALES), heads, alpha)
        self.layers = nn.ModuleList([MultiScaleLayer(hidden, counts[l], keep_prob) for l in range(layers)])
        self.dropout = dropout(keep_prob)

    def encode_tokens(self, x, valid):
        b, n, d = x.shape
        lengths = valid.sum(1).tolist()  # N of the ratio scales: the sentence without [CLS]
        h = torch.cat([self.cls.expand(b, 1, d), self.dropout(x)], 1)
        valid_cls = torch.cat([torch.ones(b, 1, dtype=torch.bool), valid], 1)
        h = zero_padded(h, valid_cls)
        blocked = window_masks(valid_cls, lengths)
        for layer in self.layers:
            h = layer(h, valid_cls, blocked)
        tokens = h[:, 1:]
        pooled = tokens.masked_fill(~valid[..., None], NEG_INF).amax(1)
        return tokens, torch.cat([h[:, 0], pooled], 1)

    def engine_state(self, params):
        return {(name.replace("layer", "layers.", 1) if name.startswith("layer") else name): t
                for name, t in params.items()}


# ---------------------------------------------------------------- ReSAN

class Rss(nn.Module):
    """Reinforced sequence sampling: a_i = w^T relu(W [x_i; xbar; x_i * xbar] + b) + b'."""

    def __init__(self, d_in, hidden):
        super().__init__()
        self.fc, self.out = nn.Linear(3 * d_in, hidden), nn.Linear(hidden, 1)

    def forward(self, x, valid, forced=None):
        """x is zero at padded rows. Returns the selection z [B, n] bool and log pi(z) [B]."""
        count = valid.sum(1, keepdim=True).to(x.dtype)[..., None]
        xbar = x.sum(1, keepdim=True) / count.clamp(min=1)
        a = self.out(F.relu(self.fc(torch.cat([x, xbar.expand_as(x), x * xbar], -1)))).squeeze(-1)
        with torch.no_grad():
            if forced is not None:
                z = forced
            elif self.training:
                z = torch.bernoulli(torch.sigmoid(a).masked_fill(~valid, 0.0)).bool() & valid
            else:
                z = (a >= 0) & valid
        log_pi = torch.where(z, F.logsigmoid(a), F.logsigmoid(-a)).masked_fill(~valid, 0.0).sum(1)
        return z, log_pi


class Resa(nn.Module):
    def __init__(self, d_in, d, direction, keep_prob):
        super().__init__()
        self.direction = direction
        self.fc = nn.Linear(d_in, d)
        self.w_head, self.w_dep = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.bias = nn.Parameter(torch.zeros(d))
        self.gate = nn.Module()
        self.gate.proj = nn.Linear(2 * d, d)
        self.dropout = dropout(keep_prob)

    def forward(self, x, valid, z_head, z_dep):
        n = x.shape[1]
        allowed = pair_mask(valid, direction_mask(n, self.direction)) & z_head[:, :, None] & z_dep[:, None, :]
        h = zero_padded(F.relu(self.fc(x)), valid)
        hd = self.dropout(h)
        s = multi_dim_attention(h, self.w_head(hd), self.w_dep(hd), self.bias, allowed)
        # An unselected head averages h over every other valid token (all_tokens pool).
        pool = (valid & ~z_head)[:, :, None] & valid[:, None, :] & ~torch.eye(n, dtype=torch.bool)[None]
        weights = pool.to(h.dtype)
        s = s + (weights @ h) / weights.sum(2, keepdim=True).clamp(min=1)
        f = torch.sigmoid(self.gate.proj(torch.cat([h, s], -1)))
        return zero_padded(f * h + (1 - f) * s, valid)


class Resan(Encoder):
    """Two RSS (head, dependent), forward and backward ReSA sharing their selections, dropout
    keep_prob 0.75 on h where it enters the alignment scores, two-layer source2token readout.
    `forced_selection` = (z_head, z_dep) replaces the RSS choice (the numeric check's train mode)."""

    def __init__(self, d_in, hidden=300, keep_prob=0.75):
        super().__init__()
        self.rss_head, self.rss_dep = Rss(d_in, hidden), Rss(d_in, hidden)
        self.fw, self.bw = Resa(d_in, hidden, "forward", keep_prob), Resa(d_in, hidden, "backward", keep_prob)
        self.s2t = Source2Token(2 * hidden)
        self.forced_selection = None
        self.last_selection = None

    def encode_tokens(self, x, valid):
        forced = self.forced_selection or (None, None)
        z_head, log_pi_head = self.rss_head(x, valid, forced[0])
        z_dep, log_pi_dep = self.rss_dep(x, valid, forced[1])
        self.last_selection = (z_head, z_dep, log_pi_head + log_pi_dep)
        tokens = torch.cat([self.fw(x, valid, z_head, z_dep), self.bw(x, valid, z_head, z_dep)], -1)
        return tokens, self.s2t(tokens, valid)


# ---------------------------------------------------------------- the recurrent baselines

class BiRnn(Encoder):
    """Bi-LSTM / Bi-GRU (models/birnn.h) in the PyTorch cell form (cell_form = pytorch): one
    bidirectional torch.nn.LSTM / GRU run on packed sequences over each sentence's valid tokens,
    tokens [fw | bw] (0 at padding), then the two-layer source2token. The engine's default, the
    TensorFlow form, is not torch.nn.GRU's function (its reset gate acts before the product), so the
    comparison configures the engine to the PyTorch form (ENGINE_CONFIG); for the LSTM the two forms
    differ only in gate order and a constant forget bias, at the same cost."""

    def __init__(self, d_in, cell, hidden=300):
        super().__init__()
        self.hidden = hidden
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(d_in, hidden, batch_first=True, bidirectional=True)
        self.s2t = Source2Token(2 * hidden)

    def encode_tokens(self, x, valid):
        lengths = valid.sum(1)
        B, n = valid.shape
        # pack_padded_sequence takes no empty sentence; the engine gives one zero tokens.
        nonempty = lengths > 0
        tokens = x.new_zeros(B, n, 2 * self.hidden)
        if bool(nonempty.any()):
            keep = nonempty.nonzero().squeeze(1)
            packed = pack_padded_sequence(x[keep], lengths[keep].cpu(), batch_first=True, enforce_sorted=False)
            out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=n)
            tokens = out if bool(nonempty.all()) else tokens.index_copy(0, keep, out)
        return tokens, self.s2t(tokens, valid)

    def engine_state(self, params):
        """PyTorch's names and layout for one layer: weight_ih_l0 = fw.w_ih, weight_hh_l0 = fw.w_hh
        transposed, bias_ih_l0 = fw.b_ih, bias_hh_l0 = fw.b_hh, _reverse = bw.*; the gate blocks
        are in the same order (birnn_params_from_torch in models/birnn.h, docs/models.md)."""
        out = {k: v for k, v in params.items() if k.startswith("s2t.")}
        for ours, suffix in (("fw", ""), ("bw", "_reverse")):
            out[f"rnn.weight_ih_l0{suffix}"] = params[f"{ours}.w_ih"]
            out[f"rnn.weight_hh_l0{suffix}"] = params[f"{ours}.w_hh"].t().contiguous()
            out[f"rnn.bias_ih_l0{suffix}"] = params[f"{ours}.b_ih"]
            out[f"rnn.bias_hh_l0{suffix}"] = params[f"{ours}.b_hh"]
        return out


# ---------------------------------------------------------------- the CNN baselines

class TokenConv(nn.Module):
    """ops/token_conv with nn.Conv1d: the window of token t is t - (k - 1) // 2 .. t + k // 2
    (TensorFlow's SAME padding: an even width reaches one further right), zeros outside the
    sentence; the input is 0 at padded tokens already (Encoder.forward zero-pads x, and every layer
    here leaves padded tokens 0), so padded taps read 0 as in the engine; outputs at padded tokens
    are set to 0. The engine's weight is [k, in, out], nn.Conv1d's [out, in, k] (engine_state)."""

    def __init__(self, k, d_in, d_out):
        super().__init__()
        self.left, self.right = (k - 1) // 2, k // 2
        # An odd width pads symmetrically: the convolution's own padding, no copy of the input.
        self.conv = nn.Conv1d(d_in, d_out, k, padding=self.left if self.left == self.right else 0)

    def forward(self, x, valid):
        h = x.transpose(1, 2)
        if self.left != self.right:
            h = F.pad(h, (self.left, self.right))
        return zero_padded(self.conv(h).transpose(1, 2), valid)

    @staticmethod
    def engine_state(params, ours, theirs):
        return {f"{theirs}.conv.weight": params[f"{ours}.weight"].permute(2, 1, 0).contiguous(),
                f"{theirs}.conv.bias": params[f"{ours}.bias"]}


class MultiCnn(Encoder):
    """Multi-CNN (models/multicnn.h): one convolution per n-gram width 3, 4, 5 with 200 filters,
    relu, the widths concatenated per token, then the two-layer source2token."""

    def __init__(self, d_in, filters=200, widths=(3, 4, 5)):
        super().__init__()
        self.widths = widths
        self.convs = nn.ModuleList(TokenConv(k, d_in, filters) for k in widths)
        self.s2t = Source2Token(filters * len(widths))

    def encode_tokens(self, x, valid):
        tokens = torch.cat([F.relu(conv(x, valid)) for conv in self.convs], -1)
        return tokens, self.s2t(tokens, valid)

    def engine_state(self, params):
        out = {k: v for k, v in params.items() if k.startswith("s2t.")}
        for i, k in enumerate(self.widths):
            out.update(TokenConv.engine_state(params, f"conv{k}", f"convs.{i}"))
        return out


class HrchyCnn(Encoder):
    """Hrchy-CNN (models/hrchycnn.h): 3 layers of c = relu(conv5(h) + b) [B, n, 600], the gated
    linear unit F.glu (first half times sigmoid of the second), a residual from the second layer
    on; then the two-layer source2token over the 300 features."""

    def __init__(self, d_in, hidden=300, layers=3, width=5):
        super().__init__()
        self.convs = nn.ModuleList(TokenConv(width, d_in if l == 0 else hidden, 2 * hidden) for l in range(layers))
        self.s2t = Source2Token(hidden)

    def encode_tokens(self, x, valid):
        h = x
        for l, conv in enumerate(self.convs):
            g = F.glu(F.relu(conv(h, valid)), -1)
            h = g if l == 0 else g + h
        return h, self.s2t(h, valid)

    def engine_state(self, params):
        out = {k: v for k, v in params.items() if k.startswith("s2t.")}
        for l in range(len(self.convs)):
            out.update(TokenConv.engine_state(params, f"conv{l}", f"convs.{l}"))
        return out


# ---------------------------------------------------------------- building and timing

def build(name, features, config=None):
    """The PyTorch encoder for the engine's registry name, at the engine's defaults; `config` holds
    the `attn bench --set` keys the numeric check uses (only keep_prob is understood)."""
    config = dict(config or {})
    keep_prob = float(config.pop("keep_prob", 0.75 if name == "resan" else 1.0))
    if config.get("cell_form") == ENGINE_CONFIG.get(name, {}).get("cell_form"):
        config.pop("cell_form", None)  # the only cell form written here
    if config:
        raise ValueError(f"bench_torch: {name}: no PyTorch version of config keys {sorted(config)}")
    if name == "mtsa":
        return Mtsa(features)
    if name == "disan":
        return Disan(features)
    if name == "biblosan":
        return BiBlosan(features)
    if name == "transformer":
        return Transformer(features, keep_prob=keep_prob)
    if name == "mstrans":
        return MultiScaleTransformer(features, keep_prob=keep_prob)
    if name == "resan":
        return Resan(features, keep_prob=keep_prob)
    if name in ("bilstm", "bigru"):
        return BiRnn(features, name[2:])
    if name == "multicnn":
        return MultiCnn(features)
    if name == "hrchycnn":
        return HrchyCnn(features)
    raise ValueError(f"bench_torch: unknown encoder '{name}' (known: {', '.join(ENCODERS)})")


def keep_prob_note(name):
    return "dropout keep_prob 0.75 and RSS sampling in training mode" if name == "resan" else "no dropout"


def synchronize():
    """Waits for the GPU's queued kernels (a no-op on the CPU), so a step is timed to completion."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def step(model, x, valid, mode):
    """One bench step; returns its wall time in ms (gradients cleared before the clock starts)."""
    if mode == "train":
        model.train()
        model.zero_grad(set_to_none=True)
        synchronize()
        start = time.perf_counter()
        tokens, sentence = model(x, valid)
        (tokens.sum() + sentence.sum()).backward()
        synchronize()
        return (time.perf_counter() - start) * 1000
    model.eval()
    synchronize()
    start = time.perf_counter()
    with torch.inference_mode():
        model(x, valid)
    synchronize()
    return (time.perf_counter() - start) * 1000


def openblas_core():
    """The kernel set of the OpenBLAS this process loaded (PyTorch's BLAS on Debian), or "none"."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "none"


def warm_blas(threads):
    """Runs products with 512 and more columns on every OpenBLAS work buffer PyTorch's matmuls can use."""
    for dtype in (torch.float32, torch.float64):
        for used in sorted({1, threads}):
            torch.set_num_threads(used)
            a = torch.ones(256 * used, 64, dtype=dtype)
            b = torch.ones(64, 512 * used, dtype=dtype)
            torch.mm(a, b)
            torch.bmm(a.expand(4, -1, -1), b.expand(4, -1, -1))
    torch.set_num_threads(threads)


def time_steps(model, x, valid, mode, reps, warmup):
    times = [step(model, x, valid, mode) for _ in range(warmup + reps)][warmup:]
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(ENCODERS), help="comma list of: " + ", ".join(ENCODERS))
    ap.add_argument("--mode", default="both", choices=("train", "infer", "both"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--features", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--blas", default="warm", choices=("warm", "cold"),
                    help="warm OpenBLAS's work buffers before timing (default), or leave them cold")
    ap.add_argument("--json", action="store_true", help="one JSON object per line instead of text")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="cuda: every tensor on the GPU (needs torch >= 2.0 for its default device), float32 "
                         "products without TF32, as the engine's default")
    args = ap.parse_args()
    for flag in ("threads", "reps", "batch", "length", "features"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag} must be at least 1, got {getattr(args, flag)}")
    if args.warmup < 0:
        ap.error(f"--warmup must not be negative, got {args.warmup}")
    models = args.models.split(",")
    for name in models:
        if name not in ENCODERS:
            ap.error(f"unknown encoder '{name}' (known: {', '.join(ENCODERS)})")
    modes = ("infer", "train") if args.mode == "both" else (args.mode,)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    if args.device == "cuda":
        if not torch.cuda.is_available():
            ap.error("--device cuda: PyTorch sees no CUDA GPU")
        if not hasattr(torch, "set_default_device"):
            ap.error(f"--device cuda needs torch >= 2.0 (this is {torch.__version__})")
        # The encoders build their masks and positions with factory functions: they follow the default device.
        torch.set_default_device("cuda")
        torch.backends.cuda.matmul.allow_tf32 = False
    if args.blas == "warm" and args.device == "cpu":
        warm_blas(args.threads)
    x = torch.rand(args.batch, args.length, args.features) * 2 - 1
    valid = torch.ones(args.batch, args.length, dtype=torch.bool)
    if not args.json:
        print(f"torch {torch.__version__} on {args.device}, {torch.get_num_threads()} threads, batch {args.batch}, length "
              f"{args.length}, {args.features} features, median of {args.reps} after {args.warmup} warm-up, "
              f"OpenBLAS buffers {args.blas}, OpenBLAS core {openblas_core()}")
    for name in models:
        model = build(name, args.features)
        for mode in modes:
            med, lo, hi = time_steps(model, x, valid, mode, args.reps, args.warmup)
            rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            if args.json:
                print(json.dumps({"model": name, "mode": mode, "median_ms": med, "min_ms": lo, "max_ms": hi,
                                   "rss_mib": rss_mib, "torch": torch.__version__, "device": args.device,
                                  "openblas_core": openblas_core()}),
                  flush=True)
            else:
                print(f"  {name:12s} {mode:5s} median {med:9.1f} ms  (min {lo:.1f}, max {hi:.1f}), peak RSS "
                      f"{rss_mib:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
