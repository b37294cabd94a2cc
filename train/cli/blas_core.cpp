#include "attn/train/cli/blas_core.h"

#include <cblas.h>

#include <cstdlib>

#include "attn/train/cli/environment_at_start.h"

namespace attn {

namespace {
// Marks a variable attn set itself, so the banner does not credit the user.
constexpr const char* kFallbackMarker = "ATTN_OPENBLAS_FALLBACK";
}  // namespace

CpuFeatures CpuFeatures::of_this_machine() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.intel = __builtin_cpu_is("intel");
  f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512_skx = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                 __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512vl");
#endif
  return f;
}

std::string openblas_core_for_fallback(const std::string& chosen, const CpuFeatures& cpu) {
  if (chosen != "Prescott") return "";
  if (cpu.intel && cpu.avx2_fma && cpu.avx512_skx) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  return "";
}

bool prefer_openblas_core_over_fallback() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return false;
  const std::string chosen = openblas_get_corename();
  const std::string core = openblas_core_for_fallback(chosen, CpuFeatures::of_this_machine());
  if (core.empty()) return false;
  return setenv(kFallbackMarker, chosen.c_str(), 1) == 0 && setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0;
}

std::string blas_core_description() {
  const std::string core = openblas_get_corename();
  const std::string at_start = environment_at_start({"OPENBLAS_CORETYPE"});
  const std::string marker = environment_at_start({kFallbackMarker});
  if (!at_start.empty() && !marker.empty()) {
    const std::string fell_back_to = marker.substr(marker.find('=') + 1);
    return core + " (set by attn: OpenBLAS fell back to " + fell_back_to + " on this CPU)";
  }
  return core + " (" + (at_start.empty() ? "OpenBLAS's choice" : at_start + " at start") + ")";
}

}  // namespace attn
