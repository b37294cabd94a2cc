// Which OpenBLAS kernel set a run uses. OpenBLAS (DYNAMIC_ARCH builds) picks
// it while it loads, by CPU model, unless OPENBLAS_CORETYPE names one. A CPU
// newer than the library (Debian 12's 0.3.21 on an Intel Xeon of family 6,
// model 207) is not in its tables, and it falls back to "Prescott": SSE3
// kernels, about a fifth of the AVX-512 ones' rate there (docs/engine.md,
// "OpenBLAS's kernel set"). The `attn` program then asks for the kernels the
// CPU does support, the way it sets its OpenMP wait policy: by setting the
// variable and executing itself again. A variable the user set is left alone.
#pragma once
#include <string>

namespace attn {

// What decides the kernel set to ask for.
struct CpuFeatures {
  bool intel = false;
  bool avx2_fma = false;    // AVX2 and FMA: OpenBLAS's Haswell kernels
  bool avx512_skx = false;  // AVX-512 F, CD, BW, DQ and VL: its SkylakeX kernels
  static CpuFeatures of_this_machine();
};

// The OPENBLAS_CORETYPE to ask for when OpenBLAS chose `chosen`: "SkylakeX"
// (Intel with the AVX-512 subsets those kernels use; AMD's AVX-512 is left to
// OpenBLAS's own tables), "Haswell" (AVX2 and FMA), or "" when OpenBLAS did
// not fall back (chosen is not "Prescott") or the CPU has neither.
std::string openblas_core_for_fallback(const std::string& chosen, const CpuFeatures& cpu);

// When OPENBLAS_CORETYPE is unset and OpenBLAS fell back on this CPU: sets it
// to openblas_core_for_fallback, and ATTN_OPENBLAS_FALLBACK to the kernel set
// OpenBLAS had chosen, for a re-execution to load. Returns whether it set them.
bool prefer_openblas_core_over_fallback();

// "Haswell (OPENBLAS_CORETYPE=Haswell at start)", "SkylakeX (OpenBLAS's
// choice)" or "SkylakeX (set by attn: OpenBLAS fell back to Prescott on
// this CPU)": the kernel set in use and how it was chosen.
std::string blas_core_description();

}  // namespace attn
