#!/usr/bin/env bash
# Fifty interruptions of real `attn train` processes, spread over every phase
# a signal can land in (a training step, a mid-epoch evaluation, the end of an
# epoch, the end of the run), each followed by --resume. Many runs are stopped
# again and again: the resumed process is interrupted in turn, and so on, until
# one finishes. Every run, however often it was stopped, must end with the
# files of an uninterrupted one, byte for byte: best.safetensors,
# last.safetensors, metrics.jsonl, steps.jsonl (less each line's rates and
# allocator bytes, which are the process's own) and the test metrics (one
# binary on one machine, one OpenMP thread, the same seed: the runs compute
# the same bits).
#
# Two settings of the same tiny model:
#   steps:  800 training lines (200 steps of 4 an epoch, 2 epochs) against 40
#           dev and test lines, a checkpoint every 25 steps: nearly all the
#           time is training steps.
#   evals:  40 training lines (10 steps an epoch, 2 epochs) against 3,000 dev
#           and test lines, --eval-every 5, a checkpoint every 4 steps: nearly
#           all the time is evaluation (mid-epoch at steps 5 and 15, the end of
#           epoch 1 at step 10, the end of the run at step 20, then the test
#           evaluation).
# Signals: SIGINT (Ctrl-C: the run must exit 130 saying it saved a resumable
# checkpoint), SIGINT twice (the second, sent once the first is delivered,
# stops it at once, saving nothing) and SIGKILL. A signal is aimed at an evaluation from the checkpoint before it,
# after a random fraction of how long an evaluation takes (measured on the
# uninterrupted run, then on every evaluation seen whole: the aim holds on a
# slow sanitizer build as on a fast one, and follows a machine whose load
# changes); at steps, within 25 steps of a given checkpoint. After each signal:
#   - a process that said it saved a resumable checkpoint exited 130 and
#     left it; whatever stopped it, the next process starts with --resume
#     from the checkpoint in the folder and must say it resumed at that step;
#   - where it landed is read from what it left: the step SIGINT saved at, or
#     for a process that saved nothing, the span between its last checkpoint
#     and the next one it would have written (and whether the evaluation in
#     that span had logged its line).
# A signal that does not stop the process (it ended first, or it was SIGINT
# during the test evaluation, which finishes) does not count: the run ends,
# is compared, and the plan goes on until $INTERRUPTIONS (50) interruptions
# landed, failing after $INTERRUPTIONS / 2 such misses. Each phase must have
# been hit.
# The summary line says how many of each signal and phase landed.
# Also checks that a second writer is refused while a run holds the folder,
# naming its process id, and writes nothing (CHECK_SECOND_WRITER=0 skips it).
# Usage: scripts/check_resume_phases.sh [attn binary] [work folder]
# Environment: INTERRUPTIONS (50), RESUME_SEED (the delays' random seed),
# DEV_ROWS (3000). CTest runs it as cli.resume_at_every_phase.
set -euo pipefail
export LC_ALL=C OMP_NUM_THREADS=1
attn=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/bin/attn}
work=${2:-$(mktemp -d)}
wanted=${INTERRUPTIONS:-50}
RANDOM=${RESUME_SEED:-7}
rm -rf "$work"
mkdir -p "$work/data_steps" "$work/data_evals"

me=check_resume_phases
now() { t=${EPOCHREALTIME/./}; t=$((10#$t)); }  # sets t: microseconds
now; start=$t
fail() { echo "$me: FAIL: $*" >&2; exit 1; }
say() { echo "$me: $*" >&2; }
[[ -x $attn ]] || fail "no attn binary at $attn (build first, or give its path as the first argument)"
pid=
trap '[[ -z $pid ]] || kill -9 "$pid" 2> /dev/null || true' EXIT

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
make_split 800 1 "$work/data_steps/train.tsv"
make_split 40 2 "$work/data_steps/dev.tsv"
make_split 40 3 "$work/data_steps/test.tsv"
make_split 40 1 "$work/data_evals/train.tsv"
make_split "${DEV_ROWS:-3000}" 2 "$work/data_evals/dev.tsv"
make_split "${DEV_ROWS:-3000}" 3 "$work/data_evals/test.tsv"

model=(--model mtsa --hidden 8 --embedding-dim 8 --head-hidden 8 --heads 2 --max-len 8 --epochs 2 --batch 4
       --min-count 1 --log-every 3)
settings_steps=(--data "$work/data_steps" "${model[@]}" --checkpoint-every 25)
settings_evals=(--data "$work/data_evals" "${model[@]}" --eval-every 5 --checkpoint-every 4)
# The schedule: steps per epoch, --eval-every (0: only at the end of an
# epoch), --checkpoint-every; 2 epochs.
declare -A per_epoch=([steps]=200 [evals]=10) eval_every=([steps]=0 [evals]=5) ckpt_every=([steps]=25 [evals]=4)

# --- What a run folder shows, read without starting a process -------------
read_state() {  # run: sets cs (the checkpoint's step, -1: none) and ls (the last metrics line's step, -1: none)
  local header= lines=()
  cs=-1 ls=-1
  if [[ -f $1/last.safetensors ]]; then
    read -r -N 1024 header < "$1/last.safetensors" || true
    [[ $header =~ \"step\":\"([0-9]+)\" ]] && cs=${BASH_REMATCH[1]}
  fi
  if [[ -f $1/metrics.jsonl ]]; then
    mapfile -t lines < "$1/metrics.jsonl"
    (( ${#lines[@]} == 0 )) || [[ ! ${lines[-1]} =~ \"step\":\ ([0-9]+) ]] || ls=${BASH_REMATCH[1]}
  fi
}
started() {  # log: the process has begun training (a resumed one: has read its checkpoint)
  if (( resumed_from >= 0 )); then grep -q '^resumed at epoch' "$1" 2> /dev/null; else grep -q '^model: ' "$1" 2> /dev/null; fi
}
is_eval_step() {  # cfg step
  (( $2 % per_epoch[$1] == 0 )) || (( eval_every[$1] > 0 && $2 % eval_every[$1] == 0 ))
}
is_ckpt_step() { (( $2 % per_epoch[$1] == 0 || $2 % ckpt_every[$1] == 0 )); }
ckpt_before() {  # cfg step: sets a, the last checkpoint step before `step`
  a=$(($2 - 1))
  while (( a > 0 )) && ! is_ckpt_step "$1" "$a"; do a=$((a - 1)); done
}
phase_of_eval() {  # cfg step: the phase an evaluation at `step` belongs to; sets phase
  if (( $2 == 2 * per_epoch[$1] )); then phase="end of run"
  elif (( $2 % per_epoch[$1] == 0 )); then phase="end of epoch"
  else phase="mid-epoch evaluation"; fi
}
sigint_pending() {  # SIGINT is still pending for process $pid (Linux /proc; false elsewhere)
  local key value
  while read -r key value; do
    case $key in SigPnd: | ShdPnd:) (( (16#$value >> 1) & 1 )) && return 0 ;; esac
  done 2> /dev/null < "/proc/$pid/status"
  return 1
}
sleep_us() { sleep "$(printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)))"; }

fingerprint() {  # run: what must not depend on interruptions
  (cd "$1" && sha256sum best.safetensors last.safetensors metrics.jsonl)
  # One line per logged step, in order, with the training values.
  sed -E 's/,"examples_per_s":[^,]*,"tokens_per_s":[^,]*,"allocator_bytes":[0-9]*//' "$1/steps.jsonl" | sha256sum
  # The test metrics, less the timings and the run folder.
  sed -E 's/"train_seconds": [^,]*, "examples_per_second": [^,]*, //; s/, "run": "[^"]*"//' "$1/test_metrics.json"
}

# --- The uninterrupted runs, and how long each phase takes in them ----------
declare -A first_ckpt_seen first_line_seen
declare -A window  # steps:step -> microseconds
eval_us=0  # how long an evaluation of the evals run takes now (with the steps before it)
reference() {  # cfg
  local cfg=$1 run=$work/$1.reference log=$work/$1.reference.log
  local -n settings=settings_$cfg
  first_ckpt_seen=() first_line_seen=()
  now; local t0=$t
  "$attn" train "${settings[@]}" --run "$run" > "$log.out" 2> "$log" &
  pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    read_state "$run"
    now
    [[ -n ${first_ckpt_seen[$cs]:-} ]] || first_ckpt_seen[$cs]=$t
    [[ -n ${first_line_seen[$ls]:-} ]] || first_line_seen[$ls]=$t
    sleep 0.005
  done
  now; local t_end=$t
  set +e; wait "$pid"; local status=$?; set -e
  pid=
  (( status == 0 )) || fail "the uninterrupted $cfg run failed: $(tail -3 "$log")"
  fingerprint "$run" > "$work/$cfg.reference.sha"
  local total=$((2 * per_epoch[$cfg]))
  if [[ $cfg == evals ]]; then
    # Each evaluation's span: from the checkpoint before it to its line (to
    # the end for the test evaluation); the median is the first estimate.
    local e spans=()
    for e in 5 10 15 20; do
      ckpt_before "$cfg" "$e"
      [[ -n ${first_line_seen[$e]:-} && -n ${first_ckpt_seen[$a]:-} ]] ||
        fail "the evals run's evaluation at step $e or its checkpoint at step $a was never seen while it ran (raise DEV_ROWS)"
      spans+=($((first_line_seen[$e] - first_ckpt_seen[$a])))
    done
    [[ -n ${first_ckpt_seen[$total]:-} ]] || fail "the evals run's final checkpoint was never seen while it ran"
    spans+=($((t_end - first_ckpt_seen[$total])))
    mapfile -t spans < <(printf '%s\n' "${spans[@]}" | sort -n)
    eval_us=${spans[2]}
    say "uninterrupted evals run: $(( (t_end - t0) / 1000 )) ms; its 5 evaluations take $(( spans[0] / 1000 )) to" \
        "$(( spans[4] / 1000 )) ms (median $(( eval_us / 1000 )) ms)"
  else
    # The time of 25 steps: from the first checkpoint seen to the last one
    # seen before the end of epoch 1.
    local s lo=-1 hi=-1
    for s in "${!first_ckpt_seen[@]}"; do
      (( s > 0 && s < per_epoch[$cfg] )) || continue
      (( lo < 0 || s < lo )) && lo=$s
      (( s > hi )) && hi=$s
    done
    (( lo > 0 && hi > lo )) || fail "the steps run showed fewer than 2 checkpoints in its first epoch"
    window[$cfg:step]=$(( (first_ckpt_seen[$hi] - first_ckpt_seen[$lo]) * 25 / (hi - lo) ))
    say "uninterrupted steps run: $(( (t_end - t0) / 1000 )) ms; 25 steps take $((window[steps:step] / 1000)) ms"
  fi
}
reference steps
reference evals

# --- One interruption ---------------------------------------------------------
# A target is SIGNAL@WHERE: SIGNAL is INT, INT2 (SIGINT twice) or
# KILL; WHERE is evalN (in the evaluation at step N, sent from the checkpoint
# before it), afterN (as soon as the end-of-epoch evaluation at step N has
# logged its line: while it saves best.safetensors and the checkpoint), test
# (in the test evaluation, after the final checkpoint) or a step count N
# (steps run: once the checkpoint reaches N, within the time of 25 steps).
landed=0 misses=0
declare -A count_signal count_phase
miss() {  # what
  misses=$((misses + 1))
  say "$1"
  (( misses <= wanted / 2 )) || fail "$misses signals did not stop a run: the timing is off on this machine"
}

new_process() {  # cfg run log: starts attn train, with --resume when the folder has a checkpoint
  local -n settings=settings_$1
  read_state "$2"
  resumed_from=$cs
  if (( cs >= 0 )); then
    "$attn" train "${settings[@]}" --run "$2" --resume > "$3.out" 2> "$3" &
  else
    [[ ! -e $2 ]] || fail "$2 holds a run but no checkpoint: a signal landed before the first one"
    "$attn" train "${settings[@]}" --run "$2" > "$3.out" 2> "$3" &
  fi
  pid=$!
}

# run log: waits until the process has begun training; a resumed one must say
# it resumed from the checkpoint's step, and have dropped the metrics lines a
# stopped process logged after it. False when the process ended first.
wait_started() {
  local deadline
  now; deadline=$((t + 600 * 1000000))
  while :; do
    kill -0 "$pid" 2> /dev/null || return 1
    if started "$2"; then
      (( resumed_from >= 0 )) || return 0
      grep -qE "^resumed at epoch [0-9]+, step $resumed_from\$" "$2" ||
        fail "$2: the run did not resume from the checkpoint's step $resumed_from: $(grep resumed "$2")"
      read_state "$1"
      (( ls <= resumed_from || cs > resumed_from )) && return 0
    fi
    now; (( t < deadline )) || fail "$2: no sign of training within 600 s"
    sleep 0.005
  done
}

# cfg run target: the moment a target names in this run, as `aimed`: a
# moment the run has passed already (an earlier signal landed later than
# aimed) becomes the next one of its kind; "skip" when none is left that the
# signal could stop the run in (SIGINT lets the test evaluation finish; the
# steps run's test evaluation is too short to aim at).
resolve_target() {
  local cfg=$1 signal=${3%@*} where=${3#*@} total=$((2 * per_epoch[$1])) e
  read_state "$2"
  case $where in
    eval*)
      e=${where#eval}
      if (( cs >= e )); then
        e=$((cs + 1))
        while (( e <= total )) && ! is_eval_step "$cfg" "$e"; do e=$((e + 1)); done
      fi
      if (( e <= total )); then where=eval$e; else where=test; fi ;;
    after*)
      e=${where#after}
      (( cs < e )) || e=$(( (cs / per_epoch[$cfg] + 1) * per_epoch[$cfg] ))
      if (( e <= total )); then where=after$e; else where=test; fi
      # After the run's last evaluation only a moment is left before the test evaluation.
      [[ $signal == KILL || $where != after$total ]] || where=test ;;
    test) ;;
    *)
      e=$where
      (( cs < e )) || e=$(( (cs / ckpt_every[$cfg] + 1) * ckpt_every[$cfg] ))
      if (( e < total )); then where=$e; else where=test; fi ;;
  esac
  [[ $where != test || ( $signal == KILL && $cfg == evals ) ]] || where=skip
  aimed=$where
}

# cfg run: waits for the moment `aimed`; sets delay (µs to wait after it).
# False when the process ended first.
wait_for_target() {
  local cfg=$1 run=$2 where=$aimed total=$((2 * per_epoch[$1])) need_ckpt=-1 need_line=-1 deadline
  case $where in
    eval*) ckpt_before "$cfg" "${where#eval}"; need_ckpt=$a ;;
    after*) need_line=${where#after} ;;
    test) need_ckpt=$total ;;
    *) need_ckpt=$where ;;
  esac
  now; deadline=$((t + 600 * 1000000))
  local seen_cs=x seen_ls=x since=-1
  while :; do
    kill -0 "$pid" 2> /dev/null || return 1
    read_state "$run"
    now
    # What is seen whole on the way updates the estimates of how long things
    # take now: an evaluation (from the checkpoint before it to its line),
    # steps (from one checkpoint to the next).
    if [[ $cfg == evals && $seen_ls != x ]] && (( ls > seen_ls && since >= 0 )); then
      ckpt_before "$cfg" "$ls"
      (( cs != a )) || eval_us=$(( (eval_us + t - since) / 2 ))
    fi
    if [[ $seen_cs != x && $cs != "$seen_cs" ]]; then
      if [[ $cfg == steps ]] && (( since >= 0 && cs > seen_cs )); then
        window[steps:step]=$(( (window[steps:step] + (t - since) * 25 / (cs - seen_cs)) / 2 ))
      fi
      since=$t
    fi
    seen_cs=$cs seen_ls=$ls
    (( cs >= need_ckpt && ls >= need_line )) && break
    (( t < deadline )) || fail "$run: the run did not reach $where within 600 s"
    sleep 0.005
  done
  # Into an evaluation's span (which starts with up to 4 steps): 20-65 % of
  # an evaluation; 20-45 % for SIGINT in the run's last one, which sent too
  # late would land in the test evaluation, which it does not stop; 5-40 %
  # into the test evaluation.
  case $where in
    eval$total) if [[ $3 == INT* ]]; then delay=$(( eval_us * (20 + RANDOM % 25) / 100 ));
                else delay=$(( eval_us * (20 + RANDOM % 45) / 100 )); fi ;;
    eval*) delay=$(( eval_us * (20 + RANDOM % 45) / 100 )) ;;
    test) delay=$(( eval_us * (5 + RANDOM % 35) / 100 )) ;;
    after*) delay=0 ;;
    *) delay=$(( window[steps:step] * (RANDOM % 80) / 100 )) ;;
  esac
}

# The second writer: refused while this process holds the folder, naming it.
check_second_writer() {  # cfg run
  local -n settings=settings_$1
  # The first writer is paused (it keeps its lock) so that anything that
  # changes metrics.jsonl meanwhile can only be the second writer.
  kill -STOP "$pid"
  cp "$2/metrics.jsonl" "$work/metrics.before" 2> /dev/null || : > "$work/metrics.before"
  local refused=1
  "$attn" train "${settings[@]}" --run "$2" --resume > /dev/null 2> "$work/second.log" && refused=0
  kill -CONT "$pid"
  (( refused )) || fail "a second writer was let into $2"
  grep -q "in use by another attn train (process $pid)" "$work/second.log" ||
    fail "the second writer's error does not name process $pid: $(cat "$work/second.log")"
  cmp -s "$work/metrics.before" "$2/metrics.jsonl" 2> /dev/null || [[ ! -f $2/metrics.jsonl ]] ||
    fail "the refused second writer changed metrics.jsonl"
  say "a second writer of $2 was refused, naming process $pid"
}

# Where a stopped process was; sets phase and note. cfg run name target signal status log
classify() {
  local cfg=$1 run=$2 name=$3 target=$4 signal=$5 status=$6 log=$7 total=$((2 * per_epoch[$1])) e n
  note=
  read_state "$run"
  if grep -qF "interrupted: saved a resumable checkpoint to $run/last.safetensors (continue with --resume)" "$log"; then
    [[ $signal != KILL ]] || fail "$name: $target: SIGKILL cannot save a checkpoint"
    (( status == 130 )) || fail "$name: $target: exit status $status after saying it saved a checkpoint (log: $log)"
    (( cs >= 0 )) || fail "$name: $target: said it saved a checkpoint, but there is none"
    # Ctrl-C is acted on after the step it lands in and that step's
    # evaluation, or at the end of the epoch or of the run.
    if is_eval_step "$cfg" "$cs"; then phase_of_eval "$cfg" "$cs"; else phase="mid-step"; fi
    note="it saved a checkpoint at step $cs"
  else
    [[ $signal != INT ]] ||
      fail "$name: $target: SIGINT stopped the run (status $status) without saving a checkpoint: $(tail -3 "$log")"
    (( status == 137 || status == 130 )) || fail "$name: $target: exit status $status (log: $log)"
    (( cs >= 0 )) || fail "$name: $target: the process was stopped before its first checkpoint"
    [[ ! -f $run/test_metrics.json ]] || fail "$name: $target: stopped, yet test_metrics.json was written"
    # It stopped between the checkpoint it left and the next one it would
    # have written (n), where the evaluation e may lie.
    e=$((cs + 1)) n=$((cs + 1))
    while (( e <= total )) && ! is_eval_step "$cfg" "$e"; do e=$((e + 1)); done
    while (( n < total )) && ! is_ckpt_step "$cfg" "$n"; do n=$((n + 1)); done
    if (( cs == total )); then
      phase="end of run"  # after the final checkpoint: in the test evaluation
      note=" (the final one: it was in the test evaluation)"
    elif (( e <= n && ls >= e )); then  # after the evaluation's line: saving its checkpoint, or in later steps
      if (( e == n )); then phase_of_eval "$cfg" "$e"; else phase="mid-step"; fi
    elif (( e <= n )) && [[ $cfg == evals ]]; then  # in the evaluation, which takes nearly all of the span
      phase_of_eval "$cfg" "$e"
    else
      phase="mid-step"
    fi
    note="it left the checkpoint at step $cs${note:-}"
    (( ls <= cs )) || note+=" and metrics lines up to step $ls"
  fi
}

# cfg name targets...: one run, interrupted at each target in turn (each time
# in the process resumed after the previous one), then resumed to the end and
# compared with the uninterrupted run.
chain() {
  local cfg=$1 name=$2 run=$work/$2 k=0 target signal status log stops=0 reached
  shift 2
  for target in "$@"; do
    (( landed < wanted )) || break
    resolve_target "$cfg" "$run" "$target"
    if [[ $aimed == skip ]]; then
      say "$name: $target skipped: the run is past any moment it could stop the run in"
      continue
    fi
    k=$((k + 1))
    log=$work/$name.$k.log
    new_process "$cfg" "$run" "$log"
    reached=0
    if wait_started "$run" "$log"; then
      if [[ ${CHECK_SECOND_WRITER:-1} == 1 && $name == evals1 && $k == 1 ]]; then check_second_writer "$cfg" "$run"; fi
      if wait_for_target "$cfg" "$run" "$target"; then reached=1; fi
    fi
    if (( ! reached )); then
      set +e; wait "$pid"; status=$?; set -e
      pid=
      (( status == 0 )) || fail "$name: process $k ended with status $status before the signal: $(tail -3 "$log")"
      miss "$name: process $k finished the run before $target"
      break
    fi
    sleep_us "$delay"
    signal=${target%@*}
    case $signal in
      INT) kill -INT "$pid" 2> /dev/null || true ;;
      INT2)  # the second once the first is no longer pending (two pending SIGINTs are one)
        if kill -INT "$pid" 2> /dev/null; then
          for _ in {1..1000}; do sigint_pending || break; sleep 0.001; done
          kill -INT "$pid" 2> /dev/null || true
        fi ;;
      KILL) kill -KILL "$pid" 2> /dev/null || true ;;
    esac
    set +e; wait "$pid" 2> /dev/null; status=$?; set -e
    pid=
    if (( status == 0 )); then
      miss "$name: process $k: $target (aimed at $aimed) did not stop it: the run finished"
      break
    fi
    # test_metrics.json is the run's last write (temp file, then rename); a
    # SIGKILL after it lands in a finished run on its way out, which the
    # comparison below checks like any other.
    if [[ $signal == KILL && -f $run/test_metrics.json ]]; then
      miss "$name: process $k: $target (aimed at $aimed) landed after the run wrote test_metrics.json, as it exited"
      break
    fi
    classify "$cfg" "$run" "$name" "$target" "$signal" "$status" "$log"
    landed=$((landed + 1)) stops=$((stops + 1))
    count_signal[$signal]=$(( ${count_signal[$signal]:-0} + 1 ))
    count_phase[$phase]=$(( ${count_phase[$phase]:-0} + 1 ))
    say "$landed: $name, process $k: $signal aimed at $aimed landed in: $phase; $note"
  done
  # To the end: the last process resumes from the last checkpoint (or the
  # run finished when a signal missed).
  if [[ ! -f $run/test_metrics.json ]]; then
    k=$((k + 1))
    log=$work/$name.$k.log
    new_process "$cfg" "$run" "$log"
    set +e; wait "$pid"; status=$?; set -e
    pid=
    (( status == 0 )) || fail "$name: the last --resume failed (status $status): $(tail -3 "$log")"
    (( resumed_from < 0 )) || grep -qE "^resumed at epoch [0-9]+, step $resumed_from\$" "$log" ||
      fail "$name: the last process did not resume from step $resumed_from"
  fi
  fingerprint "$run" | diff "$work/$cfg.reference.sha" - > "$work/$name.diff" ||
    fail "$name: the resumed run differs from the uninterrupted one: $(cat "$work/$name.diff")"
  if ls "$run" | grep -q '\.tmp\.'; then fail "$name: temporary files left in $run: $(ls "$run" | grep '\.tmp\.')"; fi
  say "$name: stopped $stops time(s), $k processes, ended with the uninterrupted run's weights, metrics and test metrics"
}

# --- The plan: 50 interruptions a round --------------------------------------
plan=(
  "evals INT@eval5 KILL@eval10 INT@eval15 KILL@eval20 KILL@test"
  "steps INT@50 KILL@100 INT@150 KILL@250 INT@300 KILL@350"
  "evals KILL@eval5 INT@eval10 KILL@eval15 INT@eval20"
  "steps KILL@25 KILL@75 KILL@175 KILL@225 KILL@325"
  "evals KILL@eval5 KILL@eval5 INT@eval5 KILL@after10 INT@after10"
  "steps INT@25 INT@100 INT@175 INT@225 INT@325"
  "evals INT2@eval10 KILL@eval10 INT@eval10 INT2@eval15 KILL@test KILL@test"
  "evals INT@eval15 INT2@eval20 INT@eval20"
  "steps INT2@75 KILL@150 INT2@275 INT@325 KILL@350"
  "evals KILL@eval20 KILL@eval20 KILL@test"
  "evals INT@eval10 KILL@after10 INT@eval20"
)
declare -A chains_of
while (( landed < wanted )); do
  for entry in "${plan[@]}"; do
    (( landed < wanted )) || break
    read -r -a words <<< "$entry"
    cfg=${words[0]}
    chains_of[$cfg]=$(( ${chains_of[$cfg]:-0} + 1 ))
    chain "$cfg" "$cfg${chains_of[$cfg]}" "${words[@]:1}"
  done
done

signals="${count_signal[INT]:-0} SIGINT, ${count_signal[INT2]:-0} SIGINT twice, ${count_signal[KILL]:-0} SIGKILL"
phases=
for p in "mid-step" "mid-epoch evaluation" "end of epoch" "end of run"; do
  phases+="${phases:+, }$p ${count_phase[$p]:-0}"
  if (( wanted >= 50 && ${count_phase[$p]:-0} == 0 )); then fail "no interruption landed in the phase '$p'"; fi
done
now
say "$landed interruptions ($signals; phases: $phases) in $(( ${chains_of[steps]:-0} + ${chains_of[evals]:-0} )) runs," \
    "every one resumed, final weights equal ($misses signal(s) missed; $(( (t - start) / 1000000 )) s)"
say "OK"
