#!/usr/bin/env bash
# Runs the README's first-session block (between the first-session markers)
# as written, in a scratch folder, at a tiny size: every `attn train` line
# gets flags for a few steps of a small model, and the default data is a
# generated 200-message stand-in for the SpamAssassin corpus in the cache
# format, so no network is needed. Fails on the first line that exits
# non-zero, naming it.
#
# Usage: scripts/check_readme_session.sh ATTN_BINARY WORK_DIR
set -euo pipefail
if [ $# -ne 2 ]; then
  sed -n 2,9p "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$2
rm -rf "$work"
mkdir -p "$work/cache/spam_assassin"

# The stand-in corpus: ham about meetings, spam about money, in the format of
# train/data/spam/spam_assassin.cpp's cache file.
corpus=$work/cache/spam_assassin/corpus.tsv
echo "# attn spam_assassin corpus v1: label<TAB>checksum<TAB>source<TAB>text" > "$corpus"
for i in $(seq 1 200); do
  if [ $((i % 5)) -lt 3 ]; then
    printf 'ham\t%032x\tham/%05d\tthe meeting moved to room %d, see the notes from monday\n' "$i" "$i" "$i"
  else
    printf 'spam\t%032x\tspam/%05d\tfree money now, click here to claim prize %d today\n' "$i" "$i" "$i"
  fi
done >> "$corpus"

tiny=(--epochs 1 --max-steps 3 --batch 8 --embedding-dim 8 --hidden 8 --heads 2 --max-len 16 --quiet)
block=$(sed -n '/<!-- first-session:start -->/,/<!-- first-session:end -->/p' "$root/README.md" | sed '1d;$d')
[ -n "$block" ] || { echo "check_readme_session: no first-session block in README.md" >&2; exit 1; }
cd "$work"
export ATTN_CACHE=$work/cache
lines=0
while IFS= read -r line; do
  command=$(echo "$line" | sed -e 's/^    //' -e 's/  *# .*$//')
  [ -n "$command" ] || continue
  command=${command//build\/bin\/attn/\"\$attn\"}
  case "$command" in *'"$attn" train '*) command="$command ${tiny[*]}" ;; esac
  echo "== $command"
  if ! attn=$attn bash -c "$command" > out.log 2>&1; then
    cat out.log
    echo "check_readme_session: this README line failed: $line" >&2
    exit 1
  fi
  lines=$((lines + 1))
done <<< "$block"
echo "check_readme_session: all $lines lines of the README's first session ran"
