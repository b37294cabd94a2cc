#!/usr/bin/env bash
# The test command: installs what is missing, builds (Release) and runs the
# whole suite with CTest, then does the same under AddressSanitizer and
# UndefinedBehaviorSanitizer. ATTN_SKIP_SANITIZE=1 skips the second pass.
#
# The Release build has the CUDA backend whenever nvcc is found (CMake's
# ATTN_CUDA=AUTO); without a GPU its CUDA tests report themselves skipped.
# The sanitizer build is always CPU-only (-DATTN_CUDA=OFF): ASan and the CUDA
# runtime do not mix well, and it halves CI time. ATTN_CUDA=OFF in the
# environment makes the Release build CPU-only too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
attn_install_dependencies
cd "$ATTN_ROOT"
jobs=$(nproc 2>/dev/null || echo 2)

echo "== release build and tests (build/)"
attn_build build -DCMAKE_BUILD_TYPE=Release -DATTN_CUDA="${ATTN_CUDA:-AUTO}"
ctest --test-dir build --output-on-failure -j"$jobs"
release_cuda=$(grep -q '^ATTN_WITH_CUDA_BUILD:INTERNAL=ON' build/CMakeCache.txt && echo "with CUDA" || echo "CPU only")
echo "== release build: $release_cuda"

sanitizer_cuda="skipped"
if [ "${ATTN_SKIP_SANITIZE:-0}" != "1" ]; then
  sanitizer_cuda="CPU only"
  echo "== address + undefined-behaviour sanitizer build and tests (build-asan/)"
  attn_build build-asan -DCMAKE_BUILD_TYPE=Debug -DATTN_SANITIZE=ON -DATTN_CUDA=OFF
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
echo "== all tests passed (release build: $release_cuda; sanitizer build: $sanitizer_cuda)"
