#!/usr/bin/env bash
# Makes one picture of every kind from tiny runs trained here in seconds:
# `attn explain` for each attention model (mtsa, disan, biblosan, mstrans,
# resan; one sentence each, plus a long sentence that is truncated) and
# `attn plot` of two runs, one with a step log (mtsa, --log-every 2: the
# step panels) and one without (disan, --log-every 0). Prints the SVG paths, one per line, on stdout.
# Usage: scripts/make_pictures.sh ATTN_BINARY WORK_FOLDER
# Used by scripts/check_picture_xml.py (CTest pictures.well_formed) and
# scripts/check_pictures.sh (rendered with headless Chromium).
set -euo pipefail
attn=$1
work=$2
data=$work/data
rm -rf "$work"
mkdir -p "$data"

# label<TAB>text: the label is 1 when "alpha" occurs, 0 when "beta" does.
awk -v rows=300 'BEGIN {
  srand(7); split("the a cat dog sat ran on mat big small old new red tree house car & <b> \"q\"", w, " ");
  for (i = 0; i < rows; i++) {
    label = int(rand() * 2); line = "";
    n = 8 + int(rand() * 10); at = int(rand() * n);
    for (j = 0; j < n; j++) line = line (j ? " " : "") (j == at ? (label ? "alpha" : "beta") : w[1 + int(rand() * 19)]);
    print label "\t" line > (i < 200 ? "'"$data"'/train.tsv" : i < 250 ? "'"$data"'/dev.tsv" : "'"$data"'/test.tsv");
  }
}'

long=$(for i in $(seq 1 80); do printf 'word%d ' "$i"; done)
for model in mtsa disan biblosan mstrans resan; do
  heads=()
  case $model in mtsa | mstrans) heads=(--heads 2) ;; esac
  log_every=0
  [[ $model != mtsa ]] || log_every=2
  "$attn" train --data "$data" --format tsv --model "$model" --hidden 8 --embedding-dim 8 --head-hidden 8 \
    "${heads[@]}" --epochs 1 --batch 25 --eval-every 4 --log-every "$log_every" --min-count 1 --quiet \
    --run "$work/runs/$model" >&2
  printf '%s\n' 'the cat saw alpha & a <big> "red" dog near the house' "$long" |
    "$attn" explain --run "$work/runs/$model" --out "$work/explain/$model" >&2
  echo "$work/explain/$model/sentence_1.svg"
  echo "$work/explain/$model/sentence_2.svg"
done
echo "$work/runs/mtsa/curves.svg"
"$attn" plot "$work/runs/mtsa" "$work/runs/disan" --out "$work/plot.svg" >&2
echo "$work/plot.svg"
