#!/usr/bin/env bash
# Times another revision's float32 GEMM kernel (ops/cpu/sgemm_avx512.cpp at REV,
# "va") against this checkout's ("vb") in one process, alternating the two
# on the models' product shapes (scripts/bench_sgemm_ab.cpp), one thread.
# Needs a CPU build of this checkout (BUILD, default build/, for the util
# and engine libraries and the generated headers) and, to time, a CPU with
# AVX-512F. --build-only compiles the harness and stops (a CTest test does
# that, so the harness cannot rot).
#
#   scripts/bench_sgemm_ab.sh [--build-only] REV [BUILD]
#   scripts/bench_sgemm_ab.sh HEAD~3
set -euo pipefail
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = --help ]; then
  sed -n 2,11p "$0" | sed 's/^# \{0,1\}//'
  [ "${1:-}" = --help ] && exit 0 || exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$root/build}
for need in "$build/include" "$build/libattn_engine.a" "$build/libattn_util.a"; do
  [ -e "$need" ] || { echo "bench_sgemm_ab: $need is missing: build this checkout first (cmake --build build)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The kernel's path at REV (it moved into ops/cpu/ with the ops reorganisation).
git -C "$root" show "$1:ops/cpu/sgemm_avx512.cpp" > "$work/a.cpp" 2>/dev/null ||
  git -C "$root" show "$1:ops/sgemm_avx512.cpp" > "$work/a.cpp" 2>/dev/null ||
  { echo "bench_sgemm_ab: no sgemm_avx512.cpp at revision '$1'" >&2; exit 1; }
# An older revision includes its headers by their old paths.
sed -i -e 's#"attn/ops/sgemm_avx512.h"#"attn/ops/cpu/sgemm_avx512.h"#' \
  -e 's#"attn/ops/panel_copies_avx512.h"#"attn/ops/cpu/panel_copies_avx512.h"#' \
  -e 's#"attn/ops/unary_math.h"#"attn/ops/unary/unary_math.h"#' "$work/a.cpp"
cp "$root/ops/cpu/sgemm_avx512.cpp" "$work/b.cpp"
# Each version's definitions go into a namespace of their own inside attn.
for side in a b; do
  python3 - "$work/$side.cpp" "v$side" "$work/v$side.cpp" <<'PY'
import sys
src, ns, out = sys.argv[1:]
text = open(src).read()
first = text.index('namespace attn {')
text = text[:first] + 'namespace attn { namespace %s {' % ns + text[first + len('namespace attn {'):]
last = text.rindex('}  // namespace attn')
open(out, 'w').write(text[:last] + '} }  // namespace attn::%s\n' % ns)
PY
done
g++ -O2 -std=c++17 -I"$build/include" -I"$work" "$root/scripts/bench_sgemm_ab.cpp" \
  "$build/libattn_engine.a" "$build/libattn_util.a" -fopenmp -o "$work/bench_sgemm_ab"
if [ "$build_only" = 1 ]; then echo "bench_sgemm_ab: built (va = $1)"; exit 0; fi
echo "va = $1, vb = this checkout ($(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet -- ops/cpu/sgemm_avx512.cpp || echo ', modified'))"
OMP_NUM_THREADS=1 "$work/bench_sgemm_ab"
