// Sinusoidal positional encoding (Vaswani et al., 2017), added to the inputs
// of the Transformer encoder because dot-product attention alone is blind to
// word order:
//   PE[pos, 2i]   = sin(pos / 10000^(2i / d))
//   PE[pos, 2i+1] = cos(pos / 10000^(2i / d))
// for pos = 0..n-1 and feature pairs i = 0..ceil(d/2)-1 (an odd d ends with a
// sine). A constant: it carries no parameters and no gradient.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// [n, d] table of the encoding, in `dtype` on `device`.
Tensor sinusoidal_positions(int64_t n, int64_t d, DType dtype = DType::F32, Device device = Device::CPU);

}  // namespace attn
