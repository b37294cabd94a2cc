#include "attn/engine/device.h"

namespace attn {

bool built_with_cuda() {
#ifdef ATTN_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace attn
