#!/usr/bin/python3
"""The engine against PyTorch on this machine, in one run (not part of the build or tests).

For each encoder, times a training step (forward + backward of sum(tokens) + sum(sentence))
at batch 64, length 64, 300 features: first `build/bin/attn bench` (a subprocess), then the
same encoder written in PyTorch (scripts/bench_torch.py), with the same thread count, so the
two medians are taken minutes apart on the same load. Prints the medians and their ratio.

    /usr/bin/python3 scripts/bench_vs_torch.py [--threads 2] [--reps 5] [--models mtsa,disan,transformer]

Needs Debian's python3-torch (PyTorch 1.13, CPU) and a built build/bin/attn.
"""
import csv
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def engine_median(binary, model, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.csv")
        cmd = [binary, "bench", "--models", model, "--mode", "train", "--lengths", str(args.length),
               "--batch", str(args.batch), "--features", str(args.features), "--reps", str(args.reps),
               "--warmup", str(args.warmup), "--threads", str(args.threads), "--csv", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            row = next(csv.DictReader(f))
    return float(row["median_ms"]), float(row["peak_mib"])


def main():
    ap = bench_torch.step_arguments(__doc__, 5, "mtsa,disan,transformer")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "attn"))
    args = ap.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"bench_vs_torch: {args.binary} not found; build first (scripts/test.sh or cmake --build build)")
    models = args.models.split(",")
    for name in models:
        if name not in bench_torch.MODELS:
            ap.error(f"no PyTorch version of '{name}' (known: {', '.join(bench_torch.MODELS)})")
    x = bench_torch.random_batch(args)
    print(f"training step, batch {args.batch}, length {args.length}, {args.features} features, {args.threads} "
          f"threads, median of {args.reps} after {args.warmup} warm-up; torch {torch.__version__}")
    print(f"{'model':12s} {'engine ms':>10s} {'torch ms':>10s} {'torch/engine':>13s} {'engine MiB':>11s}")
    for name in models:
        engine_ms, engine_mib = engine_median(args.binary, name, args)
        torch_ms = bench_torch.time_step(bench_torch.MODELS[name](args.features), x, args.reps, args.warmup)[0]
        print(f"{name:12s} {engine_ms:10.1f} {torch_ms:10.1f} {torch_ms / engine_ms:13.2f} {engine_mib:11.1f}",
              flush=True)


if __name__ == "__main__":
    main()
