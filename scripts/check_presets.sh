#!/usr/bin/env bash
# Runs every preset of `attn presets` for a few steps on the fixture data in
# its official format (data/fixtures/) and checks each one: `attn train
# --preset NAME --help` accepts it, the run exits with status 0 and leaves a
# complete run folder, run.cfg records the preset, model.cfg the preset's
# encoder and every model value it sets, and no NaN or Inf is in
# the metrics (nor a null, which is how a non-finite metric is written). Only the batch size and the number of steps are overridden
# (explicit flags win over a preset), so every other preset value is the
# one exercised; translation presets (--task translate) also get --hidden 32
# --heads 2, so t2t's 6 + 6 layers train and decode in about a second, and
# their run folder holds bpe.codes instead of labels.txt and names the
# encoder's self-attention (encoder_attention) instead of the encoder.
#   scripts/check_presets.sh ATTN_BINARY WORK_DIR [--shard K/N] [--one-per-model-format]
# --shard K/N runs the presets whose place in the list is K modulo N, so CTest
# can run N parts side by side. --one-per-model-format runs only the first
# preset of each (encoder, format) pair: the sanitizer build takes this, since
# presets that share both differ in settings whose code the unit tests cover.
set -euo pipefail
usage="usage: check_presets.sh ATTN_BINARY WORK_DIR [--shard K/N] [--one-per-model-format]"
attn=${1:?$usage}
work=${2:?$usage}
shift 2
shard=0
shards=1
one_per_pair=0
while [ $# -gt 0 ]; do
  case "$1" in
    --shard)
      [[ "${2:-}" =~ ^([0-9]+)/([1-9][0-9]*)$ ]] || { echo "check_presets: --shard wants K/N with 0 <= K < N, got '${2:-}'" >&2; exit 2; }
      shard=${BASH_REMATCH[1]}
      shards=${BASH_REMATCH[2]}
      [ "$shard" -lt "$shards" ] || { echo "check_presets: --shard $2: K must be below N" >&2; exit 2; }
      shift 2 ;;
    --one-per-model-format) one_per_pair=1; shift ;;
    *) echo "check_presets: unknown argument '$1'; $usage" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fixtures="$root/data/fixtures"
rm -rf "$work"
mkdir -p "$work"

listing=$("$attn" presets)
# Here-strings, not pipes from printf: an awk that exits early would kill the
# writer with SIGPIPE, which pipefail turns into a failure of this script.
names=$(sed -n 's/^\([a-z0-9-]*\): .*/\1/p' <<< "$listing")
[ -n "$names" ] || { echo "check_presets: 'attn presets' listed no preset" >&2; exit 1; }

# The value of flag $2 in preset $1's listing.
preset_value() {
  awk -v p="$1:" -v flag="$2" '$1 == p {on = 1; next} /^[a-z0-9-]*: / {on = 0} on && $1 == flag {print $2; exit}' <<< "$listing"
}

selected=""
declare -A pair_seen=()
index=0
for name in $names; do
  if [ "$one_per_pair" = 1 ]; then
    pair="$(preset_value "$name" --model) $(preset_value "$name" --format)"
    [ -z "${pair_seen[$pair]:-}" ] || continue
    pair_seen[$pair]=1
  fi
  [ $((index % shards)) -eq "$shard" ] && selected="$selected $name"
  index=$((index + 1))
done

failed=0
count=0
for name in $selected; do
  count=$((count + 1))
  format=$(preset_value "$name" --format)
  encoder=$(preset_value "$name" --model)
  if [ -z "$encoder" ]; then
    echo "FAIL $name: the preset names no --model"; failed=$((failed + 1)); continue
  fi
  if ! "$attn" train --preset "$name" --help > "$work/$name.help" 2>&1; then
    echo "FAIL $name: attn train --preset $name --help exited non-zero:"; sed 's/^/    /' "$work/$name.help" | tail -5
    failed=$((failed + 1))
    continue
  fi
  case "$format" in
    sst5|sst2) dir="$fixtures/sst" ;;
    mtl16-*) dir="$fixtures/mtl16" ;;
    *) dir="$fixtures/$format" ;;
  esac
  run="$work/$name"
  size=(--batch 4)
  files="labels.txt"
  encoder_line="encoder = $encoder"
  if [ "$(preset_value "$name" --task)" = translate ]; then
    size=(--batch 64 --hidden 32 --heads 2)  # --batch counts tokens for translate
    files="bpe.codes"
    encoder_line="encoder_attention = $([ "$encoder" = mtsa ] && echo mtsa || echo multi_head)"
  fi
  if ! "$attn" train --preset "$name" --data "$dir" --run "$run" "${size[@]}" --max-steps 2 --eval-every 1 --quiet \
      > "$work/$name.out" 2> "$work/$name.err"; then
    echo "FAIL $name: attn train exited non-zero:"; sed 's/^/    /' "$work/$name.err" | tail -5
    failed=$((failed + 1))
    continue
  fi
  missing=""
  for f in model.cfg run.cfg vocab.txt $files best.safetensors last.safetensors metrics.jsonl test_metrics.json; do
    [ -s "$run/$f" ] || missing="$missing $f"
  done
  if [ -n "$missing" ]; then
    echo "FAIL $name: the run folder lacks$missing"; failed=$((failed + 1)); continue
  fi
  if ! grep -qx "preset = $name" "$run/run.cfg"; then
    echo "FAIL $name: run.cfg does not record the preset"; failed=$((failed + 1)); continue
  fi
  if ! grep -qx "$encoder_line" "$run/model.cfg"; then
    echo "FAIL $name: model.cfg does not hold the preset's encoder ($encoder_line)"; failed=$((failed + 1)); continue
  fi
  # Every model value of the preset reached model.cfg: "model:KEY VALUE" lines
  # and the flags that are model keys (--hidden, --heads, --keep-prob, --head-hidden).
  wrong=$(awk -v p="$name:" '$1 == p {on = 1; next} /^[a-z0-9-]*: / {on = 0}
      on && $1 ~ /^model:/ {sub(/^model:/, "", $1); print $1, $2}
      on && $1 == "--hidden" {print "hidden", $2} on && $1 == "--heads" {print "heads", $2}
      on && $1 == "--keep-prob" {print "keep_prob", $2} on && $1 == "--head-hidden" {print "head_hidden", $2}' <<< "$listing" |
    while read -r key value; do grep -qx "$key = $value" "$run/model.cfg" || echo "$key = $value"; done)
  if [ -n "$wrong" ]; then
    echo "FAIL $name: model.cfg lacks the preset's" $wrong; failed=$((failed + 1)); continue
  fi
  if grep -qiE '(nan|inf|null)' "$run/metrics.jsonl" "$run/test_metrics.json"; then
    echo "FAIL $name: a metric is not finite:"; cat "$run/test_metrics.json"; failed=$((failed + 1)); continue
  fi
  echo "ok   $name ($encoder, $format): $(cat "$run/test_metrics.json")"
done
echo "check_presets: $((count - failed)) of $count presets ran on their fixture data (shard $shard/$shards$([ "$one_per_pair" = 1 ] && echo ", one per encoder and format"))"
[ "$failed" -eq 0 ]
