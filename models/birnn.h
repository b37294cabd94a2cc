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

const ConfigSchema& bilstm_config_keys();
const ConfigSchema& bigru_config_keys();
std::unique_ptr<Encoder> build_bilstm_encoder(const Config& config, const EncoderContext& ctx);
std::unique_ptr<Encoder> build_bigru_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
