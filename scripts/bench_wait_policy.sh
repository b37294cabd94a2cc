#!/usr/bin/env bash
# Times training steps under OpenMP wait policies, with and without one
# competing busy process, all alternated in one script so that every cell
# sees the same machine state (docs/engine.md, "Idle threads").
#
#   scripts/bench_wait_policy.sh ATTN_BINARY [ROUNDS]
#
# Policies: libgomp's default, OMP_WAIT_POLICY=passive, GOMP_SPINCOUNT=10000
# and 100000 (setting either variable also stops attn's own default). The
# competitor is `sh -c 'while :; do :; done'`, not pinned, started before
# and killed after each run. Prints each run's medians (ms) and the CPU
# seconds the bench process used, then the mean over the rounds per cell.
set -euo pipefail
if [ $# -lt 1 ] || [ "$1" = "--help" ] || [ "$1" = "-h" ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
bin=$1
rounds=${2:-2}
[ -x "$bin" ] || { echo "bench_wait_policy: '$bin' is not an executable" >&2; exit 2; }
case $rounds in '' | *[!0-9]* | 0) echo "bench_wait_policy: ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2 ;; esac
command -v /usr/bin/time > /dev/null || { echo "bench_wait_policy: needs /usr/bin/time (Debian package 'time')" >&2; exit 2; }
args=(bench --models mtsa,transformer --mode train --threads 2 --lengths 32 --reps 3 --warmup 1)
rows=$(mktemp)
busy_pid=
cleanup() { [ -n "$busy_pid" ] && kill "$busy_pid" 2> /dev/null; rm -f "$rows"; }
trap cleanup EXIT
for round in $(seq 1 "$rounds"); do
  for load in idle busy; do
    for policy in default passive spin10000 spin100000; do
      envs=(-u OMP_WAIT_POLICY -u GOMP_SPINCOUNT)
      case $policy in
        default) envs+=(GOMP_SPINCOUNT=300000) ;;  # libgomp's own default, set so attn keeps it
        passive) envs+=(OMP_WAIT_POLICY=passive) ;;
        spin*) envs+=(GOMP_SPINCOUNT=${policy#spin}) ;;
      esac
      if [ "$load" = busy ]; then
        sh -c 'while :; do :; done' &
        busy_pid=$!
      fi
      out=$({ env "${envs[@]}" /usr/bin/time -f "cpu %U %S" "$bin" "${args[@]}" 2>&1 1>&3 | grep '^cpu' >&2; } 3>&1 2>&1)
      if [ -n "$busy_pid" ]; then
        kill "$busy_pid"
        wait "$busy_pid" 2> /dev/null || true
        busy_pid=
      fi
      echo "$out" | awk -v r="$round" -v b="$load" -v p="$policy" -v l="$(cut -d' ' -f1 /proc/loadavg)" '
        $2 == "train" { print "round " r "  " b "  " p "  " $1 " " $4 " ms  (load " l ")" }
        /^cpu/ { print "round " r "  " b "  " p "  cpu_s " $2 + $3 }' | tee -a "$rows"
    done
  done
done
echo
echo "condition  policy        mtsa ms  transformer ms  cpu s   (mean over rounds)"
awk '{ key = $3 " " $4; v[key, $5] += ($5 == "cpu_s" ? $6 : $6); n[key, $5]++; keys[key] = 1 }
     END { for (k in keys) printf "%-10s %-12s %8.0f %15.0f %7.2f\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1),
           v[k, "mtsa"] / n[k, "mtsa"], v[k, "transformer"] / n[k, "transformer"], v[k, "cpu_s"] / n[k, "cpu_s"] }' "$rows" | sort
