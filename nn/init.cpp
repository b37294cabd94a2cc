#include "attn/nn/init.h"

#include <cmath>

namespace attn {

Tensor glorot_uniform(int64_t fan_out, int64_t fan_in, Generator& gen, DType dtype) {
  double a = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return rand_uniform({fan_out, fan_in}, -a, a, gen, dtype);
}

}  // namespace attn
