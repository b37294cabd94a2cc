#!/usr/bin/env bash
# `attn mirrored-sum` end to end at a tiny size (N = 12, d = 4, a few hundred
# samples, two small models, one K, a few steps: about a second): the CSV has
# one row per model with a finite positive test MSE, the SVG is there, a
# second run into the same folder is refused without --overwrite, and bad
# input (unknown model, K >= N, K < 1, empty --ks, zero samples) stops the
# command with a non-zero exit and a message naming the problem.
#
# Usage: scripts/check_mirrored_sum.sh ATTN_BINARY WORK_DIR
set -euo pipefail
if [ $# -ne 2 ]; then
  sed -n 2,9p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
attn=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "check_mirrored_sum: $*" >&2; exit 1; }

tiny=(--length 12 --dim 4 --ks 5 --train-samples 200 --test-samples 64 --steps 4 --batch 16 --hidden 10)
"$attn" mirrored-sum "${tiny[@]}" --models ms-trans-flex,bigru --out "$work/run" > "$work/run.log" 2>&1 ||
  fail "the tiny run failed: $(cat "$work/run.log")"
csv=$work/run/mirrored_sum.csv
[ -f "$csv" ] || fail "no $csv"
[ -s "$work/run/mirrored_sum.svg" ] || fail "no $work/run/mirrored_sum.svg"
grep -q '</svg>' "$work/run/mirrored_sum.svg" || fail "mirrored_sum.svg is not a whole SVG document"
head -1 "$csv" | grep -q '^model,K,test_mse,' || fail "unexpected CSV header: $(head -1 "$csv")"
rows=$(tail -n +2 "$csv" | wc -l)
[ "$rows" -eq 2 ] || fail "expected 2 rows (2 models x 1 K), got $rows"
for model in ms-trans-flex bigru; do
  line=$(grep "^$model,5," "$csv") || fail "no row for $model at K = 5"
  mse=$(echo "$line" | cut -d, -f3)
  awk -v v="$mse" 'BEGIN { exit !(v + 0 == v && v > 0 && v < 1e30) }' || fail "$model: test MSE '$mse' is not a finite positive number"
done

# An earlier run's results are never overwritten unless asked.
if "$attn" mirrored-sum "${tiny[@]}" --models bigru --out "$work/run" > "$work/again.log" 2>&1; then
  fail "a second run into the same --out succeeded without --overwrite"
fi
grep -q 'holds an earlier run' "$work/again.log" || fail "the refusal does not say why: $(cat "$work/again.log")"
[ "$(tail -n +2 "$csv" | wc -l)" -eq 2 ] || fail "the refused run changed $csv"

# expect_error MESSAGE ARGS...: the command fails and prints MESSAGE.
expect_error() {
  local message=$1
  shift
  if "$attn" mirrored-sum "${tiny[@]}" "$@" --out "$work/bad" > "$work/bad.log" 2>&1; then
    fail "'$*' succeeded"
  fi
  grep -qF -- "$message" "$work/bad.log" || fail "'$*': expected '$message', got: $(cat "$work/bad.log")"
}
expect_error "unknown model 'ms-trans-wide'" --models ms-trans-wide
expect_error "K must be in 1..N-1 = 1..11" --ks 12
expect_error "--ks expects positive integers, got '0'" --ks 0
expect_error "option '--ks' needs a non-empty value" --ks ""
expect_error "option '--train-samples' must be at least 1, got 0" --train-samples 0
expect_error "option '--test-samples' must be at least 1, got 0" --test-samples 0
[ ! -e "$work/bad/mirrored_sum.csv" ] || fail "a refused command wrote $work/bad/mirrored_sum.csv"
echo "check_mirrored_sum: OK"
