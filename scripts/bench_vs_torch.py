#!/usr/bin/python3
"""The engine against PyTorch on this machine, in one run (not part of the build or tests).

First a numeric check, for every encoder and mode: `attn bench --save-check` writes the encoder
built in float64 (weights, a padded input batch, its outputs and, in train mode, the gradients of
the bench loss sum(tokens) + sum(sentence) for the input and every parameter) to a safetensors
file; the PyTorch encoder of scripts/bench_torch.py loads those weights by name, runs the same
input in float64 and must agree within a float64 rounding bound, or the script stops (exit 1)
before timing anything. Then the timing: `attn bench --mode train|infer` and the same step in
PyTorch (bench_torch.py), each in its own process, alternating in rounds (the first of the two
alternates between rounds), batch 64, length 64, 300 features, all-valid masks, 2 threads.
Prints per encoder and mode the medians (median over rounds of each run's median), the ratio
ours / PyTorch (below 1 = the engine is faster), the median of each round's own ratio (its two
runs are back to back, so a change of the machine's speed between rounds cancels out) with the
smallest and largest of those ratios (how far one round can stray: a goal met by the median but
not by the largest is at the edge), and the engine allocator's peak.

Memory: our binary runs without GLIBC_TUNABLES (its CPU caching allocator is the default).
PyTorch runs by default "at its best": GLIBC_TUNABLES=glibc.malloc.mmap_max=0:
glibc.malloc.trim_threshold=18446744073709551615 (glibc keeps freed memory instead of mapping
and unmapping big tensors every step); --torch-malloc plain runs it with glibc's defaults.
PyTorch's OpenBLAS work buffers are warmed before its timing as the engine warms its own
(docs/engine.md, "OpenBLAS's cold buffers"); --torch-blas cold leaves them cold. Where OpenBLAS
does not know the CPU and falls back to its generic kernels, attn asks for the CPU's own
(docs/engine.md, "OpenBLAS's kernel set on a CPU it does not know"); PyTorch, which loads the same
OpenBLAS, is then given the same OPENBLAS_CORETYPE, and the header names both sides' kernel sets.

Configuration: every encoder at its defaults, except those bench_torch.ENGINE_CONFIG names, which
both the check and the timing pass to `attn bench --set`: bilstm and bigru in the PyTorch cell
form (cell_form=pytorch), the function of torch.nn.LSTM / torch.nn.GRU.

Randomness: only ReSAN has any at the defaults (dropout keep_prob 0.75 on h, and its RSS samples
its selection in training mode). The timing keeps both on, on both sides. The numeric check's
train mode sets keep_prob = 1 on both sides and gives PyTorch the selection the engine sampled
(its inference mode thresholds deterministically, and the two selections must agree).

    /usr/bin/python3 scripts/bench_vs_torch.py [--models mtsa,...] [--modes train,infer] [--rounds 2]
        [--reps 5] [--threads 2] [--torch-malloc best|plain] [--torch-blas warm|cold] [--check-only]
        [--binary build/bin/attn]

Needs Debian's python3-torch (PyTorch 1.13, CPU) and a built attn binary.
"""
import argparse
import csv
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_BEST_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615"
# float64 unit roundoff, and the rounding steps allowed on any path from the input to an
# output or gradient: the longest sums are 1200 (FFN) and 900 (RSS) terms deep, through up to 3
# layers, forward and backward; 2^16 covers that with room (the error bound is ~ steps * u *
# magnitude). The resulting 7e-12 relative bound is 10^4 below a float32 rounding (6e-8), so a
# float32 step or a different function cannot pass.
UNIT_ROUNDOFF = 2.0 ** -53
ROUNDING_STEPS = 2 ** 16
SAFETENSORS_DTYPES = {"F64": torch.float64, "F32": torch.float32, "U8": torch.uint8, "I64": torch.int64}


def fail(message):
    sys.exit(f"bench_vs_torch: {message}")


def read_safetensors(path):
    """{name: tensor} and the metadata of a safetensors file, read with the standard library:
    an 8-byte little-endian header length, the JSON header, then little-endian row-major data."""
    if sys.byteorder != "little":
        fail("reading safetensors assumes a little-endian machine")
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        fail(f"{path}: too short for a safetensors file")
    (header_len,) = struct.unpack("<Q", raw[:8])
    if 8 + header_len > len(raw):
        fail(f"{path}: header length {header_len} runs past the end of the file")
    header = json.loads(raw[8:8 + header_len].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    data = raw[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        if info["dtype"] not in SAFETENSORS_DTYPES:
            fail(f"{path}: tensor {name} has dtype {info['dtype']}, not one of {sorted(SAFETENSORS_DTYPES)}")
        dtype = SAFETENSORS_DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        count = 1
        for s in info["shape"]:
            count *= s
        if end - begin != count * torch.empty((), dtype=dtype).element_size() or end > len(data):
            fail(f"{path}: tensor {name}: offsets {begin}..{end} do not hold shape {info['shape']}")
        flat = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype) if end > begin else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(info["shape"])
    return tensors, metadata


def engine_env():
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    return env


# The OPENBLAS_CORETYPE PyTorch gets: the kernel set attn chose after an OpenBLAS fallback, so that
# both sides multiply with the same kernels ("" leaves the environment as it is).
TORCH_BLAS_CORE = ""


def engine_blas_core(binary):
    """attn's OpenBLAS kernel set and how it was chosen, from a tiny bench's banner."""
    out = run([binary, "bench", "--models", "mtsa", "--mode", "infer", "--lengths", "8", "--batch", "2", "--reps",
               "1", "--warmup", "0"], engine_env())
    marker = "float64 by OpenBLAS core "
    at = out.find(marker)
    if at < 0:
        fail(f"{binary} bench printed no OpenBLAS core:\n{out}")
    rest = out[at + len(marker):]
    name = rest.split(" ", 1)[0]
    how = rest[len(name) + 2:rest.find(")", len(name))]
    return name, how


def torch_env(malloc):
    env = dict(os.environ)
    if TORCH_BLAS_CORE:
        env["OPENBLAS_CORETYPE"] = TORCH_BLAS_CORE
    if malloc == "best":
        env["GLIBC_TUNABLES"] = TORCH_BEST_TUNABLES
    else:
        env.pop("GLIBC_TUNABLES", None)
    return env


def run(cmd, env):
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


# ---------------------------------------------------------------- the numeric check

def bench_config(model):
    """The `attn bench --set` keys of both the check and the timing: those under which the engine's
    encoder computes the PyTorch version's function (the recurrent baselines' PyTorch cell form)."""
    return dict(bench_torch.ENGINE_CONFIG.get(model, {}))


def check_config(model, mode):
    """The `attn bench --set` keys of the check: bench_config's, and ReSAN's dropout off in train
    mode."""
    config = bench_config(model)
    if model == "resan" and mode == "train":
        config["keep_prob"] = "1"
    return config


def set_flag(config):
    return ["--set", ",".join(f"{k}={v}" for k, v in config.items())] if config else []


def compare(name, ours, theirs, rows):
    """Appends (name, max |diff|, bound) and returns whether it is within the bound."""
    if tuple(ours.shape) != tuple(theirs.shape):
        rows.append((name, float("inf"), 0.0))
        print(f"    {name}: shape {tuple(ours.shape)} (engine) against {tuple(theirs.shape)} (PyTorch)")
        return False
    diff = (ours - theirs).abs().max().item() if ours.numel() else 0.0
    scale = max(ours.abs().max().item() if ours.numel() else 0.0, 1.0)
    bound = ROUNDING_STEPS * UNIT_ROUNDOFF * scale
    rows.append((name, diff, bound))
    return diff <= bound


def check_one(args, model, mode, tmp):
    """Runs the engine's check for model and mode and compares PyTorch with it. Returns
    (passed, max output diff, max gradient diff, largest diff / bound, notes)."""
    path = os.path.join(tmp, f"{model}-{mode}.safetensors")
    config = check_config(model, mode)
    cmd = [args.binary, "bench", "--models", model, "--mode", mode, "--lengths", str(args.length), "--batch",
           str(args.check_batch), "--features", str(args.features), "--threads", str(args.threads),
           "--save-check", path] + set_flag(config)
    run(cmd, engine_env())
    tensors, meta = read_safetensors(path)
    if meta.get("model") != model or meta.get("mode") != mode:
        fail(f"{path}: holds {meta.get('model')} {meta.get('mode')}, expected {model} {mode}")
    train = mode == "train"

    net = bench_torch.build(model, args.features, config).double()
    params = {k[len("param."):]: v for k, v in tensors.items() if k.startswith("param.")}
    state = net.engine_state(params)
    ours_names, torch_names = set(state), set(net.state_dict())
    if ours_names != torch_names:
        fail(f"{model}: parameter names differ; only in the engine: {sorted(ours_names - torch_names)}; "
             f"only in PyTorch: {sorted(torch_names - ours_names)}")
    net.load_state_dict(state, strict=True)

    x = tensors["input.x"].clone().requires_grad_(train)
    valid = tensors["input.mask"].bool()
    notes = []
    if model == "resan" and train:
        net.forced_selection = (tensors["selection.z_head"].bool(), tensors["selection.z_dep"].bool())
        notes.append("keep_prob 1, the engine's RSS selection")
    if train:
        net.train()
        tokens, sentence = net(x, valid)
        (tokens.sum() + sentence.sum()).backward()
    else:
        net.eval()
        with torch.no_grad():
            tokens, sentence = net(x, valid)

    out_rows, grad_rows = [], []
    ok = compare("output.tokens", tensors["output.tokens"], tokens.detach(), out_rows)
    ok &= compare("output.sentence", tensors["output.sentence"], sentence.detach(), out_rows)
    if model == "resan" and not train:
        for i, key in enumerate(("selection.z_head", "selection.z_dep")):
            differ = (tensors[key].bool() != net.last_selection[i]).sum().item()
            ok &= differ == 0
            notes.append(f"{key}: {differ} tokens differ")
    if train:
        ok &= compare("grad.input.x", tensors["grad.input.x"], x.grad, grad_rows)
        # engine_state also fills in what the PyTorch module holds fixed (the Transformer's zero
        # attention biases); those are not trained, so they have no gradient to compare.
        trained = {n for n, p in net.named_parameters() if p.requires_grad}
        engine_grads = {n: g for n, g in net.engine_state({k[len("grad.param."):]: v for k, v in tensors.items()
                                                           if k.startswith("grad.param.")}).items() if n in trained}
        torch_grads = {n: p.grad for n, p in net.named_parameters() if p.grad is not None}
        if set(engine_grads) != set(torch_grads):
            ok = False
            notes.append(f"gradients only in the engine: {sorted(set(engine_grads) - set(torch_grads))}, only in "
                         f"PyTorch: {sorted(set(torch_grads) - set(engine_grads))}")
        for n in sorted(set(engine_grads) & set(torch_grads)):
            ok &= compare("grad." + n, engine_grads[n], torch_grads[n], grad_rows)
        notes.append(f"{len(grad_rows) - 1} parameter gradients")
    if not ok:
        for name, diff, bound in out_rows + grad_rows:
            if diff > bound:
                print(f"    {name}: max |diff| {diff:.3e} > bound {bound:.3e}")
    max_out = max(d for _, d, _ in out_rows)
    max_grad = max((d for _, d, _ in grad_rows), default=None)
    worst = max(d / b if b > 0 else float("inf") for _, d, b in out_rows + grad_rows)
    return ok, max_out, max_grad, worst, notes


def numeric_check(args, models, modes):
    print(f"numeric check: float64, batch {args.check_batch} (example 0 full length, the others padded to random "
          f"lengths), length {args.length}, {args.features} features; bound per tensor = 2^16 * 2^-53 * "
          f"max(1, max |engine value|)")
    print(f"{'encoder':12s} {'mode':5s} {'outputs max|diff|':>18s} {'gradients max|diff|':>20s} "
          f"{'worst diff/bound':>17s}  result")
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for mode in modes:
                ok, out_diff, grad_diff, worst, notes = check_one(args, model, mode, tmp)
                grad_text = f"{grad_diff:20.2e}" if grad_diff is not None else f"{'-':>20s}"
                print(f"{model:12s} {mode:5s} {out_diff:18.2e} {grad_text} {worst:17.1e}  {'ok' if ok else 'DIFFERENT'}"
                      f"{'  (' + '; '.join(notes) + ')' if notes else ''}", flush=True)
                if not ok:
                    failed.append(f"{model} {mode}")
    if failed:
        fail("the PyTorch encoders do not compute the engine's function for: " + ", ".join(failed) +
             "; no timing is reported")
    print()


# ---------------------------------------------------------------- the timing

def engine_time(args, model, mode):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.csv")
        run([args.binary, "bench", "--models", model, "--mode", mode, "--lengths", str(args.length), "--batch",
             str(args.batch), "--features", str(args.features), "--reps", str(args.reps), "--warmup",
             str(args.warmup), "--threads", str(args.threads), "--csv", out] + set_flag(bench_config(model)),
            engine_env())
        with open(out) as f:
            row = next(csv.DictReader(f))
    if row["status"] != "ok":
        fail(f"attn bench {model} {mode}: {row['status']} {row['note']}")
    return float(row["median_ms"]), float(row["peak_mib"])


def torch_time(args, model, mode):
    out = run([sys.executable, os.path.join(ROOT, "scripts", "bench_torch.py"), "--models", model, "--mode", mode,
               "--batch", str(args.batch), "--length", str(args.length), "--features", str(args.features),
               "--reps", str(args.reps), "--warmup", str(args.warmup), "--threads", str(args.threads), "--blas", args.torch_blas, "--json"],
              torch_env(args.torch_malloc))
    return json.loads(out.strip().splitlines()[-1])["median_ms"]


def timing(args, models, modes):
    global TORCH_BLAS_CORE
    core, how = engine_blas_core(args.binary)
    if how.startswith("set by attn") and "OPENBLAS_CORETYPE" not in os.environ:
        TORCH_BLAS_CORE = core
    malloc = (f"GLIBC_TUNABLES={TORCH_BEST_TUNABLES} (PyTorch at its best)" if args.torch_malloc == "best"
              else "glibc's default malloc settings")
    print(f"timing: batch {args.batch}, length {args.length}, {args.features} features, all-valid masks, "
          f"{args.threads} threads, {args.rounds} alternating round(s) of {args.reps} reps after {args.warmup} "
          f"warm-up each; torch {torch.__version__}")
    print(f"  ours: {args.binary} without GLIBC_TUNABLES; PyTorch: {malloc}, OpenBLAS buffers {args.torch_blas}")
    torch_core = json.loads(run([sys.executable, os.path.join(ROOT, "scripts", "bench_torch.py"), "--models", "mtsa",
                                 "--mode", "infer", "--batch", "2", "--length", "8", "--reps", "1", "--warmup", "0",
                                 "--json"], torch_env(args.torch_malloc)).strip().splitlines()[-1])["openblas_core"]
    print(f"  OpenBLAS kernels: ours {core} ({how}); PyTorch {torch_core}"
          + (f" (OPENBLAS_CORETYPE={TORCH_BLAS_CORE}, as attn chose)" if TORCH_BLAS_CORE else ""))
    print("  ReSAN on both sides: dropout keep_prob 0.75 and RSS sampling in training mode; the others have no "
          "dropout at their defaults")
    ours = {(m, mode): [] for m in models for mode in modes}
    theirs = {(m, mode): [] for m in models for mode in modes}
    peak = {}
    start = time.time()
    for r in range(args.rounds):
        for model in models:
            for mode in modes:
                order = ("ours", "torch") if r % 2 == 0 else ("torch", "ours")
                for side in order:
                    if side == "ours":
                        ms, mib = engine_time(args, model, mode)
                        ours[(model, mode)].append(ms)
                        peak[(model, mode)] = max(peak.get((model, mode), 0.0), mib)
                    else:
                        theirs[(model, mode)].append(torch_time(args, model, mode))
                print(f"  [round {r + 1}/{args.rounds} {time.time() - start:.0f}s] {model} {mode}: ours "
                      f"{ours[(model, mode)][-1]:.1f} ms, PyTorch {theirs[(model, mode)][-1]:.1f} ms",
                      file=sys.stderr, flush=True)
    print()
    print("| encoder | mode | ours ms | PyTorch ms | ours / PyTorch | median of the rounds' ratios "
          "| rounds' ratios min-max | our peak MiB |")
    print("|---|---|---:|---:|---:|---:|---|---:|")
    for model in models:
        for mode in modes:
            a, b = statistics.median(ours[(model, mode)]), statistics.median(theirs[(model, mode)])
            # Each round's two runs are back to back: their ratio sees one machine state.
            ratios = [x / y for x, y in zip(ours[(model, mode)], theirs[(model, mode)])]
            print(f"| {model} | {mode} | {a:.1f} | {b:.1f} | {a / b:.2f} | {statistics.median(ratios):.2f} "
                  f"| {min(ratios):.2f}-{max(ratios):.2f} | {peak[(model, mode)]:.1f} |")
    print(f"\n(ratio below 1: the engine is faster; per-round medians: "
          + "; ".join(f"{m} {mode} ours {', '.join(f'{v:.0f}' for v in ours[(m, mode)])} / PyTorch "
                      f"{', '.join(f'{v:.0f}' for v in theirs[(m, mode)])}" for m in models for mode in modes)
          + f"; {time.time() - start:.0f} s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "attn"), help="the attn program")
    ap.add_argument("--models", default=",".join(bench_torch.ENCODERS),
                    help="comma list of: " + ", ".join(bench_torch.ENCODERS))
    ap.add_argument("--modes", default="train,infer", help="comma list of train, infer")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of engine and PyTorch runs")
    ap.add_argument("--reps", type=int, default=5, help="timed steps per run")
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps before them")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--features", type=int, default=300)
    ap.add_argument("--check-batch", type=int, default=8, help="batch of the float64 numeric check")
    ap.add_argument("--torch-malloc", default="best", choices=("best", "plain"),
                    help="best: PyTorch with glibc told to keep freed memory (the default); plain: glibc defaults")
    ap.add_argument("--torch-blas", default="warm", choices=("warm", "cold"),
                    help="warm: PyTorch's OpenBLAS buffers warmed before timing, as the engine's are (the default)")
    ap.add_argument("--check-only", action="store_true", help="run the numeric check and stop")
    args = ap.parse_args()
    for flag in ("rounds", "reps", "threads", "batch", "length", "features", "check_batch"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be at least 1, got {getattr(args, flag)}")
    if args.warmup < 0:
        ap.error(f"--warmup must not be negative, got {args.warmup}")
    if not os.access(args.binary, os.X_OK):
        fail(f"{args.binary} not found; build first (cmake --build build) or pass --binary")
    models = args.models.split(",")
    for name in models:
        if name not in bench_torch.ENCODERS:
            ap.error(f"no PyTorch version of '{name}' (known: {', '.join(bench_torch.ENCODERS)})")
    modes = args.modes.split(",")
    for mode in modes:
        if mode not in ("train", "infer"):
            ap.error(f"--modes takes train and/or infer, got '{mode}'")
    torch.set_num_threads(args.threads)
    numeric_check(args, models, modes)
    if not args.check_only:
        timing(args, models, modes)


if __name__ == "__main__":
    main()
