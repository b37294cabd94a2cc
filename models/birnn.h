// The papers' recurrent baselines (seed 001 Sec. 4, seed 002 Sec. 4): Bi-LSTM
// and Bi-GRU, "600D, 300D forward + 300D backward", with "a multi-dim
// source2token self-attention ... applied on the top of context fusion
// module to produce the sequence embedding".
//
// Each direction projects every token with one GEMM (x W_ih + b) and runs the
// fused recurrent op (ops/recurrent/recurrent.h) over the sentence's valid
// tokens, the backward direction over them last to first. Tokens are
// [fw | bw] (2 * hidden wide, exactly 0 at padding), the sentence the
// source2token readout over them. The mask must be a prefix mask.
//
// Parameters per direction d in {fw, bw}: "d.w_ih" [G, input] (G = 4 or 3
// gate blocks of hidden), "d.b_ih" [G], "d.w_hh" [hidden, G] (the transpose
// of PyTorch's weight_hh), "d.b_hh" [G] (PyTorch form only); "s2t".
#pragma once
#include <map>
#include <string>

#include "attn/models/encoder.h"
#include "attn/models/source2token.h"
#include "attn/ops/recurrent/recurrent.h"

namespace attn {

// One direction's weights (a child module, so its names are "fw.w_ih", ...).
class RnnDirection : public Module {
 public:
  RnnDirection(int64_t input_dim, int64_t hidden, RecurrentCell cell, CellForm form, Generator& gen, DType dtype);
  Tensor w_ih, b_ih, w_hh, b_hh;  // b_hh undefined in the TensorFlow form
};

class BiRnn : public Encoder {
 public:
  BiRnn(int64_t input_dim, int64_t hidden, RecurrentCell cell, CellForm form, Activation readout, Generator& gen,
        DType dtype);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return 2 * hidden_; }
  int64_t sentence_dim() const override { return 2 * hidden_; }

 private:
  Tensor run(const RnnDirection& d, const Tensor& x, const Tensor& mask, bool reverse) const;

  int64_t hidden_;
  RecurrentCell cell_;
  CellForm form_;
  RnnDirection fw_, bw_;
  Source2Token s2t_;
};

// Weight exchange with PyTorch. torch.nn.LSTM / torch.nn.GRU with
// num_layers = 1 and bidirectional = True name their state weight_ih_l0
// [G, in], weight_hh_l0 [G, h], bias_ih_l0 [G], bias_hh_l0 [G], and the same
// with the suffix "_reverse" for the backward direction. Their gate blocks
// are already in the PyTorch form's order (LSTM i, f, g, o; GRU r, z, n) and
// their two biases are ours, so the only change is the recurrent weight,
// which we hold transposed (w_hh [h, G], for the step's [B, h] x [h, G]
// product). Gradients map the same way (the map is linear).
//
// birnn_params_from_torch: PyTorch's eight names -> "fw.w_ih", "fw.b_ih",
// "fw.w_hh", "fw.b_hh", "bw.*" (new contiguous tensors) for a BiRnn built
// with CellForm::PyTorch; PyTorch has no readout, so load_into_module needs
// the "s2t.*" tensors beside them (the model's own, or a checkpoint's).
// Throws naming a missing tensor, one it does not know (a second layer,
// proj_size's weight_hr_l0) or shapes that do not fit one LSTM or GRU.
// birnn_params_to_torch: the reverse, from a BiRnn's named parameters (or
// their gradients by the same names); needs b_hh, so the PyTorch form only.
std::map<std::string, Tensor> birnn_params_from_torch(const std::map<std::string, Tensor>& torch_state);
std::map<std::string, Tensor> birnn_params_to_torch(const std::map<std::string, Tensor>& params);

const ConfigSchema& bilstm_config_keys();
const ConfigSchema& bigru_config_keys();
std::unique_ptr<Encoder> build_bilstm_encoder(const Config& config, const EncoderContext& ctx);
std::unique_ptr<Encoder> build_bigru_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
