#!/usr/bin/env bash
# The same training on 1, 2 and 3 processes gives the same weights to
# rounding (issue: data-parallel training; docs/distributed.md).
#
#   scripts/check_data_parallel.sh ATTN WORK MODEL [MODEL...]
#
# For each model: 50 steps in float64 with dropout on (--keep-prob 0.8; ReSAN
# samples its token selection and runs REINFORCE with the reward baseline
# after 10 warm-up steps), batch 29 over 500 training examples, so the last
# batch of the epoch is short (7) and 3 processes get shares of 10, 10 and 9
# (3, 2 and 2 in the short batch). The 2- and 3-process runs' model weights
# must equal the 1-process run's within
#
#   50 steps x lr 1e-3 x (n u G) / eps = 50 x 1e-3 x (1e3 x 1.1e-16 x 5) / 1e-8 = 2.75e-6
#
# times max|w|: the processes add the same terms in another grouping, so a
# step's gradients differ by at most n u G (n <= 1e3 terms in any sum here, u
# the float64 unit roundoff, G = 5 the clipped gradient norm), and Adam's
# update lr m / (sqrt(v) + eps) changes by at most lr / eps times that.
# The 1-process run's test metrics must also be reproduced exactly by the
# 2-process evaluation of the same weights (--resume of the finished run).
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,22p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
attn=$1
work=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_launcher.sh"
bound=2.75e-6
fail() { echo "check_data_parallel: FAIL: $*" >&2; exit 1; }

. "$here/marker_data.sh"
write_marker_data "$work/data" 7 600 2 14 500 50

for model in "$@"; do
  args=(train --data "$work/data" --model "$model" --hidden 16 --embedding-dim 16 --head-hidden 16 --keep-prob 0.8
        --epochs 3 --dtype float64 --quiet --log-every 0)
  case $model in
    transformer | mtsa) args+=(--heads 2) ;;
    resan) args+=(--rl-warmup 10 --rl-baseline) ;;
  esac
  tiny=("${args[@]}" --batch 2 --max-steps 20)
  args+=(--batch 29)
  rm -rf "$work/$model"-*
  "$attn" "${args[@]}" --max-steps 50 --run "$work/$model-1" > "$work/$model-1.out" || fail "$model on 1 process"
  for n in 2 3; do
    "${MPIRUN[@]}" -np $n "$attn" "${args[@]}" --max-steps 50 --run "$work/$model-$n" > "$work/$model-$n.out" ||
      fail "$model on $n processes"
    result=$(python3 "$here/compare_weights.py" --prefix model. --max-relative $bound \
               "$work/$model-1/last.safetensors" "$work/$model-$n/last.safetensors") || fail "$model, $n processes: $result"
    echo "$model, $n processes against 1: $result"
  done
  # The 1-process run's weights evaluated on 2 processes: the same test metrics, exactly.
  cp -r "$work/$model-1" "$work/$model-eval2"
  "${MPIRUN[@]}" -np 2 "$attn" train --run "$work/$model-eval2" --resume --epochs 3 --max-steps 50 --quiet > /dev/null || fail "$model: 2-process resume of a finished run"
  one=$(sed 's/"run": "[^"]*"//; s/"train_seconds": [0-9.]*//; s/"examples_per_second": [0-9.]*//' "$work/$model-1/test_metrics.json")
  two=$(sed 's/"run": "[^"]*"//; s/"train_seconds": [0-9.]*//; s/"examples_per_second": [0-9.]*//' "$work/$model-eval2/test_metrics.json")
  [ "$one" = "$two" ] || fail "$model: test metrics on 2 processes differ: $two against $one"
  echo "$model: the 2-process evaluation reproduces the test metrics exactly: $(cut -c1-90 "$work/$model-1/test_metrics.json")"
  # --resume with another number of processes: 25 steps on 2, the rest on 3.
  "${MPIRUN[@]}" -np 2 "$attn" "${args[@]}" --max-steps 25 --run "$work/$model-2then3" > /dev/null ||
    fail "$model: 25 steps on 2 processes"
  "${MPIRUN[@]}" -np 3 "$attn" train --run "$work/$model-2then3" --resume --epochs 3 --max-steps 50 --quiet > /dev/null ||
    fail "$model: --resume on 3 processes"
  result=$(python3 "$here/compare_weights.py" --prefix model. --max-relative $bound \
             "$work/$model-1/last.safetensors" "$work/$model-2then3/last.safetensors") || fail "$model, 2 then 3 processes: $result"
  echo "$model, 25 steps on 2 processes then --resume on 3, against 1: $result"
  # Batches of 2 on 3 processes: one share is always empty.
  "$attn" "${tiny[@]}" --run "$work/$model-tiny1" > /dev/null || fail "$model: batch 2 on 1 process"
  "${MPIRUN[@]}" -np 3 "$attn" "${tiny[@]}" --run "$work/$model-tiny3" > /dev/null || fail "$model: batch 2 on 3 processes"
  result=$(python3 "$here/compare_weights.py" --prefix model. --max-relative $bound \
             "$work/$model-tiny1/last.safetensors" "$work/$model-tiny3/last.safetensors") || fail "$model, batch 2 on 3 processes: $result"
  echo "$model, batch 2 on 3 processes (one share empty at every step) against 1: $result"
done
echo "check_data_parallel: OK"
