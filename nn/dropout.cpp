#include "attn/nn/dropout.h"

#include "attn/engine/error.h"
#include "attn/ops/dropout/dropout.h"

namespace attn {

Dropout::Dropout(double keep_prob, Generator& gen) : keep_prob_(keep_prob), gen_(&gen) {
  ATTN_CHECK(keep_prob > 0 && keep_prob <= 1, "Dropout", "keep probability must be in (0, 1], got ", keep_prob);
}

Tensor Dropout::forward(const Tensor& x) const { return dropout(x, 1.0 - keep_prob_, *gen_, training()); }

}  // namespace attn
