#!/usr/bin/env bash
# Runs every case of tests/bad_inputs/cases.txt against the attn binary: each
# case is a command line fed a bad input, the exit status it must end with and
# a fragment its stderr must contain (the error naming the problem). The
# small inputs the cases read (tiny data folders, model configs with
# overflowing sizes, a trained run and damaged copies of it, safetensors
# files) are made here, in WORK_DIR. Every case runs under `timeout`, so a
# hang fails it (status 124). Prints one line per case and a summary; fails
# if any case's status or message differs. Every output the cases name lies
# in WORK_DIR (a named pipe stands for a device), but run it only against a
# build of this checkout: a binary without the checks may write where an
# empty output path points.
#
# Environment: ATTN_BAD_INPUTS_ONLY=REGEX runs only the cases whose name
# matches; ATTN_BAD_INPUTS_VERBOSE=1 prints every case's stderr, not only a
# failed one's; ATTN_BAD_INPUTS_TIMEOUT=SECONDS bounds each case (60).
#
# Usage: scripts/check_bad_inputs.sh [ATTN_BINARY [WORK_DIR]]
#   (defaults: build/bin/attn and build/check_bad_inputs)
set -euo pipefail  # for making the inputs; the cases run without -e
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in -h|--help) sed -n 2,18p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
attn_given=${1:-$root/build/bin/attn}
work=${2:-$root/build/check_bad_inputs}
cases=$root/tests/bad_inputs/cases.txt
case_timeout=${ATTN_BAD_INPUTS_TIMEOUT:-60}
only=${ATTN_BAD_INPUTS_ONLY:-}
[ -x "$attn_given" ] || { echo "check_bad_inputs: no attn binary at $attn_given" >&2; exit 2; }
attn_bin=$(cd "$(dirname "$attn_given")" && pwd)/$(basename "$attn_given")
rm -rf "$work"
mkdir -p "$work/bin"
# The cases say `attn`: this folder's link comes first on their PATH.
ln -s "$attn_bin" "$work/bin/attn"
export PATH="$work/bin:$PATH" ATTN_CACHE="$work/cache"
cd "$work" || exit 2

fail_setup() { echo "check_bad_inputs: setting up the inputs failed: $*" >&2; exit 2; }

# A named pipe: an output that exists and is not a regular file, like a device.
mkfifo not_a_file

# --- Data folders -----------------------------------------------------------
# tiny/: a two-class label<TAB>text folder the training cases read.
mkdir -p tiny
for split in train dev test; do
  n=20; [ $split = train ] && n=40
  for i in $(seq 1 "$n"); do
    if [ $((i % 2)) = 0 ]; then printf 'pos\tgood fine great film %d\n' "$i"
    else printf 'neg\tbad poor awful film %d\n' "$i"; fi
  done > "tiny/$split.tsv"
done
# train_only/: no test file; empty_test/: an empty one.
mkdir -p empty_test && cp tiny/train.tsv tiny/dev.tsv empty_test/ && : > empty_test/test.tsv
mkdir -p train_only && cp tiny/train.tsv train_only/
# header_row/: a header line as the first row; near_labels/: 'pos' and 'pos ' as two labels.
mkdir -p header_row near_labels
{ printf 'label\ttext\n'; cat tiny/train.tsv; } > header_row/train.tsv
cp tiny/test.tsv header_row/
{ cat tiny/train.tsv; printf 'pos \tgood film\n'; } > near_labels/train.tsv
cp tiny/test.tsv near_labels/
# tag_bio/: B- tags beside a plain tag; tag_on_classify/: a label<TAB>text file as tagging data.
mkdir -p tag_bio tag_on_classify
printf 'the\tO\ncat\tB-ANIMAL\nsat\tVERB\n\n' > tag_bio/train.tsv
cp tag_bio/train.tsv tag_bio/test.tsv
cp tiny/train.tsv tag_on_classify/train.tsv
cp tiny/test.tsv tag_on_classify/test.tsv
# A file where a folder belongs, and the other way round.
printf 'pos\tgood\n' > a_file.tsv

# Copies of the official-format fixtures (data/fixtures/), then damaged.
fixtures=$root/data/fixtures
cp -r "$fixtures/trec" trec_lower
printf 'desc:manner why did it stop ?\n' >> trec_lower/train_5500.label
cp -r "$fixtures/trec" trec_tab
sed -i '1s/^\([A-Z]*:[a-z]*\) /\1\t/' trec_tab/train_5500.label
cp -r "$fixtures/mpqa" mpqa_empty
: > mpqa_empty/mpqa.pos
cp -r "$fixtures/mpqa" mpqa_blank
printf ' \n\n\t\n' > mpqa_blank/mpqa.neg
cp -r "$fixtures/snli" snli_no_test
rm snli_no_test/snli_1.0_test.jsonl
mkdir -p trec_folder_as_file
cp "$fixtures/trec/TREC_10.label" trec_folder_as_file/
mkdir -p trec_folder_as_file/train_5500.label

# --- GloVe files --------------------------------------------------------------
printf '2 4\ngood 0.1 0.2 0.3\nbad 0.4 0.5 0.6\n' > glove_w2v_wrong.txt
printf 'good 0.1 nan 0.3\n' > glove_nan.txt
printf 'good 0.1 1e7 0.3\n' > glove_huge.txt
: > glove_empty.txt

# --- Model configs ---------------------------------------------------------------
big=4611686018427387904  # 2^62
mkdir -p cfg
printf 'encoder = transformer\nhidden = %s\nheads = 1\n' $big > cfg/transformer_hidden_2_62.cfg
printf 'encoder = mstrans\nhidden = %s\n' $big > cfg/mstrans_hidden_2_62.cfg
printf 'encoder = transformer\nhidden = 8\nheads = 1\nffn_dim = %s\n' $big > cfg/transformer_ffn_2_62.cfg
printf 'encoder = mtsa\nhidden = %s\n' $big > cfg/mtsa_hidden_2_62.cfg
printf 'encoder = transformer\nhidden = 9223372036854775808\nheads = 1\n' > cfg/transformer_hidden_2_63.cfg
printf 'encoder = biblosan\nhidden = 8\nblock_len_mode = distribution\nlength_mean = 1e300\n' > cfg/biblosan_length_mean_1e300.cfg
printf 'encoder = mstrans\nhidden = 8\nlayers = 100000000\n' > cfg/mstrans_layers_1e8.cfg
printf 'encoder = transformer\nhidden = 8\nheads = 1\nlayers = 0\n' > cfg/transformer_layers_0.cfg
printf 'encoder = transformer\nhidden = 0\nheads = 1\n' > cfg/transformer_hidden_0.cfg
printf 'encoder = transformer\nhidden = 8\nheads = 3\n' > cfg/transformer_heads_3.cfg
printf 'encoder = lstm\nhidden = 8\n' > cfg/unknown_encoder.cfg
printf 'encoder = transformer\nhiden = 8\n' > cfg/mistyped_key.cfg
printf 'encoder = transformer\nhidden = eight\n' > cfg/hidden_not_int.cfg
printf 'encoder = transformer\nhidden = 8\nheads = 2\n' > cfg/transformer_small.cfg
printf 'encoder = transformer\nhidden = 8\nheads = 2\nffn_dim = 16\n' > cfg/transformer_ffn_16.cfg
printf 'encoder = disan\nhidden = 8\n' > cfg/disan_small.cfg

# --- Safetensors inputs and weights (the format: an 8-byte little-endian header
# length, a JSON header, the raw data) --------------------------------------------
python3 - <<'EOF' || fail_setup "python3 could not write the safetensors files"
import json, struct
def write(path, tensors):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
def f32(values): return struct.pack("<%df" % len(values), *values)
def i64(values): return struct.pack("<%dq" % len(values), *values)
B, n, d = 2, 3, 8
write("x.safetensors", {"x": ("F32", [B, n, d], f32([0.01 * i for i in range(B * n * d)])),
                        "lengths": ("I64", [B], i64([3, 2]))})
write("x_huge.safetensors", {"x": ("F32", [B, n, d], f32([3e38] * (B * n * d)))})
write("x_nan.safetensors", {"x": ("F32", [B, n, d], f32([float("nan")] + [0.0] * (B * n * d - 1)))})
write("x_bad_lengths.safetensors", {"x": ("F32", [B, n, d], f32([0.0] * (B * n * d))),
                                    "lengths": ("I64", [B], i64([4, 1]))})
write("x_2d.safetensors", {"x": ("F32", [n, d], f32([0.0] * (n * d)))})
write("no_x.safetensors", {"y": ("F32", [1], f32([0.0]))})
EOF
printf 'not a safetensors file' > garbage.safetensors

# --- A trained run and damaged copies of it ----------------------------------------
tiny_train=(--data tiny --epochs 1 --batch 8 --embedding-dim 8 --hidden 8 --max-len 16 --quiet)
attn train --model mtsa --run runs/ok "${tiny_train[@]}" > setup_train.log 2>&1 ||
  fail_setup "attn train of the tiny run: $(tail -3 setup_train.log)"
# wmt14/ and runs/translate: the translation cases' data and a one-step translation run.
cp -r "$fixtures/wmt14" wmt14
attn train --task translate --data wmt14 --run runs/translate --max-steps 1 --batch 64 --hidden 8 --heads 2 \
  --bpe-merges 50 --quiet > setup_translate.log 2>&1 ||
  fail_setup "attn train --task translate of the tiny run: $(tail -3 setup_translate.log)"
damaged() { rm -rf "runs/$1" && cp -r runs/ok "runs/$1"; }
damaged empty_run_cfg; : > runs/empty_run_cfg/run.cfg
damaged tampered_batch; sed -i 's/^batch = .*/batch = eight/' runs/tampered_batch/run.cfg
damaged tampered_max_len; sed -i 's/^max_len = .*/max_len = ten/' runs/tampered_max_len/run.cfg
damaged empty_labels; : > runs/empty_labels/labels.txt
damaged other_model_cfg; cp cfg/transformer_small.cfg runs/other_model_cfg/model.cfg
damaged empty_vocab; : > runs/empty_vocab/vocab.txt
damaged truncated_weights; head -c 200 runs/ok/best.safetensors > runs/truncated_weights/best.safetensors
damaged no_weights; rm runs/no_weights/best.safetensors
damaged empty_metrics; : > runs/empty_metrics/metrics.jsonl
damaged corrupted_weights
damaged nonfinite_weights
# A forward model's weights, made by attn forward itself.
attn forward --model cfg/transformer_small.cfg --weights w_small.safetensors --init-weights \
  --input x.safetensors --output y_small.safetensors > setup_forward.log 2>&1 ||
  fail_setup "attn forward --init-weights: $(tail -3 setup_forward.log)"
cp w_small.safetensors w_copy.safetensors
# Damaged weights: a NaN where the checksum still names the original data
# (corrupted), a NaN in a file without a checksum (as files written before
# checksums were; only the finiteness check can stop it), every value 3e38.
python3 - <<'EOF' || fail_setup "python3 could not write the damaged weights"
import json, struct
def read(path):
    blob = open(path, "rb").read()
    size = struct.unpack("<Q", blob[:8])[0]
    return json.loads(blob[8:8 + size]), blob[8 + size:]
def write(path, header, data):
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
def first_f32(header):
    return next(v for k, v in header.items() if k != "__metadata__" and v["dtype"] == "F32")
def with_nan(header, data):
    a = first_f32(header)["data_offsets"][0]
    return data[:a] + struct.pack("<f", float("nan")) + data[a + 4:]
header, data = read("runs/ok/best.safetensors")
write("runs/corrupted_weights/best.safetensors", header, with_nan(header, data))
header["__metadata__"] = {k: v for k, v in header["__metadata__"].items() if "checksum" not in k}
write("runs/nonfinite_weights/best.safetensors", header, with_nan(header, data))
header, data = read("w_small.safetensors")
write("w_nan.safetensors", header, with_nan(header, data))
huge = bytearray(data)
for k, v in header.items():
    if k != "__metadata__" and v["dtype"] == "F32":
        a, b = v["data_offsets"]
        huge[a:b] = struct.pack("<%df" % ((b - a) // 4), *([3e38] * ((b - a) // 4)))
write("w_huge.safetensors", header, bytes(huge))
EOF

# --- The cases ------------------------------------------------------------------------
# Each line: NAME | EXIT STATUS | FRAGMENT OF STDERR | COMMAND (the rest of the line, run by bash in WORK_DIR).
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
set +e
total=0 failed=0 failures=() names=()
SECONDS=0
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  IFS='|' read -r name status fragment command <<< "$line"
  name=$(trim "$name") status=$(trim "$status") fragment=$(trim "$fragment") command=$(trim "$command")
  if [ -z "$name" ] || [ -z "$fragment" ] || [ -z "$command" ] || ! [[ $status =~ ^[0-9]+$ ]]; then
    echo "check_bad_inputs: malformed line in $cases: $line" >&2; exit 2
  fi
  case " ${names[*]-} " in *" $name "*) echo "check_bad_inputs: case $name appears twice in $cases" >&2; exit 2 ;; esac
  names+=("$name")
  if [ -n "$only" ] && ! [[ $name =~ $only ]]; then continue; fi
  total=$((total + 1))
  timeout -k 5 "$case_timeout" bash -c "$command" < /dev/null > "case.out" 2> "case.err"
  got=$?
  problem=""
  if [ "$got" = 124 ] || [ "$got" = 137 ]; then problem="did not finish within ${case_timeout}s"
  elif [ "$got" -gt 128 ] && [ "$status" -le 128 ]; then problem="killed by signal $((got - 128)) (a crash), expected exit status $status"
  elif [ "$got" != "$status" ]; then problem="exit status $got, expected $status"
  fi
  if ! grep -qF -- "$fragment" case.err; then
    problem="${problem:+$problem; }stderr lacks '$fragment'"
  fi
  if [ -z "$problem" ]; then
    printf 'ok    %-44s exit %s\n' "$name" "$got"
    [ "${ATTN_BAD_INPUTS_VERBOSE:-0}" = 1 ] && sed 's/^/      stderr: /' case.err
  else
    failed=$((failed + 1)) failures+=("$name")
    printf 'FAIL  %-44s %s\n      command: %s\n' "$name" "$problem" "$command"
    sed 's/^/      stderr: /' case.err | tail -5
  fi
done < "$cases"
seconds=$SECONDS
if [ "$failed" = 0 ]; then
  echo "check_bad_inputs: all $total cases passed (${seconds}s)"
else
  echo "check_bad_inputs: $failed of $total cases failed: ${failures[*]}"
  exit 1
fi
