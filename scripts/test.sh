#!/usr/bin/env bash
# The test command: installs what is missing, builds (Release) and runs the
# whole suite with CTest, then does the same under AddressSanitizer and
# UndefinedBehaviorSanitizer. ATTN_SKIP_SANITIZE=1 skips the sanitizer pass.
# On a CPU with AVX-512 the Release suite also runs with ATTN_AVX512=off, the
# kernels a CPU without AVX-512 takes.
#
# The Release build has the CUDA backend whenever nvcc is found (CMake's
# ATTN_CUDA=AUTO); without a GPU its CUDA tests report themselves skipped.
# ATTN_CUDA=OFF in the environment makes the Release build CPU-only.
#
# The sanitizer build is the emulated CUDA build (-DATTN_CUDA=EMULATE,
# docs/gpu.md): every CUDA kernel runs on the CPU under ASan and UBSan, so no
# CUDA test may skip there. The whole suite runs with the natural thread
# order (seed 0), the CUDA-vs-CPU tests again under a shuffled schedule; the
# script prints how many CUDA tests ran and fails if one was skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
attn_install_dependencies
cd "$ATTN_ROOT"
jobs=$(nproc 2>/dev/null || echo 2)

echo "== release build and tests (build/)"
attn_build build -DCMAKE_BUILD_TYPE=Release -DATTN_CUDA="${ATTN_CUDA:-AUTO}"
ctest --test-dir build --output-on-failure -j"$jobs"
release_cuda=$(grep -q '^ATTN_WITH_CUDA_BUILD:INTERNAL=ON' build/CMakeCache.txt && echo "with CUDA" || echo "CPU only")
mpi_tests=$(ctest --test-dir build -N -R '^mpi\.' | grep -c 'Test *#' || true)
[ "$mpi_tests" -gt 0 ] || { echo "error: the Release build has no data-parallel tests (was MPI not found?)" >&2; exit 1; }
release_cuda="$release_cuda, MPI ($mpi_tests data-parallel tests)"
echo "== release build: $release_cuda"

# A CPU without AVX-512 runs the portable kernels (OpenBLAS, unfused bias and
# relu passes). On a CPU with AVX-512 the suite runs a second time with those
# kernels switched off, so both paths are checked wherever CI runs. The
# scripted CLI checks (which flags and files are refused, what a run folder
# holds, resuming at each phase, every preset for two steps) are left out of
# that second run: they exercise the command line, and the kernels they call
# are the ones the unit tests check on both paths.
cli_script_checks='^(presets\.|cli\.bad_inputs|cli\.issue_items|cli\.resume_|install\.|pictures\.)'
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  echo "== release tests again with the AVX-512 kernels switched off (ATTN_AVX512=off)"
  ATTN_AVX512=off ctest --test-dir build --output-on-failure -j"$jobs" -E "$cli_script_checks"
  cpu_paths="AVX-512 and portable kernels"
else
  cpu_paths="portable kernels (this CPU has no AVX-512F)"
fi

# The CUDA tests: suites named Cuda* (parameterised ones after a prefix/),
# and the no-device checks the emulated build runs without its device.
cuda_test_pattern='Test +#[0-9]+: (no_device\.)?([A-Za-z0-9_]+/)?Cuda'
# The CUDA-vs-CPU comparisons, re-run under a second schedule.
cuda_vs_cpu_tests='^(CudaRegistry/|CudaLaunchShapes|Encoders/CudaModels|CudaTraining|CudaCopies|CudaMatmul|CudaModule|CudaEmulation|CudaCrf|CudaCharCnn)'

sanitizer_cuda="skipped"
if [ "${ATTN_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== address + undefined-behaviour sanitizer build with the emulated CUDA backend, and tests (build-asan/)"
  # With MPI, for the NCCL stand-in (CTest nccl.emulated_sums: the NCCL path
  # on 2 processes). The other data-parallel runs (CTests mpi.*) run in the
  # Release suite and are left out here.
  attn_build build-asan -DCMAKE_BUILD_TYPE=Debug -DATTN_SANITIZE=ON -DATTN_CUDA=EMULATE -DATTN_MPI=ON
  export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # Runs ctest under one schedule seed and counts the CUDA tests: every one
  # must have run and passed. Sets `ran`.
  run_emulated() {
    local seed=$1 what=$2
    shift 2
    local log=build-asan/ctest-seed$seed.log
    ATTN_CUDA_EMULATE_SEED=$seed ctest --test-dir build-asan --output-on-failure -j"$jobs" "$@" | tee "$log"
    ran=$(grep -E "$cuda_test_pattern" "$log" | grep -c ' Passed ' || true)
    local not_passed
    not_passed=$(grep -E "$cuda_test_pattern" "$log" | grep -vc ' Passed ' || true)
    echo "== emulated CUDA, seed $seed: $ran $what passed, $not_passed not passed"
    if [ "$not_passed" != "0" ] || [ "$ran" = "0" ]; then
      echo "error: in the emulated CUDA build every CUDA test must run and pass" >&2
      exit 1
    fi
  }
  run_emulated 0 "CUDA tests" -E '^mpi\.'
  grep -q 'nccl.emulated_sums .*Passed' build-asan/ctest-seed0.log ||
    { echo "error: the emulated build did not run the NCCL path (nccl.emulated_sums)" >&2; exit 1; }
  ran0=$ran
  run_emulated 2 "CUDA-vs-CPU tests (shuffled schedule)" -R "$cuda_vs_cpu_tests"
  sanitizer_cuda="emulated CUDA, $ran0 CUDA tests (seed 0) + $ran (seed 2)"
fi
echo "== all tests passed (release build: $release_cuda, $cpu_paths; sanitizer build: $sanitizer_cuda)"
