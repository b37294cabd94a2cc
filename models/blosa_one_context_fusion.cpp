#include "attn/models/blosa_one_context_fusion.h"

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

OneContextFusionGate::OneContextFusionGate(int64_t features, Activation act, Generator& gen, DType dtype)
    : act_(act), features_(features), proj_(2 * features, 2 * features, gen, true, dtype) {
  register_module("proj", proj_);
}

Tensor OneContextFusionGate::forward(const Tensor& x, const Tensor& c) const {
  const int64_t d = features_;
  ATTN_CHECK(x.dim() == 3 && x.size(2) == d && c.shape() == x.shape(), "OneContextFusionGate",
             "expects x and c of shape [B, n, ", d, "], got ", shape_str(x.shape()), " and ", shape_str(c.shape()));
  const Tensor both = linear(Concat({x, c}), proj_.weight, proj_.bias);
  return sigmoid_gate(narrow(both, -1, d, d), activate(act_, narrow(both, -1, 0, d)), x);
}

Tensor OneContextFusionGate::forward_block_context(const Tensor& x, const Tensor& c_blocks, int64_t block_len) const {
  const int64_t d = features_;
  ATTN_CHECK(block_len >= 1, "OneContextFusionGate", "block length must be positive, got ", block_len);
  ATTN_CHECK(x.dim() == 3 && x.size(2) == d, "OneContextFusionGate", "expects x of shape [B, m * block_len, ", d,
             "], got ", shape_str(x.shape()));
  const int64_t b = x.size(0), m = x.size(1) / block_len;
  ATTN_CHECK(m * block_len == x.size(1) && c_blocks.shape() == Shape({b, m, d}), "OneContextFusionGate", "x ",
             shape_str(x.shape()), " is not ", block_len, "-token blocks of the block context ",
             shape_str(c_blocks.shape()));
  // W [2d, 2d] = [W_x | W_c]; F's rows (0) and G's rows (d) as two products,
  // each the token part plus its block's broadcast row.
  auto pre_activation = [&](int64_t first_row) {
    const Tensor rows = narrow(proj_.weight, 0, first_row, d);
    Tensor tokens = linear(x, narrow(rows, 1, 0, d), narrow(proj_.bias, 0, first_row, d));
    Tensor blocks = linear(c_blocks, narrow(rows, 1, d, d));
    return reshape(reshape(tokens, {b, m, block_len, d}) + unsqueeze(blocks, 2), {b, m * block_len, d});
  };
  return sigmoid_gate(pre_activation(d), activate(act_, pre_activation(0)), x);
}

}  // namespace attn
