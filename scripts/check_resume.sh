#!/usr/bin/env bash
# Interrupts a real `attn train` process twice, once with SIGINT (Ctrl-C) and
# once with SIGKILL, and resumes it each time with --resume. Checks that:
#   - SIGINT exits with status 130 after saving a resumable checkpoint;
#   - after SIGKILL the last checkpoint is whole (attn eval reads it) and no
#     temporary file is mistaken for it;
#   - the resumed run continues from the checkpoint's step and finishes;
#   - metrics.jsonl is in step order and steps.jsonl (--log-every 3) holds
#     exactly one line per third step, none missing or repeated.
# Usage: scripts/check_resume.sh [attn binary] [work folder]
# Every wait is counted in training steps (checkpoints), not seconds, so the
# script holds whether a step takes 0.5 ms (Release) or 40 ms (sanitizers).
# Runs in about 2 s (Release) or 50 s (ASan) on 2 cores; CTest runs it as
# cli.resume_after_signals.
set -euo pipefail
attn=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/bin/attn}
work=${2:-$(mktemp -d)}
data=$work/data
run=$work/run
rm -rf "$data" "$run"
mkdir -p "$data"

fail() { echo "check_resume: FAIL: $*" >&2; exit 1; }
say() { echo "check_resume: $*" >&2; }

# label<TAB>text: the label is 1 when "alpha" occurs, 0 when "beta" does.
awk -v rows=3000 'BEGIN {
  srand(5); split("the a cat dog sat ran on mat big small old new red tree house car", w, " ");
  for (i = 0; i < rows; i++) {
    label = int(rand() * 2); line = "";
    n = 12 + int(rand() * 12); at = int(rand() * n);
    for (j = 0; j < n; j++) line = line (j ? " " : "") (j == at ? (label ? "alpha" : "beta") : w[1 + int(rand() * 16)]);
    print label "\t" line > (i < 2600 ? "'"$data"'/train.tsv" : "'"$data"'/test.tsv");
  }
}'

train=("$attn" train --data "$data" --model mtsa --hidden 32 --embedding-dim 32 --head-hidden 32 --heads 2
       --epochs 6 --batch 16 --checkpoint-every 5 --log-every 3 --min-count 1 --run "$run")

step_of() {  # the "step" recorded in a checkpoint's metadata
  local header_len
  header_len=$(od -An -t u8 -N 8 "$1" | tr -d ' ')
  head -c $((8 + header_len)) "$1" | tail -c "$header_len" | sed -E 's/.*"step": *"([0-9]+)".*/\1/'
}

wait_for_checkpoint_after() {  # waits until last.safetensors holds a step > $1
  for _ in $(seq 6000); do
    if [[ -f $run/last.safetensors ]]; then
      s=$(step_of "$run/last.safetensors" 2>/dev/null || echo 0)
      [[ $s =~ ^[0-9]+$ ]] && (( s > $1 )) && return 0
    fi
    sleep 0.01
  done
  fail "no checkpoint after step $1 within 60 s"
}

signal_running() {  # kill -SIGNAL PID, failing clearly if the run already ended
  kill -0 "$2" 2> /dev/null ||
    fail "the training run ended before the $1 could be sent: it is too short for this machine (raise --epochs)"
  kill "-$1" "$2"
}

# 1. Ctrl-C: exit 130 and a resumable checkpoint.
"${train[@]}" 2> "$work/first.log" &
pid=$!
wait_for_checkpoint_after 0
signal_running INT "$pid"
set +e; wait "$pid"; status=$?; set -e
[[ $status -eq 130 ]] || fail "SIGINT: expected exit status 130, got $status (log: $work/first.log)"
grep -q "interrupted: saved a resumable checkpoint" "$work/first.log" || fail "SIGINT: no 'interrupted' message"
after_int=$(step_of "$run/last.safetensors")
say "SIGINT: exit 130, checkpoint at step $after_int"

# 2. Three times: resume, then SIGKILL (no chance to clean up) at a random
#    moment after a newer checkpoint exists (1 to 4 checkpoints later, then 0
#    to 4 ms more), possibly in the middle of a save.
resumed_from=$after_int
for round in 1 2 3; do
  "${train[@]}" --resume 2> "$work/kill$round.log" &
  pid=$!
  wait_for_checkpoint_after $((resumed_from + 5 * (RANDOM % 4)))
  sleep "0.00$((RANDOM % 5))"
  signal_running KILL "$pid"
  set +e; wait "$pid" 2> /dev/null; set -e
  grep -q "resumed at epoch .*, step $resumed_from" "$work/kill$round.log" ||
    fail "round $round: resume did not start from step $resumed_from"
  after_kill=$(step_of "$run/last.safetensors")
  (( after_kill > resumed_from )) || fail "round $round: the checkpoint did not advance"
  "$attn" eval --run "$run" --weights last.safetensors > "$work/eval.json" 2> "$work/eval.log" ||
    fail "round $round: after SIGKILL last.safetensors does not load: $(cat "$work/eval.log")"
  say "SIGKILL $round: checkpoint at step $after_kill is whole ($(ls "$run" | grep -c '\.tmp' || true) temporary file(s) left by the killed writer)"
  resumed_from=$after_kill
done

# 3. Resume to the end.
"${train[@]}" --resume > "$work/final.json" 2> "$work/third.log" || fail "the final resume failed: $(tail -3 "$work/third.log")"
grep -q "resumed at epoch .*, step $after_kill" "$work/third.log" || fail "the final resume did not start from step $after_kill"
grep -q '"accuracy"' "$work/final.json" || fail "no test metrics at the end"
say "resumed from step $after_kill to the end: $(tail -n 1 "$work/final.json")"

# 4. After the kills: no duplicate or out-of-order metrics line (a resume
#    drops the lines logged after its checkpoint), no temporary file left.
awk '{ if (!match($0, /"step": *[0-9]+/)) { print "unparsable line " NR; exit 1 }
       s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); s += 0
       if (NR > 1 && s <= prev) { print "line " NR ": step " s " after step " prev; exit 1 }
       prev = s }' "$run/metrics.jsonl" > "$work/metrics_check.txt" ||
  fail "metrics.jsonl: $(cat "$work/metrics_check.txt")"
# steps.jsonl: the lines of steps 3, 6, 9, ... up to the run's last step,
# each once (a resume drops the lines logged after its checkpoint).
total=$(sed -E 's/.*"steps": ([0-9]+).*/\1/' "$work/final.json")
awk -v total="$total" '{ if (!match($0, /^\{"step":[0-9]+,/)) { print "unparsable line " NR; exit 1 }
       s = substr($0, 9, RLENGTH - 9) + 0
       if (s != 3 * NR) { print "line " NR ": step " s ", expected step " 3 * NR; exit 1 } }
     END { if (NR != int(total / 3)) { print NR " lines for the " total " steps, expected " int(total / 3); exit 1 } }' \
  "$run/steps.jsonl" > "$work/steps_check.txt" || fail "steps.jsonl: $(cat "$work/steps_check.txt")"
say "steps.jsonl: $(wc -l < "$run/steps.jsonl") lines, one per third step of $total"
leftover=$(ls "$run" | grep -c '\.tmp\.' || true)
(( leftover == 0 )) || fail "$leftover temporary file(s) left in $run after the final resume"
say "metrics.jsonl: $(wc -l < "$run/metrics.jsonl") lines in step order; no temporary files"
say "OK"
