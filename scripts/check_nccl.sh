#!/usr/bin/env bash
# NCCL's gradient sums (train/distributed/nccl_gradient_sync.h): on real
# GPUs for scripts/gpu_check.sh (an NVIDIA GPU and an attn built with NCCL),
# and in the emulated CUDA build with its NCCL stand-in over MPI (CTest
# nccl.emulated_sums, which sets ATTN_CUDA_EMULATE=1 and
# ATTN_CUDA_EMULATE_DEVICES=2: two emulated devices, one per process).
#
#   scripts/check_nccl.sh BIN_DIR WORK
#
# 1. One process, --sync nccl (NCCL with one rank, the packing and unpacking
#    on the GPU) against one process without a sum (--sync mpi): the model
#    weights after 50 float64 steps must agree within 2.75e-6 x max|w|, the
#    bound of scripts/check_data_parallel.sh (one rank's sum adds nothing,
#    so they are expected to be equal; the line says whether they are).
# 2. With 2 or more GPUs and mpirun: 2 processes, one per GPU, --sync nccl,
#    against the one-process run, within the same bound (the two shares add
#    their examples in another grouping). With fewer GPUs it says it skipped
#    this: NCCL refuses two processes on one GPU.
# The last line is "check_nccl: OK ..." or "check_nccl: FAIL: ..." (exit 1);
# without NCCL in the build, "check_nccl: SKIPPED: ..." (exit 0).
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,18p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
bin=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
bound=2.75e-6
fail() { echo "check_nccl: FAIL: $*"; exit 1; }

rm -rf "$work/plain" "$work/nccl1" "$work/nccl2"  # this script's runs, from a run before
. "$here/marker_data.sh"
write_marker_data "$work/data" 7 600 2 14 500 50
args=(train --device cuda --data "$work/data" --model mtsa --heads 2 --hidden 16 --embedding-dim 16 --head-hidden 16
      --keep-prob 0.8 --batch 29 --epochs 3 --max-steps 50 --dtype float64 --log-every 0)

"$bin/attn" "${args[@]}" --sync mpi --run "$work/plain" > "$work/plain.out" 2> "$work/plain.log" ||
  fail "one process without a sum: $(tail -3 "$work/plain.log")"
if ! "$bin/attn" "${args[@]}" --sync nccl --run "$work/nccl1" > "$work/nccl1.out" 2> "$work/nccl1.log"; then
  if grep -q "built without NCCL" "$work/nccl1.log"; then
    echo "check_nccl: SKIPPED: this attn was built without NCCL ($(grep -o 'built without NCCL[^;]*' "$work/nccl1.log" | head -1))"
    exit 0
  fi
  fail "one process with NCCL: $(tail -3 "$work/nccl1.log")"
fi
grep -q "gradient sums: NCCL" "$work/nccl1.log" || fail "the one-process NCCL run's log names no NCCL sum"
one=$(python3 "$here/compare_weights.py" --prefix model. --max-relative $bound \
        "$work/plain/last.safetensors" "$work/nccl1/last.safetensors") || fail "1 process, NCCL against none: $one"
if cmp -s "$work/plain/last.safetensors" "$work/nccl1/last.safetensors"; then same="bitwise equal"; else same="not bitwise equal"; fi
echo "1 process, NCCL against no sum: $one ($same)"

if [ "${ATTN_CUDA_EMULATE:-}" = 1 ]; then
  gpus=${ATTN_CUDA_EMULATE_DEVICES:-1}
  # Open MPI's own allocations in a process it launched are still held at
  # exit, which LeakSanitizer would report; the other sanitizer checks stay.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
else
  gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
fi
if [ "$gpus" -lt 2 ]; then
  echo "check_nccl: OK (1 process; 2 processes SKIPPED: $gpus GPU, and NCCL refuses two processes on one GPU)"
  exit 0
fi
. "$here/mpi_launcher.sh"
"${MPIRUN[@]}" -np 2 "$bin/attn" "${args[@]}" --sync nccl --run "$work/nccl2" > "$work/nccl2.out" 2> "$work/nccl2.log" ||
  fail "2 processes with NCCL: $(tail -5 "$work/nccl2.log")"
grep -q "gradient sums: NCCL" "$work/nccl2.log" || fail "the 2-process run's log names no NCCL sum"
two=$(python3 "$here/compare_weights.py" --prefix model. --max-relative $bound \
        "$work/plain/last.safetensors" "$work/nccl2/last.safetensors") || fail "2 processes with NCCL against 1: $two"
echo "2 processes (GPUs 0 and 1), $(grep -o 'gradient sums: NCCL[^,]*' "$work/nccl2.log" | head -1), against 1 process: $two"
echo "check_nccl: OK (1 process and 2 processes on $gpus GPUs)"
