#!/usr/bin/env bash
# A resumable checkpoint resumes whatever phase a signal lands in, and the
# resumed run ends byte-identical to an uninterrupted one (best.safetensors,
# last.safetensors, metrics.jsonl). With 40 training lines (10 steps of 4 an
# epoch) and a dev split far larger, nearly all the time is spent in dev
# evaluations, so a signal sent just after a step's checkpoint lands in a
# step or, mostly, in the evaluation at the end of the epoch or of the run:
#   1. SIGINT in the end-of-epoch evaluation (--eval-every 10 also due there);
#   2. SIGKILL in the end-of-epoch evaluation (--checkpoint-every 5);
#   3. SIGINT in the evaluation at the end of the run.
# Also checks that a second writer is refused while the first holds the run
# folder, naming its process id, and writes nothing (CHECK_SECOND_WRITER=0
# skips that, to try the resume checks on a build without the lock).
# Usage: scripts/check_resume_phases.sh [attn binary] [work folder]
# CTest runs it as cli.resume_at_every_phase.
set -euo pipefail
attn=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/bin/attn}
work=${2:-$(mktemp -d)}
data=$work/data
rm -rf "$work"
mkdir -p "$data"

fail() { echo "check_resume_phases: FAIL: $*" >&2; exit 1; }
say() { echo "check_resume_phases: $*" >&2; }

# label<TAB>text; "alpha" means 1, "beta" 0.
make_split() {  # rows seed file
  awk -v rows="$1" -v seed="$2" 'BEGIN {
    srand(seed); split("the a cat dog sat ran on mat big small", w, " ");
    for (i = 0; i < rows; i++) {
      label = int(rand() * 2); line = label ? "alpha" : "beta";
      for (j = 0; j < 5; j++) line = line " " w[1 + int(rand() * 10)];
      print label "\t" line;
    }
  }' > "$3"
}
make_split 40 1 "$data/train.tsv"
make_split "${DEV_ROWS:-20000}" 2 "$data/dev.tsv"
make_split 40 3 "$data/test.tsv"

settings=(--data "$data" --model mtsa --hidden 8 --embedding-dim 8 --head-hidden 8 --heads 2 --max-len 8
          --epochs 2 --batch 4 --eval-every 10 --checkpoint-every 5 --min-count 1 --quiet)

step_of() {  # the "step" recorded in a checkpoint's metadata
  local header_len
  header_len=$(od -An -t u8 -N 8 "$1" | tr -d ' ')
  head -c $((8 + header_len)) "$1" | tail -c "$header_len" | sed -E 's/.*"step": *"([0-9]+)".*/\1/'
}

wait_for_checkpoint_at_least() {  # run step
  for _ in $(seq 6000); do
    if [[ -f $1/last.safetensors ]]; then
      s=$(step_of "$1/last.safetensors" 2>/dev/null || echo 0)
      [[ $s =~ ^[0-9]+$ ]] && (( s >= $2 )) && return 0
    fi
    sleep 0.01
  done
  fail "no checkpoint at step $2 in $1 within 60 s"
}

fingerprint() {  # what must not depend on interruptions
  (cd "$1" && sha256sum best.safetensors last.safetensors metrics.jsonl)
}

"$attn" train "${settings[@]}" --run "$work/reference" > /dev/null 2> "$work/reference.log" ||
  fail "the uninterrupted run failed: $(tail -3 "$work/reference.log")"
fingerprint "$work/reference" > "$work/reference.sha"

# name signal step: starts a run, sends the signal once its checkpoint has
# reached `step`, resumes it to the end and compares it with the reference.
interrupt_and_resume() {
  local name=$1 signal=$2 step=$3 run=$work/$1
  "$attn" train "${settings[@]}" --run "$run" > /dev/null 2> "$work/$name.log" &
  local pid=$!
  wait_for_checkpoint_at_least "$run" "$step"
  if [[ $name == sigint_epoch_end && ${CHECK_SECOND_WRITER:-1} == 1 ]]; then  # a second writer while the first holds the folder
    cp "$run/metrics.jsonl" "$work/metrics.before" 2> /dev/null || : > "$work/metrics.before"
    if "$attn" train "${settings[@]}" --run "$run" --resume > /dev/null 2> "$work/second.log"; then
      fail "a second writer was let into $run"
    fi
    grep -q "in use by another attn train (process $pid)" "$work/second.log" ||
      fail "the second writer's error does not name process $pid: $(cat "$work/second.log")"
    cmp -s "$work/metrics.before" "$run/metrics.jsonl" 2> /dev/null || [[ ! -f $run/metrics.jsonl ]] ||
      fail "the refused second writer changed metrics.jsonl"
  fi
  kill -0 "$pid" 2> /dev/null || fail "$name: the run ended before the signal (raise DEV_ROWS)"
  kill "-$signal" "$pid"
  set +e; wait "$pid" 2> /dev/null; set -e
  local saved
  saved=$(step_of "$run/last.safetensors")
  "$attn" train "${settings[@]}" --run "$run" --resume > /dev/null 2> "$work/$name.resume.log" ||
    fail "$name: --resume from step $saved failed: $(tail -3 "$work/$name.resume.log")"
  fingerprint "$run" | diff "$work/reference.sha" - > "$work/$name.diff" ||
    fail "$name: the resumed run differs from the uninterrupted one: $(cat "$work/$name.diff")"
  say "$name: $signal with the checkpoint at step $saved, resumed to the same weights and metrics"
}

interrupt_and_resume sigint_epoch_end INT 5
interrupt_and_resume sigkill_epoch_end KILL 5
interrupt_and_resume sigint_run_end INT 15
say "OK"
