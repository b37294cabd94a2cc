#!/usr/bin/env bash
# Packs a CUDA build's attn and attn_tests with the shared libraries they need
# that a bare GPU machine may lack (OpenBLAS and its Fortran runtime; cuBLAS
# and cudart come with the CUDA toolkit there) into one tar.xz, for
# `scripts/gpu_check.sh --prebuilt DIR` on a machine that cannot install
# packages. Unpack with `tar -xJf BUNDLE -C DIR`: DIR/bin holds the programs,
# DIR/lib the libraries (put it on LD_LIBRARY_PATH).
# Usage: scripts/gpu_bundle.sh BUILD_DIR OUTPUT.tar.xz
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: scripts/gpu_bundle.sh BUILD_DIR OUTPUT.tar.xz" >&2
  exit 2
fi
build=$1 output=$2
grep -q '^ATTN_WITH_CUDA_BUILD:INTERNAL=ON' "$build/CMakeCache.txt" 2>/dev/null ||
  { echo "gpu_bundle: $build is not a CUDA build (ATTN_WITH_CUDA_BUILD is not ON in its CMakeCache.txt)" >&2; exit 1; }
grep -q '^ATTN_CUDA_EMULATED_BUILD:INTERNAL=ON' "$build/CMakeCache.txt" &&
  { echo "gpu_bundle: $build is the emulated CUDA build, which runs no GPU" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for program in attn attn_tests; do
  [ -x "$build/bin/$program" ] || { echo "gpu_bundle: $build/bin/$program is missing (build it first)" >&2; exit 1; }
  strip -o "$stage/bin/$program" "$build/bin/$program"
done
# The libraries ldd resolves for these names, links followed, under their sonames.
ldd "$build/bin/attn_tests" | awk '/lib(openblas|gfortran|quadmath)/ {print $1, $3}' |
  while read -r soname path; do cp -L "$path" "$stage/lib/$soname"; done
ls "$stage/lib" | grep -q openblas || { echo "gpu_bundle: attn_tests links no OpenBLAS (ldd)" >&2; exit 1; }
tar -C "$stage" -cJf "$output.tmp" bin lib
mv "$output.tmp" "$output"
echo "gpu_bundle: $output ($(du -h "$output" | cut -f1)): $(cd "$stage" && echo bin/* lib/*)"
