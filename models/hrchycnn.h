// Hrchy-CNN, the hierarchical CNN baseline of seeds 001 and 002 (Sec. 4:
// "3-layer 300D CNN (Gehring et al. 2017), kernel length 5, gated linear
// units and residual connections"), as a context fusion module. Layer l:
//   c_l = relu(conv_l(h_{l-1}) + b_l)            [B, n, 2 D] (SAME padding, token mask)
//   g_l = c_l[:, :, :D] * sigmoid(c_l[:, :, D:])  (the gated linear unit)
//   h_l = g_l + h_{l-1}                           (l >= 2; h_1 = g_1)
// with h_0 = x; tokens = h_L, sentence = two-layer multi-dimensional
// source2token over the tokens. The relu before the gate and the first
// layer without a residual follow the authors' released code (docs/models.md).
// Config keys: hrchycnn_config_keys() (hrchycnn.cpp).
// Children: "conv0" ... (TokenConv to 2 * hidden), "s2t" (Source2Token over hidden).
#pragma once
#include <memory>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/models/source2token.h"
#include "attn/nn/token_conv.h"

namespace attn {

class HrchyCnn : public Encoder {
 public:
  HrchyCnn(int64_t input_dim, int64_t hidden, int64_t layers, int64_t width, bool relu_before_gate, Activation act,
           Generator& gen, DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return hidden_; }
  int64_t sentence_dim() const override { return hidden_; }

 private:
  int64_t hidden_;
  bool relu_before_gate_;
  std::vector<std::unique_ptr<TokenConv>> convs_;
  Source2Token s2t_;
};

const ConfigSchema& hrchycnn_config_keys();
std::unique_ptr<Encoder> build_hrchycnn_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
