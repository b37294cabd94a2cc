#include "attn/models/bow.h"

#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {

EncoderOutput BagOfWords::encode_tokens(const Tensor& x, const Tensor& mask) {
  Tensor tokens = zero_padded(x, mask);
  Tensor counts = sum(cast(unsqueeze(mask, -1), x.dtype()), {1});  // [B, 1]
  // An empty sequence divides 0 by 1, not by 0.
  Tensor safe = maximum(counts, full({}, 1.0, x.dtype(), x.device()));
  return {tokens, sum(tokens, {1}) / safe};
}

const ConfigSchema& bow_config_keys() {
  static const ConfigSchema table("bow", {});
  return table;
}

std::unique_ptr<Encoder> build_bow_encoder(const Config&, const EncoderContext& ctx) {
  return std::make_unique<BagOfWords>(ctx.input_dim);
}

}  // namespace attn
