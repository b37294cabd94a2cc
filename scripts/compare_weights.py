#!/usr/bin/env python3
"""Compares the tensors of two safetensors files (float32 or float64).

  scripts/compare_weights.py A.safetensors B.safetensors [--prefix P] [--max-relative R]

Prints the largest absolute difference, the tensor and element where it is,
and the largest |w| of A, over the tensors whose names start with P (a
checkpoint's model weights are "model."; "" compares everything). With --max-relative R it exits 1 unless every
difference is at most R * max|w| (and the two files name the same tensors of
the same shapes). Used by scripts/check_data_parallel.sh.
"""
import argparse
import json
import struct
import sys
from array import array

FORMATS = {"F32": "f", "F64": "d"}


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        sys.exit(f"compare_weights: {path}: too short for a safetensors file")
    (header_size,) = struct.unpack("<Q", blob[:8])
    if header_size > len(blob) - 8:
        sys.exit(f"compare_weights: {path}: header size {header_size} runs past the end of the file")
    header = json.loads(blob[8:8 + header_size])
    data = blob[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] not in FORMATS:
            continue
        begin, end = entry["data_offsets"]
        values = array(FORMATS[entry["dtype"]])
        values.frombytes(data[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        tensors[name] = (tuple(entry["shape"]), values)
    return tensors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--max-relative", type=float, default=None)
    args = parser.parse_args()
    a = {k: v for k, v in read(args.a).items() if k.startswith(args.prefix)}
    b = {k: v for k, v in read(args.b).items() if k.startswith(args.prefix)}
    if not a:
        print(f"compare_weights: {args.a} has no tensor named {args.prefix}...")
        return 1
    if sorted(a) != sorted(b):
        print(f"compare_weights: the files name different tensors: {sorted(set(a) ^ set(b))}")
        return 1
    worst, where, largest = 0.0, "-", 0.0
    for name, (shape, values) in a.items():
        other_shape, other = b[name]
        if shape != other_shape:
            print(f"compare_weights: {name}: shape {shape} against {other_shape}")
            return 1
        for i, (x, y) in enumerate(zip(values, other)):
            largest = max(largest, abs(x))
            if abs(x - y) > worst or x != x or y != y:
                worst, where = abs(x - y), f"{name}[{i}]"
    relative = worst / largest if largest > 0 else worst
    print(f"max |a - b| = {worst:.3g} at {where}; max |a| = {largest:.3g}; relative {relative:.3g}")
    if args.max_relative is not None and not relative <= args.max_relative:
        print(f"compare_weights: FAIL: relative difference {relative:.3g} exceeds {args.max_relative:.3g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
