// Parameter initialisers, all drawing from an explicit Generator.
#pragma once
#include "attn/engine/random.h"
#include "attn/engine/tensor.h"

namespace attn {

// Glorot/Xavier uniform for a [fan_out, fan_in] weight: U(-a, a) with
// a = sqrt(6 / (fan_in + fan_out)).
Tensor glorot_uniform(int64_t fan_out, int64_t fan_in, Generator& gen, DType dtype = DType::F32);

}  // namespace attn
