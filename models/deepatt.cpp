#include "attn/models/deepatt.h"

#include <cmath>
#include <string>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/multi_head.h"
#include "attn/models/positional.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dot_product_attention/dot_product_attention.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {
const char* const kOp = "deepatt";

const DeepAttOptions& checked(const DeepAttOptions& o) {
  ATTN_CHECK(o.hidden > 0 && o.heads > 0 && o.hidden % o.heads == 0, kOp, "hidden ", o.hidden,
             " must be a positive multiple of heads ", o.heads);
  ATTN_CHECK(o.layers >= 1, kOp, "layers must be at least 1, got ", o.layers);
  ATTN_CHECK(o.ffn_dim >= 1, kOp, "ffn_dim must be at least 1, got ", o.ffn_dim);
  for (double p : {o.residual_keep_prob, o.relu_keep_prob, o.attn_keep_prob})
    ATTN_CHECK(p > 0 && p <= 1, kOp, "keep probabilities must lie in (0, 1], got ", p);
  return o;
}

MtsaOptions mtsa_options_of(const DeepAttOptions& o) {
  MtsaOptions m = o.mtsa;
  m.heads = o.heads;
  // Seed 001 App. B: keep 0.9 "applied to both source2token and token2token
  // alignment scores, which equals to setting the probability to 0.81 in MTSA".
  m.attn_keep_prob = o.attn_keep_prob * o.attn_keep_prob;
  if (m.head_masks.empty()) m.head_masks = parse_head_masks("", o.heads);
  return m;
}
}  // namespace

DeepAttMultiHead::DeepAttMultiHead(int64_t features, int64_t heads, double attn_keep_prob, Generator& init,
                                   Generator& noise, DType dtype)
    : heads_(heads),
      wq_(features, features, init, false, dtype),
      wk_(features, features, init, false, dtype),
      wv_(features, features, init, false, dtype),
      wo_(features, features, init, false, dtype),
      attn_drop_(attn_keep_prob, noise) {
  register_module("q", wq_);
  register_module("k", wk_);
  register_module("v", wv_);
  register_module("out", wo_);
  register_module("attn_dropout", attn_drop_);
}

Tensor DeepAttMultiHead::forward(const Tensor& x, const Tensor& mask) const {
  Tensor q = split_heads(wq_(x), heads_), k = split_heads(wk_(x), heads_), v = split_heads(wv_(x), heads_);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  Tensor heads;
  if (training() && attn_drop_.keep_prob() < 1) {
    // The probabilities themselves are dropped, so the n x n map is built.
    Tensor keys = reshape(mask, {mask.size(0), 1, 1, mask.size(1)});
    Tensor p = softmax(mul_scalar(matmul(q, transpose(k, -1, -2)), scale), -1, keys);
    heads = matmul(attn_drop_(p), v);
  } else {
    heads = dot_product_attention(q, k, v, mask, scale).out;
  }
  return zero_padded(wo_(merge_heads(heads)), mask);
}

DeepAttLayer::DeepAttLayer(const DeepAttOptions& o, Generator& init, Generator& noise, DType dtype)
    : ffn1_(o.hidden, o.ffn_dim, init, true, dtype),
      ffn2_(o.ffn_dim, o.hidden, init, true, dtype),
      ln_ffn_(o.hidden, 1e-6, dtype),
      ln_attn_(o.hidden, 1e-6, dtype),
      residual_drop_(o.residual_keep_prob, noise),
      relu_drop_(o.relu_keep_prob, noise) {
  register_module("ffn1", ffn1_);
  register_module("ffn2", ffn2_);
  register_module("ln_ffn", ln_ffn_);
  if (o.attention == DeepAttAttention::Mtsa) {
    mtsa_ = std::make_unique<MtsaLayer>(o.hidden, o.hidden, mtsa_options_of(o), init, &noise, dtype);
    register_module("attn", *mtsa_);
  } else {
    multi_head_ = std::make_unique<DeepAttMultiHead>(o.hidden, o.heads, o.attn_keep_prob, init, noise, dtype);
    register_module("attn", *multi_head_);
  }
  register_module("ln_attn", ln_attn_);
  register_module("residual_dropout", residual_drop_);
  register_module("relu_dropout", relu_drop_);
}

Tensor DeepAttLayer::forward(const Tensor& h, const Tensor& mask) const {
  Tensor z = ln_ffn_(h + residual_drop_(ffn2_(relu_drop_(ffn1_.forward(h, Activation::Relu)))));
  z = zero_padded(z, mask);
  Tensor a = mtsa_ ? mtsa_->forward(z, mask) : multi_head_->forward(z, mask);
  return zero_padded(ln_attn_(z + residual_drop_(a)), mask);
}

DeepAtt::DeepAtt(int64_t input_dim, const DeepAttOptions& o, Generator& init, Generator& noise, DType dtype)
    : input_dim_(input_dim),
      options_(checked(o)),
      input_drop_(o.residual_keep_prob, noise),
      s2t_(o.hidden, init, Activation::Relu, true, dtype) {
  ATTN_CHECK(input_dim > 0, kOp, "input dimension must be positive, got ", input_dim);
  if (input_dim == o.hidden) {
    input_bias_ = register_parameter("input_bias", zeros({o.hidden}, dtype));
  } else {
    proj_ = std::make_unique<Linear>(input_dim, o.hidden, init, true, dtype);
    register_module("proj", *proj_);
  }
  for (int64_t l = 0; l < o.layers; ++l) {
    layers_.push_back(std::make_unique<DeepAttLayer>(o, init, noise, dtype));
    register_module("layer" + std::to_string(l), *layers_.back());
  }
  register_module("input_dropout", input_drop_);
  register_module("s2t", s2t_);
}

EncoderOutput DeepAtt::encode_tokens(const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, kOp, "expects x [B, n, ", input_dim_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({x.size(0), x.size(1)}), kOp,
             "mask must be uint8 [B, n] = ", shape_str({x.size(0), x.size(1)}), ", got ", dtype_name(mask.dtype()),
             " ", shape_str(mask.shape()));
  // Tan et al. scale the embeddings by sqrt(hidden) and add a bias before the
  // first layer (XMUNLP/Tagger DeepAtt.encode).
  Tensor h = proj_ ? (*proj_)(x) : mul_scalar(x, std::sqrt(static_cast<double>(options_.hidden))) + input_bias_;
  if (options_.positions) h = h + sinusoidal_positions(x.size(1), options_.hidden, h.dtype(), h.device());
  h = zero_padded(input_drop_(h), mask);
  for (const auto& layer : layers_) h = layer->forward(h, mask);
  return {h, s2t_.forward(h, mask)};
}

const ConfigSchema& deepatt_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "deepatt",
      {int_key("hidden", 200, 1, kWidth, "model width (tokens and sentence); a multiple of heads").as_flag(),
       int_key("heads", 8, 1, kHeads, "attention heads, each hidden / heads wide").as_flag(),
       int_key("layers", 10, 1, kLayers, "layers, each an FFN sub-layer then an attention sub-layer"),
       int_key("ffn_dim", 800, 1, 4 * kWidth, "inner width of the FFN sub-layers"),
       choice_key("attention", "multi_head", {"multi_head", "mtsa"},
                  "the attention sub-layer: multi-head (Tan et al. 2017) or MTSA (seed 001)"),
       choice_key("positions", "", {"sinusoidal", "none"}, "positional encoding added to the input")
           .derived_default("sinusoidal with multi_head (Tan et al.), none with mtsa (seed 001 App. B)"),
       probability_key("residual_keep_prob", 0.8, "dropout keep probability before each residual connection and on the input"),
       probability_key("relu_keep_prob", 0.9, "dropout keep probability on the FFN's relu hidden layer"),
       probability_key("attn_keep_prob", 0.9,
                       "attention dropout keep probability of each score map (multi_head: the probabilities; mtsa: E_R and "
                       "E_S each, MTSA's attn_keep_prob is its square)"),
       choice_key("sigma_t", "identity", {"logsigmoid", "identity"}, "mtsa: scale function of the token2token scores"),
       choice_key("mtsa_variant", "original", {"original", "paper"},
                  "mtsa: the released code's projections (original) or Eq. 7, 9 and 13 (paper)")});
  return table;
}

std::unique_ptr<Encoder> build_deepatt_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = deepatt_config_keys();
  DeepAttOptions o;
  o.hidden = keys.get_int(config, "hidden");
  o.heads = keys.get_int(config, "heads");
  o.layers = keys.get_int(config, "layers");
  o.ffn_dim = keys.get_int(config, "ffn_dim");
  const std::string attention = keys.get_string(config, "attention");
  o.attention = attention == "mtsa" ? DeepAttAttention::Mtsa : DeepAttAttention::MultiHead;
  o.positions = keys.get_string(config, "positions", attention == "mtsa" ? "none" : "sinusoidal") == "sinusoidal";
  o.residual_keep_prob = keys.get_float(config, "residual_keep_prob");
  o.relu_keep_prob = keys.get_float(config, "relu_keep_prob");
  o.attn_keep_prob = keys.get_float(config, "attn_keep_prob");
  o.mtsa.sigma_t = sigma_t_from_name(keys.get_string(config, "sigma_t"));
  o.mtsa.variant = mtsa_variant_from_name(keys.get_string(config, "mtsa_variant"));
  return std::make_unique<DeepAtt>(ctx.input_dim, o, *ctx.init, *ctx.noise, ctx.dtype);
}

}  // namespace attn
