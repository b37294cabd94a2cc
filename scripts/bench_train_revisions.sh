#!/usr/bin/env bash
# Times `attn train` end to end against another git revision's binary,
# alternating the two ROUNDS times on the same arguments (each run in a fresh
# temporary run folder), and prints each run's training seconds and
# examples/s (the JSON line of `attn train`; they include the dev evaluation
# and checkpoints), the process's CPU seconds (user + system) and minor page
# faults (GNU time), and the medians. CPU seconds and faults barely move
# when other processes share the machine; wall times do.
#
#   scripts/bench_train_revisions.sh REV [ROUNDS] [-- train arguments]
#   scripts/bench_train_revisions.sh 9a4a5fd 3 -- --model bow --max-steps 100 --embedding-dim 300
#
# REV's binary is the one scripts/bench_revisions.sh builds (build-rev-<REV>/);
# run that first. This checkout's binary is build/bin/attn, or $ATTN_BINARY.
set -euo pipefail
name=bench_train_revisions
usage_lines=2,14
. "$(dirname "$0")/revision_args.sh"
there=$root/build-rev-$short/build/bin/attn
[ -x "$there" ] || { echo "bench_train_revisions: $there is missing; run scripts/bench_revisions.sh $rev first" >&2; exit 2; }

runs=$(mktemp -d)
rows=$(mktemp)
trap 'rm -rf "$runs" "$rows"' EXIT
echo "== $rounds rounds of: attn train $* --quiet" >&2
for round in $(seq 1 "$rounds"); do
  for side in "$short:$there" "HEAD:$here"; do
    label=${side%%:*}
    binary=${side#*:}
    json=$(/usr/bin/time -f "%U %S %R" -o "$runs/time" "$binary" train "$@" --quiet --run "$runs/$label-$round" 2> /dev/null |
      grep '"examples_per_second"' | tail -n 1)
    read -r user sys faults < "$runs/time"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
    seconds=$(sed -n 's/.*"train_seconds": \([0-9.]*\).*/\1/p' <<< "$json")
    rate=$(sed -n 's/.*"examples_per_second": \([0-9.]*\).*/\1/p' <<< "$json")
    [ -n "$rate" ] || { echo "bench_train_revisions: $label run $round printed no result" >&2; exit 1; }
    echo "round $round  $label  train_seconds $seconds  examples/s $rate  cpu_seconds $cpu  system_seconds $sys  minor_faults $faults" |
      tee -a "$rows"
  done
done
echo
awk '{ s[$3] = s[$3] " " $5; r[$3] = r[$3] " " $7; c[$3] = c[$3] " " $9; y[$3] = y[$3] " " $11; f[$3] = f[$3] " " $13 }
     function median(list,   a, n, i, j, t) {
       n = split(list, a, " ")
       for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
     }
     END { printf "median  %s: %.1f s, %.1f examples/s   HEAD: %.1f s, %.1f examples/s   speed-up %.2fx\n",
             old, median(s[old]), median(r[old]), median(s["HEAD"]), median(r["HEAD"]), median(r["HEAD"]) / median(r[old])
           printf "median  %s: %.1f CPU s (%.1f system), %d minor faults   HEAD: %.1f CPU s (%.1f system), %d minor faults\n",
             old, median(c[old]), median(y[old]), median(f[old]), median(c["HEAD"]), median(y["HEAD"]), median(f["HEAD"]) }' \
  old="$short" "$rows"
