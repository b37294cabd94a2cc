#!/usr/bin/env bash
# Trains each of the papers' models (and the bag-of-words floor) for a short
# run on the default data and writes a table of test accuracy and training
# speed to docs/model_comparison.md. Usage: scripts/compare_models.sh [attn binary]
# Sizes are small so the whole comparison fits in ~20 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
attn=${1:-$root/build/bin/attn}
out=$root/docs/model_comparison.md
runs=${ATTN_RUNS:-$root/runs/compare}
common=(--task classify --epochs 1 --batch 32 --max-len 128 --embedding-dim 64 --quiet)
rows=()
# How idle the CPUs were just before the runs (the load average would still
# count whatever finished a minute ago).
cpu_idle_percent() {
  local a b
  read -r -a a < <(grep '^cpu ' /proc/stat)
  sleep 1
  read -r -a b < <(grep '^cpu ' /proc/stat)
  local total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
  echo $(((b[4] + b[5] - a[4] - a[5]) * 100 / (total > 0 ? total : 1)))
}
idle_before=$(cpu_idle_percent)
for model in bow mtsa transformer mstrans biblosan disan resan; do
  extra=()
  case $model in
    bow) extra=() ;;
    mtsa|transformer|mstrans) extra=(--hidden 64 --heads 2) ;;
    *) extra=(--hidden 64) ;;
  esac
  echo "== $model" >&2
  line=$("$attn" train --model "$model" "${common[@]}" "${extra[@]}" --run "$runs/$model" | tail -n 1)
  echo "$line" >&2
  acc=$(echo "$line" | sed -E 's/.*"accuracy": ([0-9.]+).*/\1/')
  f1=$(echo "$line" | sed -E 's/.*"macro_f1": ([0-9.]+).*/\1/')
  eps=$(echo "$line" | sed -E 's/.*"examples_per_second": ([0-9.]+).*/\1/')
  secs=$(echo "$line" | sed -E 's/.*"train_seconds": ([0-9.]+).*/\1/')
  rows+=("| $model | $acc | $f1 | $eps | $secs |")
done
{
  echo "# Model comparison on the default data (SpamAssassin)"
  echo
  echo "Produced by \`scripts/compare_models.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores."
  echo "Each model: one epoch, batch 32, sequences cut to 128 tokens, embeddings and encoder width 64,"
  echo "Adam (lr 1e-3), seed 1. The majority class (ham) is 69.5% of the test split."
  echo
  echo "| model | test accuracy | test macro-F1 | train examples/s | train seconds |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Speed columns: the CPUs were ${idle_before}% idle in the second before the first run;"
  echo "they are comparable only between runs on an otherwise idle machine."
} > "$out.tmp"
mv "$out.tmp" "$out"   # atomic: an interrupted run leaves the previous table intact
cat "$out"
