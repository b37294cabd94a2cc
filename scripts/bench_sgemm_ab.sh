#!/usr/bin/env bash
# Times another revision's float32 GEMM kernel (ops/sgemm_avx512.cpp at REV,
# "va") against this checkout's ("vb") in one process, alternating the two
# on the models' product shapes (scripts/bench_sgemm_ab.cpp), one thread.
# Needs this checkout's CPU build (build/, for the engine library and the
# generated headers) and a CPU with AVX-512F.
#
#   scripts/bench_sgemm_ab.sh REV
#   scripts/bench_sgemm_ab.sh 54e2f8b
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = --help ]; then
  sed -n 2,9p "$0" | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0 || exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
for need in "$root/build/include" "$root/build/libattn_engine.a"; do
  [ -e "$need" ] || { echo "bench_sgemm_ab: $need is missing: build this checkout first (cmake --build build)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$root" show "$1:ops/sgemm_avx512.cpp" > "$work/a.cpp" ||
  { echo "bench_sgemm_ab: no ops/sgemm_avx512.cpp at revision '$1'" >&2; exit 1; }
cp "$root/ops/sgemm_avx512.cpp" "$work/b.cpp"
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
g++ -O2 -std=c++17 -I"$root/build/include" -I"$work" "$root/scripts/bench_sgemm_ab.cpp" \
  "$root/build/libattn_engine.a" -o "$work/bench_sgemm_ab"
echo "va = $1, vb = this checkout ($(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet -- ops/sgemm_avx512.cpp || echo ', modified'))"
OMP_NUM_THREADS=1 "$work/bench_sgemm_ab"
