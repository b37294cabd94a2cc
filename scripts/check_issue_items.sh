#!/usr/bin/env bash
# Checks of the "No surprises" issue's items 3, 4, 9, 10, 14 and 16 through
# the command line alone, so that the same checks run against any build of
# `attn`: each must fail on a binary from before the issue was fixed and pass
# on one after. Only flags that both kinds of binary know are used, except
# where a missing flag or command is itself the item (14).
#
#   3   Ctrl-C during the step-10 evaluation (the end of epoch 1) and SIGKILL
#       during an end-of-epoch evaluation leave a checkpoint that --resume
#       continues to the end.
#   4   A second `attn train --resume` on a folder that a running train holds
#       is refused, naming the holder's process id.
#   9   With --eval-every not dividing an epoch, the end of every epoch and
#       of the run is evaluated.
#   10  A relatedness run whose dev predictions are constant (no Pearson r)
#       writes JSON without inf or nan, leaves best.safetensors, and
#       `attn eval` reads it.
#   14  --version, `attn help CMD`, value types and per-model defaults in the
#       help, an example per command, "did you mean", `attn presets NAME`
#       and a preset's resolved values in `attn train --preset NAME --help`.
#   16  `attn explain` sizes its SVG to a short sentence, draws a colour
#       scale and keeps long tokens whole.
#
# Each item prints "ok item N: ..." or "FAIL item N: ..."; the exit status is
# non-zero when any item failed.
# Usage: scripts/check_issue_items.sh ATTN_BINARY WORK_DIR [ITEM...]
# CTest runs it as cli.issue_items.
set -uo pipefail
export LC_ALL=C OMP_NUM_THREADS=1
if (( $# < 2 )); then
  echo "usage: $0 ATTN_BINARY WORK_DIR [ITEM...]" >&2
  exit 2
fi
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$2
shift 2
items=("$@")
(( ${#items[@]} )) || items=(3 4 9 10 14 16)
[[ -x $attn ]] || { echo "no attn binary at $attn" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

pid=
# A check that fails halfway leaves no process behind.
trap '[[ -z $pid ]] || kill -9 "$pid" 2> /dev/null || true' EXIT

# The tiny model every run uses: a few hundred parameters, milliseconds a step.
model=(--model mtsa --hidden 8 --embedding-dim 8 --head-hidden 8 --heads 2 --max-len 8 --min-count 1)

# label<TAB>text, "alpha" for 1 and "beta" for 0, from a fixed seed.
make_split() {  # rows seed file
  awk -v rows="$1" -v seed="$2" 'BEGIN {
    srand(seed); split("the a cat dog sat ran on mat congratulations small", w, " ");
    for (i = 0; i < rows; i++) {
      label = int(rand() * 2); line = label ? "alpha" : "beta";
      for (j = 0; j < 5; j++) line = line " " w[1 + int(rand() * 10)];
      print label "\t" line;
    }
  }' > "$3"
}
make_data() {  # dir train_rows dev_rows
  [[ -d $1 ]] && return 0
  mkdir -p "$1"
  make_split "$2" 1 "$1/train.tsv"
  make_split "$3" 2 "$1/dev.tsv"
  make_split 40 3 "$1/test.tsv"
}

# The step in a checkpoint's header; -1 without a checkpoint.
checkpoint_step() {  # file
  local header=
  [[ -f $1 ]] || { echo -1; return; }
  read -r -N 2048 header < "$1" || true
  if [[ $header =~ \"step\":\"([0-9]+)\" ]]; then echo "${BASH_REMATCH[1]}"; else echo -1; fi
}

# The steps of the dev evaluations in a metrics.jsonl, one line each.
evaluated_steps() {  # metrics.jsonl
  [[ -f $1 ]] || return 0
  sed -nE 's/.*"step": *([0-9]+).*/\1/p' "$1"
}

# Waits until the file holds a line matching the pattern while process $pid
# runs; false when the process ended first or after 120 s.
wait_for_line() {  # file pattern
  local tries
  for ((tries = 0; tries < 12000; ++tries)); do
    grep -qE -- "$2" "$1" 2> /dev/null && return 0
    kill -0 "$pid" 2> /dev/null || return 1
    sleep 0.01
  done
  return 1
}

ok() { echo "ok item $1: $2"; }
failed=0
fail() { echo "FAIL item $1: $2"; failed=1; }

# --- 3: a checkpoint said to be resumable resumes ---------------------------
# 40 training lines in batches of 4 are 10 steps an epoch; 30,000 dev lines
# make every evaluation take long (seconds) against the milliseconds of a
# step, so a signal sent shortly after the progress line of step 10 lands in
# the evaluation at the end of epoch 1. A signal that landed elsewhere is
# reported as such, not as the item's failure or success.
interrupt_then_resume() {  # name signal extra_flags...: sets why on failure
  local name=$1 signal=$2 run=$work/item3/$1 status step
  shift 2
  local flags=(--data "$work/item3/data" "${model[@]}" --batch 4 --epochs 2 "$@")
  "$attn" train "${flags[@]}" --run "$run" > "$run.out" 2> "$run.log" &
  pid=$!
  if ! wait_for_line "$run.log" ' 10/20 loss'; then
    wait "$pid"; pid=
    why="$name: the run ended before step 10 (log: $(tail -2 "$run.log"))"
    return 1
  fi
  sleep 0.3
  kill "-$signal" "$pid"
  wait "$pid" 2> /dev/null; status=$?
  pid=
  step=$(checkpoint_step "$run/last.safetensors")
  if [[ $signal == INT ]]; then
    if ! grep -q 'saved a resumable checkpoint' "$run.log"; then
      why="$name: SIGINT in the step-10 evaluation saved no checkpoint (status $status): $(tail -2 "$run.log")"
      return 1
    fi
    # Ctrl-C is acted on once the evaluation it lands in is over: at step 10.
    if [[ $step != 10 ]]; then
      why="$name: the signal missed the step-10 evaluation (the checkpoint is at step $step; a loaded machine?)"
      return 1
    fi
  else
    if (( status != 137 )) || evaluated_steps "$run/metrics.jsonl" | grep -qx 10; then
      why="$name: the signal missed the end-of-epoch evaluation (status $status; evaluated steps:"
      why+=" $(evaluated_steps "$run/metrics.jsonl" | tr '\n' ' '))"
      return 1
    fi
  fi
  if ! "$attn" train "${flags[@]}" --run "$run" --resume > "$run.resumed.out" 2> "$run.resumed.log"; then
    why="$name: --resume after the signal (checkpoint at step $step) failed: $(grep -m1 'error' "$run.resumed.log")"
    return 1
  fi
  if [[ ! -f $run/test_metrics.json ]]; then
    why="$name: the resumed run finished without test_metrics.json"
    return 1
  fi
  why=
}
item3() {
  mkdir -p "$work/item3"
  make_data "$work/item3/data" 40 30000
  local why problems=()
  interrupt_then_resume sigint INT --eval-every 10 --checkpoint-every 50 || problems+=("$why")
  interrupt_then_resume sigkill KILL --checkpoint-every 5 || problems+=("$why")
  if (( ${#problems[@]} )); then
    local p
    for p in "${problems[@]}"; do fail 3 "$p"; done
  else
    ok 3 "SIGINT in the step-10 evaluation and SIGKILL in the end-of-epoch evaluation both resumed to the end"
  fi
}

# --- 4: one writer per run folder --------------------------------------------
# The first writer is paused once it has a checkpoint (it keeps the folder
# meanwhile), so it is certainly running while the second one starts.
item4() {
  local dir=$work/item4 run=$work/item4/run status first tries
  mkdir -p "$dir"
  make_data "$dir/data" 40 3000
  local flags=(--data "$dir/data" "${model[@]}" --batch 4 --epochs 2 --checkpoint-every 1 --quiet)
  "$attn" train "${flags[@]}" --run "$run" > "$dir/first.out" 2> "$dir/first.log" &
  pid=$!
  first=$pid
  for ((tries = 0; tries < 12000; ++tries)); do
    [[ -f $run/last.safetensors ]] && break
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.01
  done
  if ! kill -STOP "$pid" 2> /dev/null || [[ ! -f $run/last.safetensors ]]; then
    wait "$pid"; pid=
    fail 4 "the first run ended before it could be paused with a checkpoint: $(tail -2 "$dir/first.log")"
    return
  fi
  "$attn" train "${flags[@]}" --run "$run" --resume > "$dir/second.out" 2> "$dir/second.log"
  status=$?
  kill -CONT "$pid"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  pid=
  if (( status == 0 )); then
    fail 4 "a second 'attn train --resume' ran in the folder of running process $first and exited 0"
  elif ! grep -q "process $first" "$dir/second.log"; then
    fail 4 "the second writer failed (status $status) without naming process $first: $(tail -2 "$dir/second.log")"
  else
    ok 4 "the second writer was refused (status $status): $(grep -m1 "process $first" "$dir/second.log")"
  fi
}

# --- 9: the last steps are evaluated -----------------------------------------
# 37 lines in batches of 4 are 10 steps an epoch (the last of one line); with
# --eval-every 4 over 3 epochs the end of epoch 1 (step 10) and of the run
# (step 30) lie between two --eval-every evaluations.
item9() {
  local dir=$work/item9 steps missing="" s
  mkdir -p "$dir"
  make_data "$dir/data" 37 40
  if ! "$attn" train --data "$dir/data" "${model[@]}" --batch 4 --epochs 3 --eval-every 4 --quiet \
       --run "$dir/run" > "$dir/out" 2> "$dir/log"; then
    fail 9 "the run failed: $(tail -2 "$dir/log")"
    return
  fi
  steps=$(evaluated_steps "$dir/run/metrics.jsonl" | tr '\n' ' ')
  for s in 10 20 30; do
    grep -qw "$s" <<< "$steps" || missing+=" $s"
  done
  if [[ -n $missing ]]; then
    fail 9 "the ends of epochs and of the run at step(s)$missing were not evaluated (evaluated: $steps)"
  else
    ok 9 "evaluated at steps $steps"
  fi
}

# --- 10: a relatedness run without a Pearson r --------------------------------
# The dev pairs are one pair of sentences repeated with different scores:
# every dev prediction is the same number, so the dev Pearson r is undefined.
sick_split() {  # rows seed file [constant]
  awk -v rows="$1" -v seed="$2" -v constant="${4:-0}" 'BEGIN {
    srand(seed); split("a the man woman dog cat plays runs sings reads outside book", w, " ");
    print "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment";
    for (i = 1; i <= rows; i++) {
      a = "a man plays outside ."; b = "the dog sings .";
      if (!constant) {
        a = w[1 + int(rand() * 12)] " " w[1 + int(rand() * 12)] " " w[1 + int(rand() * 12)] " .";
        b = w[1 + int(rand() * 12)] " " w[1 + int(rand() * 12)] " " w[1 + int(rand() * 12)] " .";
      }
      printf "%d\t%s\t%s\t%.1f\tNEUTRAL\n", i, a, b, 1 + (i % 9) * 0.5;
    }
  }' > "$3"
}
strict_json='
import json, sys
def refuse(constant):
    raise ValueError("non-JSON number " + constant)
for name in sys.argv[1:]:
    for number, line in enumerate(open(name), 1):
        try:
            json.loads(line, parse_constant=refuse)
        except ValueError as e:
            print("%s line %d is not JSON (%s): %s" % (name, number, e, line.strip()))
            sys.exit(1)
'
item10() {
  local dir=$work/item10 run=$work/item10/run problems=() why
  mkdir -p "$dir/data"
  sick_split 24 1 "$dir/data/train.txt"
  sick_split 8 2 "$dir/data/dev.txt" constant
  sick_split 8 3 "$dir/data/test.txt"
  if ! "$attn" train --task relatedness --data "$dir/data" "${model[@]}" --batch 4 --epochs 2 --quiet \
       --run "$run" > "$dir/out" 2> "$dir/log"; then
    fail 10 "the run failed: $(tail -2 "$dir/log")"
    return
  fi
  why=$(python3 -c "$strict_json" "$dir/out" "$run/metrics.jsonl" "$run/test_metrics.json" 2>&1) || problems+=("$why")
  if [[ ! -f $run/best.safetensors ]]; then
    problems+=("no best.safetensors, and the run did not say why: $(tail -1 "$dir/log")")
  fi
  if ! "$attn" eval --run "$run" > "$dir/eval.out" 2> "$dir/eval.log"; then
    problems+=("attn eval failed: $(tail -1 "$dir/eval.log")")
  fi
  if (( ${#problems[@]} )); then
    local p
    for p in "${problems[@]}"; do fail 10 "$p"; done
  else
    ok 10 "strict JSON everywhere ($(grep -o '"best_dev_pearson": [^,]*' "$dir/out")), a best checkpoint, attn eval works"
  fi
}

# --- 14: help ----------------------------------------------------------------
item14() {
  local dir=$work/item14 problems=() out
  mkdir -p "$dir"
  out=$("$attn" --version 2> /dev/null) && [[ $out == attn\ * ]] || problems+=("'attn --version' does not print the version")
  out=$("$attn" help train 2> /dev/null) && [[ $out == *"usage: attn train"* ]] ||
    problems+=("'attn help train' does not show train's help")
  "$attn" train --help > "$dir/train.help" 2>&1
  grep -qE -- '--epochs INT ' "$dir/train.help" && grep -qE -- '--lr FLOAT ' "$dir/train.help" &&
    grep -qE -- '--run PATH ' "$dir/train.help" ||
    problems+=("'attn train --help' does not name value types (--epochs INT, --lr FLOAT, --run PATH)")
  grep -qE -- '--heads .*transformer 10' "$dir/train.help" ||
    problems+=("'attn train --help' does not give each model's own default of --heads")
  local command
  for command in train eval predict explain plot presets; do
    # The whole help is read before it is searched (grep -q would stop the writer with SIGPIPE).
    out=$("$attn" "$command" --help 2>&1)
    grep -q '^examples:' <<< "$out" || problems+=("'attn $command --help' shows no example")
  done
  "$attn" train --epoch 1 > /dev/null 2> "$dir/flag.log"
  grep -q "did you mean '--epochs'" "$dir/flag.log" ||
    problems+=("a mistyped flag (--epoch) gets no \"did you mean\": $(head -1 "$dir/flag.log")")
  "$attn" trian > /dev/null 2> "$dir/command.log"
  grep -q "did you mean 'train'" "$dir/command.log" ||
    problems+=("a mistyped command (trian) gets no \"did you mean\": $(head -1 "$dir/command.log")")
  "$attn" presets mtsa-sst5 > "$dir/preset.out" 2>&1
  # One preset: its own heading line ("NAME: title") and no other.
  if [[ $(grep -cE '^[a-z0-9-]+: ' "$dir/preset.out") != 1 ]] || ! grep -q '^mtsa-sst5: ' "$dir/preset.out"; then
    problems+=("'attn presets mtsa-sst5' does not show that one preset alone")
  fi
  # The preset's values replace the plain defaults in the help.
  "$attn" train --preset mtsa-sst5 --help > "$dir/preset.help" 2>&1
  local flag same=
  for flag in epochs lr; do
    [[ $(grep -E -- "^  --$flag " "$dir/preset.help") != "$(grep -E -- "^  --$flag " "$dir/train.help")" ]] ||
      same+=" --$flag"
  done
  [[ -z $same ]] || problems+=("'attn train --preset mtsa-sst5 --help' shows the plain defaults of$same")
  if (( ${#problems[@]} )); then
    local p
    for p in "${problems[@]}"; do fail 14 "$p"; done
  else
    ok 14 "--version, help CMD, value types, per-model defaults, examples, did you mean, presets NAME, preset help"
  fi
}

# --- 16: the explain picture -------------------------------------------------
item16() {
  local dir=$work/item16 svg width problems=()
  mkdir -p "$dir"
  make_data "$dir/data" 40 40
  if ! "$attn" train --data "$dir/data" "${model[@]}" --batch 4 --epochs 1 --quiet --run "$dir/run" \
       > "$dir/train.out" 2> "$dir/train.log"; then
    fail 16 "the run failed: $(tail -2 "$dir/train.log")"
    return
  fi
  if ! "$attn" explain --run "$dir/run" --text "congratulations the cat sat" --out "$dir/pictures" \
       > "$dir/explain.out" 2> "$dir/explain.log"; then
    fail 16 "attn explain failed: $(tail -2 "$dir/explain.log")"
    return
  fi
  svg=$dir/pictures/sentence_1.svg
  width=$(grep -oE '<svg[^>]* width="[0-9.]+' "$svg" | head -1 | sed -E 's/.*width="//')
  if [[ -z $width ]]; then
    problems+=("the SVG has no width")
  elif ! awk -v w="$width" 'BEGIN { exit !(w < 1000) }'; then
    problems+=("the SVG of a 4-token sentence is $width px wide")
  fi
  grep -q 'class="colour-scale"' "$svg" || problems+=("the SVG has no colour scale")
  grep -q '>congratulations</text>' "$svg" ||
    problems+=("the token 'congratulations' is not shown whole (labels: $(grep -oE '>congrat[^<]*<' "$svg" | sort -u | tr '\n' ' '))")
  if (( ${#problems[@]} )); then
    local p
    for p in "${problems[@]}"; do fail 16 "$p"; done
  else
    ok 16 "a 4-token sentence's SVG is $width px wide, with a colour scale and 'congratulations' whole"
  fi
}

for item in "${items[@]}"; do
  case $item in
    3 | 4 | 9 | 10 | 14 | 16) "item$item" ;;
    *) echo "unknown item '$item' (known: 3 4 9 10 14 16)" >&2; exit 2 ;;
  esac
done
exit "$failed"
