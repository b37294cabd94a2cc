// Which OpenBLAS kernel set a run used, for benchmark headers. OpenBLAS
// picks it while it loads (DYNAMIC_ARCH builds), unless OPENBLAS_CORETYPE
// names one; the engine leaves that choice alone (docs/benchmarks.md,
// "OpenBLAS's kernels").
#pragma once
#include <string>

namespace attn {

// "Haswell (OPENBLAS_CORETYPE=Haswell at start)" or "SkylakeX (OpenBLAS's
// choice)": the kernel set in use and the variable as OpenBLAS read it.
std::string blas_core_description();

}  // namespace attn
