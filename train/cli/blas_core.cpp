#include "attn/train/cli/blas_core.h"

#include <cblas.h>

#include "attn/train/cli/environment_at_start.h"

namespace attn {

std::string blas_core_description() {
  const std::string at_start = environment_at_start({"OPENBLAS_CORETYPE"});
  return std::string(openblas_get_corename()) + " (" + (at_start.empty() ? "OpenBLAS's choice" : at_start + " at start") +
         ")";
}

}  // namespace attn
