#!/usr/bin/env bash
# Processes of one data-parallel run that were started differently stop,
# every one of them, with an error naming what differs (never a hang):
# another seed (the settings), other training data, and a vocabulary that
# differs because one process was given --max-vocab. Open MPI's "MPMD" form
# (`mpirun -np 1 A : -np 1 B`) starts two programs as one run.
#
#   scripts/check_data_parallel_errors.sh ATTN WORK
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,8p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
attn=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_launcher.sh"
fail() { echo "check_data_parallel_errors: FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/a" "$work/b"
for d in a b; do
  awk -v d=$d 'BEGIN {
    srand(d == "a" ? 3 : 4); split("the a cat dog sat ran on mat", w, " ");
    for (i = 0; i < 120; i++) {
      line = ""; for (j = 0; j < 5; j++) line = line (j ? " " : "") w[1 + int(rand() * 8)];
      print int(rand() * 2) "\t" line > ("'"$work"'/" d "/" (i < 100 ? "train" : "test") ".tsv");
    }
  }'
done
base=(train --model bow --epochs 1 --batch 8 --quiet --sync-timeout 60)

# expect NAME FRAGMENT -- MPMD arguments...
expect() {
  local name=$1 fragment=$2
  shift 3
  local start=$SECONDS status=0
  "${MPIRUN[@]}" "$@" > "$work/$name.log" 2>&1 || status=$?
  [ "$status" -ne 0 ] || fail "$name: the run exited 0"
  grep -qF "$fragment" "$work/$name.log" || fail "$name: no '$fragment' in: $(head -5 "$work/$name.log")"
  echo "$name: stopped (exit $status, $((SECONDS - start)) s): $(grep -m1 -F "$fragment" "$work/$name.log" | cut -c1-160)"
}
expect seeds "do not agree on: the settings (run.cfg, model.cfg) (process 1 differs from process 0)" -- \
  -np 1 "$attn" "${base[@]}" --data "$work/a" --run "$work/r1" --seed 1 : \
  -np 1 "$attn" "${base[@]}" --data "$work/a" --run "$work/r1" --seed 2
expect data "the training data (process 1 differs from process 0)" -- \
  -np 1 "$attn" "${base[@]}" --data "$work/a" --run "$work/r2" : \
  -np 1 "$attn" "${base[@]}" --data "$work/b" --run "$work/r2"
echo "check_data_parallel_errors: OK"
