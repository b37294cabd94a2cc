#!/usr/bin/env bash
# Scaling of data-parallel training on this machine: examples per second of
# one epoch on the default data (the README's main job's settings) for
#   1 process x 1 thread, 1 process x 2 threads, 2 processes x 1 thread,
# alternated ROUNDS times so the three see the same machine, with the median
# of each and the ratios to 1 x 1. Also the bytes each process sent per step
# and the gradient sum's time (the 2-process runs' logs).
#
#   scripts/bench_data_parallel.sh ATTN WORK [ROUNDS] [MODEL...]
#
# ROUNDS defaults to 3, the models to mtsa and transformer.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,11p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
attn=$1
work=$2
rounds=${3:-3}
shift $(($# >= 3 ? 3 : 2))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mtsa transformer)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_launcher.sh"
mkdir -p "$work"

rate() { sed -n 's/.*"examples_per_second": \([0-9.]*\).*/\1/p' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

for model in "${models[@]}"; do
  args=(train --model "$model" --hidden 128 --embedding-dim 128 --heads 2 --epochs 1 --batch 32 --max-len 200
        --overwrite --log-every 0)
  for round in $(seq 1 "$rounds"); do
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$attn" "${args[@]}" --run "$work/$model-1x1" > "$work/$model-1x1-$round.json" 2> /dev/null
    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 "$attn" "${args[@]}" --run "$work/$model-1x2" > "$work/$model-1x2-$round.json" 2> /dev/null
    "${MPIRUN[@]}" -np 2 "$attn" "${args[@]}" --run "$work/$model-2x1" > "$work/$model-2x1-$round.json" 2> "$work/$model-2x1-$round.log"
    echo "$model round $round: 1x1 $(rate "$work/$model-1x1-$round.json")  1x2 $(rate "$work/$model-1x2-$round.json")  2x1 $(rate "$work/$model-2x1-$round.json") examples/s" >&2
  done
  one=$(for r in $(seq 1 "$rounds"); do rate "$work/$model-1x1-$r.json"; done | median)
  two_threads=$(for r in $(seq 1 "$rounds"); do rate "$work/$model-1x2-$r.json"; done | median)
  two_processes=$(for r in $(seq 1 "$rounds"); do rate "$work/$model-2x1-$r.json"; done | median)
  awk -v m="$model" -v a="$one" -v b="$two_threads" -v c="$two_processes" 'BEGIN {
    printf "%-12s 1x1 %7.1f ex/s   1x2 %7.1f ex/s (%.2fx)   2x1 %7.1f ex/s (%.2fx)\n", m, a, b, b / a, c, c / a }'
  grep -h "gradient sums" "$work/$model-2x1-$rounds.log" | sed "s/^/$model (2x1, last round): /"
  for r in $(seq 1 "$rounds"); do sed -n 's/.*"test": {\([^}]*\)}.*/\1/p' "$work/$model-1x1-$r.json" "$work/$model-2x1-$r.json"; done |
    sort | uniq -c | sed "s/^/$model test metrics (count of runs): /"
done
