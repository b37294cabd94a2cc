#!/usr/bin/env bash
# The test command: installs what is missing, builds (Release) and runs the
# whole suite with CTest, then does the same under AddressSanitizer and
# UndefinedBehaviorSanitizer. ATTN_SKIP_SANITIZE=1 skips the second pass.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
attn_install_dependencies
cd "$ATTN_ROOT"
jobs=$(nproc 2>/dev/null || echo 2)

echo "== release build and tests (build/)"
attn_build build -DCMAKE_BUILD_TYPE=Release
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${ATTN_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== address + undefined-behaviour sanitizer build and tests (build-asan/)"
  attn_build build-asan -DCMAKE_BUILD_TYPE=Debug -DATTN_SANITIZE=ON
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
echo "== all tests passed"
