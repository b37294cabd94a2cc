#!/usr/bin/python3
"""Writes tests/fixtures/torch_rnn.safetensors: torch.nn.LSTM and torch.nn.GRU, bidirectional, one
layer, float64, run on packed sequences, with their weights, inputs, outputs and gradients.

tests/test_recurrent_torch_fixture.cpp reads the file (never PyTorch) and checks that the engine's
Bi-LSTM / Bi-GRU in the PyTorch cell form (cell_form = pytorch), given these weights through
birnn_state_from_torch (models/birnn.h), computes the same outputs and gradients. The file is
made once and committed; rerun this only to change what it holds:

    /usr/bin/python3 scripts/make_torch_rnn_fixture.py [--out tests/fixtures/torch_rnn.safetensors]

Needs Debian's python3-torch (PyTorch 1.13, CPU). Contents, for cell in {lstm, gru}:
  input.x [3, 4, 5]        the batch; NaN at padded positions (neither side may read them)
  input.lengths [3] I64    4, 1, 2 (pack_padded_sequence rejects 0: the test adds an empty
                           sentence on the engine's side only)
  loss.r [3, 4, 8]         the loss is sum(output * r) over the valid positions
  <cell>.<name>            the module's state_dict in PyTorch's names and layout
                           (weight_ih_l0 [G, 5], weight_hh_l0 [G, 4], bias_ih_l0, bias_hh_l0 [G],
                           and the same with _reverse; G = 4 * 4 or 3 * 4)
  <cell>.output [3, 4, 8]  pad_packed_sequence's output, [forward | backward], 0 at padding
  <cell>.h_n [2, 3, 4]     the final states (forward, backward)
  <cell>.grad.input.x      the loss's gradient for the input (0 at padding)
  <cell>.grad.<name>       and for every weight, in PyTorch's layout
"""
import argparse
import json
import os
import struct

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT, HIDDEN, LENGTHS, N = 5, 4, [4, 1, 2], 4
DTYPES = {torch.float64: "F64", torch.int64: "I64"}


def save_safetensors(path, tensors, metadata):
    """The safetensors layout (an 8-byte little-endian header length, the JSON header, then the
    little-endian row-major data), written with the standard library."""
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data section 8-byte aligned, as the format recommends
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(cell, x, r, tensors):
    rnn = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(INPUT, HIDDEN, batch_first=True,
                                                             bidirectional=True).double()
    xg = x.clone().requires_grad_(True)
    packed = pack_padded_sequence(xg, torch.tensor(LENGTHS), batch_first=True, enforce_sorted=False)
    out_packed, state = rnn(packed)
    out, _ = pad_packed_sequence(out_packed, batch_first=True, total_length=N)
    (out * r).sum().backward()
    for name, p in rnn.state_dict().items():
        tensors[f"{cell}.{name}"] = p
    tensors[f"{cell}.output"] = out
    tensors[f"{cell}.h_n"] = state[0] if cell == "lstm" else state  # the LSTM's (h_n, c_n): c_n is not an output of ours
    tensors[f"{cell}.grad.input.x"] = xg.grad
    for name, p in rnn.named_parameters():
        tensors[f"{cell}.grad.{name}"] = p.grad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "torch_rnn.safetensors"))
    args = ap.parse_args()
    torch.manual_seed(20261129)
    x = torch.rand(len(LENGTHS), N, INPUT, dtype=torch.float64) * 2 - 1
    for b, n in enumerate(LENGTHS):
        x[b, n:] = float("nan")
    r = torch.rand(len(LENGTHS), N, 2 * HIDDEN, dtype=torch.float64) * 2 - 1
    tensors = {"input.x": x, "input.lengths": torch.tensor(LENGTHS, dtype=torch.int64), "loss.r": r}
    run("lstm", x, r, tensors)
    run("gru", x, r, tensors)
    for name, t in tensors.items():
        if name != "input.x" and t.is_floating_point() and not torch.isfinite(t).all():
            raise SystemExit(f"make_torch_rnn_fixture: {name} is not finite: the padding was read")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    save_safetensors(args.out, tensors, {"torch": torch.__version__, "made_by": "scripts/make_torch_rnn_fixture.py"})
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes, {len(tensors)} tensors, torch {torch.__version__})")


if __name__ == "__main__":
    main()
