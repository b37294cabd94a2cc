#!/usr/bin/env bash
# The text side of translation end to end, without a model: `attn
# synth-translation` writes a small task, `attn bpe` learns joint codes on
# its training files and encodes the test source, and `attn bleu` scores the
# test references against themselves (100) and against the sources (a
# different language: far below). Also checks that every encoded line
# decodes (joining '@@ ' units) back to its input. About a second.
#
# Usage: scripts/check_translation_text.sh ATTN_BINARY WORK_DIR
set -euo pipefail
if [ $# -ne 2 ]; then
  sed -n 2,9p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
attn=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "check_translation_text: $*" >&2; exit 1; }

data=$work/synth
"$attn" synth-translation --out "$data" --sentences 300 --dev-sentences 20 --test-sentences 30 --seed 5 \
  > "$work/synth.log" 2>&1 || fail "synth-translation failed: $(cat "$work/synth.log")"
for f in train.en train.de dev.en dev.de test.en test.de; do [ -s "$data/$f" ] || fail "no $data/$f"; done
[ "$(wc -l < "$data/test.de")" -eq 30 ] || fail "test.de has $(wc -l < "$data/test.de") lines, expected 30"

"$attn" bpe --learn "$data/train.en,$data/train.de" --merges 50 --codes "$work/codes.bpe" > "$work/bpe.log" 2>&1 ||
  fail "bpe --learn failed: $(cat "$work/bpe.log")"
"$attn" bpe --apply "$data/test.en" --codes "$work/codes.bpe" --out "$work/test.bpe.en" >> "$work/bpe.log" 2>&1 ||
  fail "bpe --apply failed: $(cat "$work/bpe.log")"
sed -E 's/(@@ )|(@@ ?$)//g' "$work/test.bpe.en" | cmp -s - "$data/test.en" ||
  fail "the encoded test source does not decode to test.en"

"$attn" bleu --ref "$data/test.de" --hyp "$data/test.de" > "$work/bleu_same.log" 2>&1 ||
  fail "bleu failed: $(cat "$work/bleu_same.log")"
grep -q '^hyp:  BLEU = 100.00 ' "$work/bleu_same.log" || fail "references against themselves: $(cat "$work/bleu_same.log")"
"$attn" bleu --ref "$data/test.de" --hyp "$data/test.en" > "$work/bleu_other.log" 2>&1 ||
  fail "bleu failed: $(cat "$work/bleu_other.log")"
score=$(sed -n 's/^hyp:  BLEU = \([0-9.]*\) .*/\1/p' "$work/bleu_other.log")
[ -n "$score" ] || fail "no BLEU line: $(cat "$work/bleu_other.log")"
awk -v s="$score" 'BEGIN { exit !(s < 20) }' || fail "source against target scored $score, expected far below 100"
echo "check_translation_text: OK (synthetic task, BPE round trip, BLEU 100.00 and $score)"
