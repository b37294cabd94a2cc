// Row addressing of a [B, h, n, d] attention operand whose feature axis is
// contiguous and whose other axes have any strides: the fused attention
// kernels read split_heads views of [B, n, h * d] projections in place and
// write heads in [B, n, h, d] order (so merging them back is a view).
#pragma once
#include <cstdint>

#include "attn/engine/tensor.h"
#include "attn/ops/host_device.h"

namespace attn {

// Where row j of head (b, c) starts, in elements from the data pointer:
// b * batch + c * head + j * row. Host and device code both call at().
struct HeadRows {
  int64_t batch, head, row;
  ATTN_HD int64_t at(int64_t b, int64_t c, int64_t j) const { return b * batch + c * head + j * row; }
};
inline HeadRows head_rows(const Tensor& t) { return {t.strides()[0], t.strides()[1], t.strides()[2]}; }

// t without history, copied only when its feature axis is not contiguous.
Tensor with_contiguous_rows(const Tensor& t);

// An uninitialised [B, h, n, d] tensor stored in [B, n, h, d] order.
Tensor empty_heads_token_major(int64_t B, int64_t h, int64_t n, int64_t d, DType dtype, Device device);

}  // namespace attn
