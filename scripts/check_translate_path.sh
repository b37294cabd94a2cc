#!/usr/bin/env bash
# The translation path as a user runs it (CTest cli.translate_path):
# `attn synth-translation` writes SVO -> SOV parallel text, `attn train --task
# translate` trains a tiny Transformer on it (1 + 1 layers, width 32, 200
# steps: about a second in Release), and then
#  - test_metrics.json's BLEU reaches 40 (the run gets 68 with these seeds;
#    an untrained model gets ~0, and no word-order-keeping copy reaches 4-gram matches),
#  - `attn translate --run R --input test.en` prints exactly the run's own
#    test decoding (test_translations.txt),
#  - `attn eval --run R` reports the same test BLEU,
#  - stdin works and an empty line comes out empty, in its place.
#   scripts/check_translate_path.sh ATTN_BINARY WORK_DIR
set -euo pipefail
attn=${1:?usage: check_translate_path.sh ATTN_BINARY WORK_DIR}
work=${2:?usage: check_translate_path.sh ATTN_BINARY WORK_DIR}
attn=$(cd "$(dirname "$attn")" && pwd)/$(basename "$attn")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "check_translate_path: FAIL: $*" >&2; exit 1; }

"$attn" synth-translation --out data --sentences 300 --dev-sentences 30 --test-sentences 30 --seed 1 > /dev/null
printf '%s\n' "hidden = 32" "heads = 2" "encoder_layers = 1" "decoder_layers = 1" "filter = 64" \
  "prepostprocess_keep = 1" "attention_keep = 1" "relu_keep = 1" > tiny.cfg
"$attn" train --task translate --data data --config tiny.cfg --bpe-merges 100 --batch 400 --max-steps 200 \
  --warmup 40 --lr 0.1 --log-every 0 --run run > train.out 2> train.err || fail "attn train: $(tail -3 train.err)"
for f in run.cfg model.cfg bpe.codes vocab.txt last.safetensors best.safetensors metrics.jsonl test_metrics.json \
    test_translations.txt; do
  [ -s "run/$f" ] || fail "the run folder lacks $f"
done
bleu=$(sed -n 's/^{"test": {"bleu": \([0-9.e+-]*\),.*/\1/p' run/test_metrics.json)
[ -n "$bleu" ] || fail "no test BLEU in run/test_metrics.json: $(cat run/test_metrics.json)"
awk -v b="$bleu" 'BEGIN {exit !(b >= 40)}' || fail "test BLEU $bleu is below the floor 40"

"$attn" translate --run run --input data/test.en > translated.txt
cmp -s translated.txt run/test_translations.txt ||
  fail "attn translate differs from the run's test decoding: $(diff translated.txt run/test_translations.txt | head -4)"

eval_bleu=$("$attn" eval --run run | sed -n 's/^{"test": {"bleu": \([0-9.e+-]*\),.*/\1/p')
[ "$eval_bleu" = "$bleu" ] || fail "attn eval --run gives BLEU '$eval_bleu', the run's test_metrics.json $bleu"

{ sed -n 1p data/test.en; echo; sed -n 2p data/test.en; } | "$attn" translate --run run > stdin.txt
expected=$(sed -n 1p run/test_translations.txt; echo; sed -n 2p run/test_translations.txt)
[ "$(cat stdin.txt)" = "$expected" ] || fail "stdin with an empty line gave: $(cat stdin.txt)"
[ "$(wc -l < stdin.txt)" -eq 3 ] || fail "stdin: 3 lines in, $(wc -l < stdin.txt) out"
echo "check_translate_path: OK (test BLEU $bleu; attn translate and attn eval agree with the run)"
