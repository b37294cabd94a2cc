#!/usr/bin/env bash
# kill -9 one process of a 2-process run at a random moment, TIMES times:
# each time the launcher must end the run within BOUND seconds, naming the
# killed process, and --resume (again on 2 processes) must finish with the
# same weights, bit for bit, as an uninterrupted 2-process run (the same
# arithmetic run twice; docs/distributed.md, "Faults").
#
#   scripts/check_data_parallel_kill.sh ATTN WORK [TIMES] [BOUND]
#
# TIMES defaults to 10 and BOUND to 10 seconds. A kill that lands before the
# first checkpoint leaves nothing to resume: that run starts again.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,12p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
attn=$1
work=$2
times=${3:-10}
bound=${4:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mpi_launcher.sh"
fail() { echo "check_data_parallel_kill: FAIL: $*" >&2; exit 1; }

. "$here/marker_data.sh"
write_marker_data "$work/data" 11 1400 4 20 1200 0
args=(train --data "$work/data" --model mtsa --hidden 32 --embedding-dim 32 --head-hidden 32 --heads 2 --epochs 5
      --batch 16 --checkpoint-every 10 --quiet --log-every 5)

rm -rf "$work/reference"
start=$(date +%s%N)
"${MPIRUN[@]}" -np 2 "$attn" "${args[@]}" --run "$work/reference" > /dev/null || fail "the uninterrupted run"
length=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.2f", ns / 1e9 }')
echo "uninterrupted 2-process run: ${length} s"

counted=0
for i in $(seq 1 "$times"); do
  run=$work/killed-$i
  rm -rf "$run"
  # A random moment between 15% and 80% of the uninterrupted run's length
  # (the launch included), and a random process.
  delay=$(awk -v seed="$i$RANDOM" -v t="$length" 'BEGIN { srand(seed); printf "%.2f", t * (0.15 + 0.65 * rand()) }')
  victim=$((RANDOM % 2))
  "${MPIRUN[@]}" -np 2 "$attn" "${args[@]}" --run "$run" > "$run.log" 2>&1 &
  launcher=$!
  sleep "$delay"
  pids=$(pgrep -P "$launcher" -f "bin/attn" | sort -n || true)
  pid=$(echo "$pids" | sed -n "$((victim + 1))p")
  if [ -z "$pid" ]; then
    wait "$launcher" || true
    echo "kill $i: the run had ended before ${delay} s; not counted" && continue
  fi
  killed_at=$(date +%s%N)
  if ! kill -9 "$pid" 2> /dev/null; then
    # It ended between pgrep and kill: the run was finishing.
    wait "$launcher" || true
    echo "kill $i: process $victim had ended before ${delay} s; not counted" && continue
  fi
  counted=$((counted + 1))
  status=0
  wait "$launcher" || status=$?
  took=$(awk -v ns=$(($(date +%s%N) - killed_at)) 'BEGIN { printf "%.2f", ns / 1e9 }')
  [ "$status" -ne 0 ] || fail "kill $i: the launcher exited 0 after a process was killed"
  awk -v t="$took" -v b="$bound" 'BEGIN { exit !(t <= b) }' || fail "kill $i: the run took ${took} s to stop (bound ${bound} s)"
  grep -qiE "signal 9|killed" "$run.log" || fail "kill $i: no message names the killed process: $(tail -3 "$run.log")"
  step=$(python3 -c "import json,struct,sys; f=open(sys.argv[1],'rb'); n=struct.unpack('<Q',f.read(8))[0]; print(json.loads(f.read(n))['__metadata__'].get('step','?'))" "$run/last.safetensors" 2>/dev/null || echo none)
  if [ "$step" = none ]; then
    "${MPIRUN[@]}" -np 2 "$attn" "${args[@]}" --run "$run" --overwrite > /dev/null 2>&1 || fail "kill $i: the fresh restart"
  else
    "${MPIRUN[@]}" -np 2 "$attn" "${args[@]}" --run "$run" --resume > /dev/null 2>&1 || fail "kill $i: --resume"
  fi
  python3 "$here/compare_weights.py" --max-relative 0 "$work/reference/last.safetensors" "$run/last.safetensors" > /dev/null ||
    fail "kill $i: the resumed run's checkpoint differs from the uninterrupted run's"
  echo "kill $i: process $victim at ${delay} s (checkpoint step $step): the run stopped in ${took} s; resumed to the uninterrupted run's weights"
done
# Kills land at random moments inside the measured run, so most count; a
# check where few did has not tested much.
[ $((2 * counted)) -ge "$times" ] || fail "only $counted of $times kills landed while the run was going"
echo "check_data_parallel_kill: OK ($counted kills)"
