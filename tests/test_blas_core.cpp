// The `attn` program's choice of OpenBLAS kernels (train/cli/blas_core.h):
// it asks for other kernels only where OpenBLAS fell back to its generic set,
// and never for more than the CPU supports. The variable a user sets is kept
// (CTest cli.user_blas_core_is_kept).
#include <cblas.h>
#include <gtest/gtest.h>

#include <string>

#include "attn/train/cli/blas_core.h"

namespace attn {
namespace {

CpuFeatures cpu(bool intel, bool avx2_fma, bool avx512_skx) {
  CpuFeatures f;
  f.intel = intel;
  f.avx2_fma = avx2_fma;
  f.avx512_skx = avx512_skx;
  return f;
}

TEST(OpenBlasCore, AFallbackOnAnIntelCpuWithAvx512GetsTheSkylakeXKernels) {
  EXPECT_EQ(openblas_core_for_fallback("Prescott", cpu(true, true, true)), "SkylakeX");
}

TEST(OpenBlasCore, AFallbackWithoutAvx512OrOnAnotherVendorGetsTheHaswellKernels) {
  EXPECT_EQ(openblas_core_for_fallback("Prescott", cpu(true, true, false)), "Haswell");
  EXPECT_EQ(openblas_core_for_fallback("Prescott", cpu(false, true, true)), "Haswell");
  EXPECT_EQ(openblas_core_for_fallback("Prescott", cpu(false, true, false)), "Haswell");
}

TEST(OpenBlasCore, ACpuWithoutAvx2KeepsTheFallback) {
  EXPECT_EQ(openblas_core_for_fallback("Prescott", cpu(true, false, false)), "");
  EXPECT_EQ(openblas_core_for_fallback("Prescott", cpu(false, false, false)), "");
}

TEST(OpenBlasCore, AKernelSetOpenBlasChoseItselfIsKept) {
  for (const char* chosen : {"Haswell", "SkylakeX", "Cooperlake", "Zen", "Sandybridge", "Nehalem"}) {
    EXPECT_EQ(openblas_core_for_fallback(chosen, cpu(true, true, true)), "") << chosen;
    EXPECT_EQ(openblas_core_for_fallback(chosen, cpu(false, true, false)), "") << chosen;
  }
}

TEST(OpenBlasCore, TheDescriptionNamesTheKernelSetInUse) {
  const std::string d = blas_core_description();
  EXPECT_EQ(d.rfind(openblas_get_corename(), 0), 0u) << d;
  EXPECT_NE(d.find(" ("), std::string::npos) << d;
}

}  // namespace
}  // namespace attn
