#!/usr/bin/env bash
# Times this checkout's `attn bench` against another git revision's, in one
# script: builds REV (CPU-only, Release) in a git worktree under
# build-rev-<REV>/, then alternates the two binaries ROUNDS times on the same
# bench arguments, so both see the same machine state.
#
#   scripts/bench_revisions.sh REV [ROUNDS] [-- bench arguments]
#   scripts/bench_revisions.sh 8f05d09 3 -- --models mtsa,transformer,disan --lengths 64 --reps 5
#
# Prints each run's table rows prefixed with the revision; the medians of the
# rounds are what docs/benchmarks.md quotes. This checkout's binary is
# build/bin/attn, or $ATTN_BINARY (e.g. build-dev/bin/attn).
set -euo pipefail
name=bench_revisions
usage_lines=2,13
. "$(dirname "$0")/revision_args.sh"
echo "== HEAD is $here (ATTN_BINARY overrides it): make sure it is built from this checkout" >&2

tree=$root/build-rev-$short
if [ ! -d "$tree/src" ]; then
  echo "== building $short in $tree (CPU-only Release)" >&2
  mkdir -p "$tree"
  git worktree prune  # forgets worktrees whose folders were deleted by hand
  git worktree add --detach "$tree/src" "$commit" >&2
fi
cmake -S "$tree/src" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DATTN_CUDA=OFF -DATTN_BUILD_TESTS=OFF > /dev/null
cmake --build "$tree/build" --target attn -j"$(nproc)" > /dev/null
there=$tree/build/bin/attn

args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--models mtsa,transformer,disan --lengths 64 --reps 5 --warmup 1)
echo "== $rounds rounds of: attn bench ${args[*]}" >&2
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for round in $(seq 1 "$rounds"); do
  for side in "$short:$there" "HEAD:$here"; do
    label=${side%%:*}
    binary=${side#*:}
    "$binary" bench "${args[@]}" 2> /dev/null |
      awk -v l="$label" -v r="$round" 'NF >= 9 && $2 ~ /^(infer|train)$/ { print "round " r "  " l "  " $0 }' | tee -a "$rows"
  done
done
# Median over the rounds of each point's median, and the ratio REV / HEAD.
# Also the median of each round's own ratio: a round's two runs are back to
# back, so a change of the machine's speed between rounds (this project's
# virtual machines swing by up to 2x from one minute to the next) cancels.
echo
echo "model        mode  length   $short ms   HEAD ms   $short/HEAD   median of rounds' ratios"
awk '{ key = $4 " " $5 " " $6; v[key, $3] = v[key, $3] " " $7; t[key, $2, $3] = $7; r[key] = r[key] " " $2; keys[key] = 1 }
     function median(list,   a, n, i, j, t) {
       n = split(list, a, " ")
       for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
     }
     END { for (k in keys) { split(k, p, " "); o = median(v[k, old]); h = median(v[k, "HEAD"])
             n = split(r[k], rounds, " "); ratios = ""; delete seen
             for (i = 1; i <= n; i++) {
               q = rounds[i]
               if (q in seen || !((k, q, old) in t) || !((k, q, "HEAD") in t)) continue
               seen[q] = 1; ratios = ratios " " t[k, q, old] / t[k, q, "HEAD"]
             }
             printf "%-12s %-5s %6s %11.1f %9.1f %12.2f %12.2f\n", p[1], p[2], p[3], o, h, o / h, median(ratios) } }' \
  old="$short" "$rows" | sort
