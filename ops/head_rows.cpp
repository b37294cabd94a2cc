#include "attn/ops/head_rows.h"

#include "attn/engine/copy.h"
#include "attn/ops/view/view.h"

namespace attn {

Tensor with_contiguous_rows(const Tensor& t) {
  const Tensor d = t.detach();
  return d.size(3) <= 1 || d.strides()[3] == 1 ? d : contiguous(d);
}

Tensor empty_heads_token_major(int64_t B, int64_t h, int64_t n, int64_t d, DType dtype, Device device) {
  return transpose(empty({B, n, h, d}, dtype, device), 1, 2);
}

}  // namespace attn
