#!/usr/bin/env bash
# For the first machine with an NVIDIA GPU: builds the real CUDA backend with
# nvcc (-DATTN_CUDA=ON, in build-gpu/), runs every CUDA test, trains MTSA for
# one epoch on a generated task with --device cuda and evaluates it, checks
# NCCL's gradient sums (scripts/check_nccl.sh: 1 process, and 2 with 2 GPUs),
# then prints one summary to paste into docs/gpu.md ("Results on a GPU").
# The emulated build (scripts/test.sh) already ran the same tests on the CPU;
# this is what it cannot show: real hardware, its memory model and its speed.
# Usage: scripts/gpu_check.sh [--prebuilt BIN_DIR]
#   --prebuilt BIN_DIR  use attn and attn_tests from BIN_DIR (built elsewhere
#                       with nvcc for this GPU's architecture) instead of
#                       building: for a GPU machine without OpenBLAS or
#                       GoogleTest installed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ATTN_ROOT"

bin=build-gpu/bin
prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt)
      [ $# -ge 2 ] || { echo "gpu_check: --prebuilt needs a folder" >&2; exit 2; }
      prebuilt=$2
      shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$prebuilt" ]; then
  for program in attn attn_tests; do
    [ -x "$prebuilt/$program" ] || { echo "gpu_check: --prebuilt $prebuilt holds no executable $program" >&2; exit 2; }
  done
  bin=$prebuilt
fi

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check: no NVIDIA GPU visible (nvidia-smi fails); use scripts/test.sh for the emulated CUDA tests" >&2
  exit 1
fi
gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | sed -n 1p)
echo "== GPU: $gpu"

if [ -z "$prebuilt" ]; then
  echo "== nvcc build (build-gpu/)"
  attn_build build-gpu -DCMAKE_BUILD_TYPE=Release -DATTN_CUDA=ON
else
  echo "== prebuilt binaries: $bin"
fi

echo "== CUDA tests"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tests_log=$work/gpu_check_tests.log
status=0
"$bin/attn_tests" --gtest_filter='Cuda*:*/Cuda*' 2>&1 | tee "$tests_log" || status=1
count() { grep -Eo "^\[  $1 *\] [0-9]+ test" "$tests_log" | grep -Eo '[0-9]+' | head -1 || true; }
passed=$(count PASSED)
skipped=$(count SKIPPED)
failed=$(count FAILED)

echo "== training: MTSA, one epoch of a generated task, --device cuda"
mkdir -p "$work/data"
python3 - "$work/data" <<'EOF'
import random, sys
# label<TAB>text: 1 when the sentence holds "alpha", 0 when it holds "beta".
rng = random.Random(11)
fillers = ["the", "a", "cat", "dog", "ran", "sat", "on", "mat", "red", "blue", "big", "small", "and", "then"]
for name, rows in (("train", 2000), ("dev", 200), ("test", 400)):
    with open(f"{sys.argv[1]}/{name}.tsv", "w") as f:
        for _ in range(rows):
            label = rng.randrange(2)
            words = [rng.choice(fillers) for _ in range(rng.randrange(10, 40))]
            words.insert(rng.randrange(len(words) + 1), "alpha" if label else "beta")
            f.write(f"{label}\t{' '.join(words)}\n")
EOF
start=$(date +%s.%N)
"$bin/attn" train --device cuda --data "$work/data" --format tsv --model mtsa --epochs 1 --min-count 1 \
  --run "$work/run" --quiet | tee "$work/train.log" || status=1
seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
"$bin/attn" eval --device cuda --run "$work/run" | tee "$work/eval.log" || status=1

echo "== data-parallel gradient sums with NCCL (scripts/check_nccl.sh)"
"$ATTN_ROOT/scripts/check_nccl.sh" "$bin" "$work/nccl" | tee "$work/nccl.log" || status=1
nccl=$(tail -1 "$work/nccl.log")

echo "== summary"
revision=$(git rev-parse --short HEAD 2>/dev/null || echo "(no git)")
echo "gpu_check $revision on $gpu: CUDA tests ${passed:-0} passed, ${skipped:-0} skipped," \
  "${failed:-0} failed; train --device cuda (mtsa, 1 epoch, 2000 examples) ${seconds} s;" \
  "eval: $(tr '\n' ' ' < "$work/eval.log"); $nccl"
exit $status
