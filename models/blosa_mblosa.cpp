#include "attn/models/blosa_mblosa.h"

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/models/disa.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {
// Runs before any layer is built, so a bad setup fails with a clear message.
const MBlosaOptions& checked(const MBlosaOptions& o, int64_t features) {
  ATTN_CHECK(features >= 1, "MBlosa", "features must be positive, got ", features);
  ATTN_CHECK(o.scale_c > 0, "MBlosa", "scale c must be positive, got ", o.scale_c);
  ATTN_CHECK(o.direction != Direction::None, "MBlosa", "needs a forward or backward direction");
  ATTN_CHECK(o.local_context || o.global_context, "MBlosa",
             "the fusion gate needs the local (h) or the global (E) context; both are off");
  return o;
}
}  // namespace

// The layers draw from gen in the order intra, block s2t, inter, block gate,
// fusion; a removed part draws nothing.
MBlosa::MBlosa(int64_t features, const MBlosaOptions& options, Generator& gen, DType dtype)
    : options_(checked(options, features)),
      features_(features),
      intra_w1_(features, features, gen, false, dtype),
      intra_w2_(features, features, gen, false, dtype) {
  register_module("intra_w1", intra_w1_);
  register_module("intra_w2", intra_w2_);
  intra_bias_ = register_parameter("intra_bias", zeros({features}, dtype));
  if (options_.global_context) {
    block_s2t_ = std::make_unique<Source2Token>(features, gen, options.activation, false, dtype);
    inter_w1_ = std::make_unique<Linear>(features, features, gen, false, dtype);
    inter_w2_ = std::make_unique<Linear>(features, features, gen, false, dtype);
    block_gate_ = std::make_unique<GatedFusion>(features, gen, dtype);
    register_module("block_s2t", *block_s2t_);
    register_module("inter_w1", *inter_w1_);
    register_module("inter_w2", *inter_w2_);
    inter_bias_ = register_parameter("inter_bias", zeros({features}, dtype));
    register_module("block_gate", *block_gate_);
  }
  if (options_.local_context && options_.global_context) {
    fusion_ = std::make_unique<FeatureFusionGate>(features, options.activation, gen, dtype);
    register_module("fusion", *fusion_);
  } else {
    one_context_fusion_ = std::make_unique<OneContextFusionGate>(features, options.activation, gen, dtype);
    register_module("fusion", *one_context_fusion_);
  }
}

MBlosaStages MBlosa::stages(const Tensor& x, const Tensor& valid, int64_t block_len) const {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == features_, "MBlosa", "expects x of shape [B, n, ", features_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(valid.dtype() == DType::U8 && valid.dim() == 2 && valid.size(0) == x.size(0) && valid.size(1) == x.size(1),
             "MBlosa", "mask must be uint8 [B, n] matching x ", shape_str(x.shape()), ", got ",
             dtype_name(valid.dtype()), " ", shape_str(valid.shape()));
  ATTN_CHECK(x.size(1) >= 1, "MBlosa", "needs at least one token position, got ", shape_str(x.shape()));
  ATTN_CHECK(block_len >= 1, "MBlosa", "block length must be positive, got ", block_len);
  const int64_t b = x.size(0), n = x.size(1), d = features_, r = block_len;
  const int64_t m = (n + r - 1) / r;
  AttentionTraceScope trace_scope(direction_name(options_.direction));
  MBlosaStages st;
  st.block_len = r;
  st.blocks = m;

  // Blocks: pad to m*r and fold the block axis into the batch, so one r x r
  // mask serves every block and the attention runs on all blocks at once.
  Tensor xp = pad(x, 1, 0, m * r - n);
  Tensor vp = pad(valid, 1, 0, m * r - n);
  Tensor xb = reshape(xp, {b * m, r, d});
  Tensor vb = reshape(vp, {b * m, r});

  // Intra-block masked self-attention with parameters shared by all blocks.
  Tensor intra_mask = pair_mask(vb, direction_mask(r, options_.direction));
  Tensor hb = multi_dim_masked_attention(xb, linear(xb, intra_w1_.weight, intra_bias_), intra_w2_(xb), Tensor(),
                                         intra_mask, options_.scale_c, options_.materialize_scores, "intra");
  st.h = reshape(hb, {b, m * r, d});

  Tensor u;
  if (options_.global_context) {
    // One vector per block; a block without a valid token gives zeros.
    st.v = reshape(block_s2t_->forward(hb, vb), {b, m, d});
    Tensor counts = sum(cast(reshape(vp, {b, m, r}), x.dtype()), {2});
    st.block_valid = gt(counts, zeros({}, x.dtype(), x.device()));

    // Inter-block masked self-attention and the block gate.
    Tensor inter_mask = pair_mask(st.block_valid, direction_mask(m, options_.direction));
    st.o = multi_dim_masked_attention(st.v, linear(st.v, inter_w1_->weight, inter_bias_), (*inter_w2_)(st.v),
                                      Tensor(), inter_mask, options_.scale_c, options_.materialize_scores, "inter");
    st.e = block_gate_->forward(st.v, st.o);

    // Context fusion with e_l as the context of every token of block l.
    u = fusion_ ? fusion_->forward_block_context(xp, st.h, st.e, r)
                : one_context_fusion_->forward_block_context(xp, st.e, r);
  } else {
    u = one_context_fusion_->forward(xp, st.h);
  }
  st.u = zero_padded(narrow(u, 1, 0, n), valid);
  return st;
}

Tensor MBlosa::forward(const Tensor& x, const Tensor& valid, int64_t block_len) const {
  return stages(x, valid, block_len).u;
}

}  // namespace attn
