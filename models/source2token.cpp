#include "attn/models/source2token.h"

#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/softmax_pool/softmax_pool.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {
// P from the scores f [B, n, d]: a softmax over positions per feature, padded
// positions masked.
Tensor softmax_over_positions(const Tensor& f, const Tensor& mask) { return softmax(f, 1, unsqueeze(mask, -1)); }
}  // namespace

Source2Token::Source2Token(int64_t features, Generator& gen, Activation act, bool two_layer, DType dtype,
                           bool multi_dim)
    : act_(act), two_layer_(two_layer) {
  const int64_t scores_per_token = multi_dim ? features : 1;
  w1_ = std::make_unique<Linear>(features, two_layer ? features : scores_per_token, gen, true, dtype);
  if (two_layer) {
    w2_ = std::make_unique<Linear>(features, scores_per_token, gen, true, dtype);
    register_module("w1", *w1_);
    register_module("w2", *w2_);
  } else {
    register_module("w", *w1_);
  }
}

Tensor Source2Token::scores(const Tensor& x, const Tensor& mask) const {
  ATTN_CHECK(x.dim() == 3, "source2token", "expects x of shape [B, n, d], got ", shape_str(x.shape()));
  ATTN_CHECK(mask.dim() == 2 && mask.size(0) == x.size(0) && mask.size(1) == x.size(1), "source2token",
             "mask of shape ", shape_str(mask.shape()), " does not match x of shape ", shape_str(x.shape()));
  Tensor f = two_layer_ ? (*w2_)(w1_->forward(x, act_)) : (*w1_)(x);
  // One score per token (vanilla attention): the same weights for every feature.
  return f.size(2) == x.size(2) ? f : expand(f, x.shape());
}

Tensor Source2Token::probabilities(const Tensor& x, const Tensor& mask) const {
  return softmax_over_positions(scores(x, mask), mask);
}

Tensor Source2Token::forward(const Tensor& x, const Tensor& mask) const {
  Tensor f = scores(x, mask);
  trace_attention("source2token", [&] { return softmax_over_positions(f, mask); });
  // The softmax over positions and the weighted sum in one op, which keeps
  // the [B, n, d] probabilities only when a backward will run
  // (ops/softmax_pool/softmax_pool.h).
  return softmax_pool(f, x, mask);
}

}  // namespace attn
