// The Bi-SRU baseline (seed 002 Sec. 4: "Bi-SRU: 600D Bi-directional SRU
// (Lei & Zhang, 2017)"; seed 001 Sec. 4 the same baseline list), with "a
// multi-dim source2token self-attention ... applied on the top of context
// fusion module to produce the sequence embedding".
//
// As the authors' context fusion code builds it (taoshen58/BiBloSA,
// context_fusion/SRU.py, bi_sru_recurrent_network): the tokens first go
// through one relu dense layer to the hidden width, x' = relu(x W_0^T + b_0);
// x' is every step's highway input, so the highway needs no projection of
// its own whatever the input width. Each direction then projects x' to the
// three SRU blocks in one GEMM without bias (u = x' W_d^T, [B, n, 3h]) and
// runs the SRU op (ops/sru/sru.h) with its own b_f, b_r over the sentence's
// valid tokens, the backward direction last to first. Tokens are [fw | bw]
// (2 * hidden wide, exactly 0 at padding), the sentence the source2token
// readout over them. The mask must be a prefix mask.
//
// Parameters: "proj.{weight,bias}" [h, d_in], [h]; per direction d in
// {fw, bw}: "d.w" [3h, h], "d.b" [2h] (b_f then b_r); "s2t".
#pragma once
#include "attn/models/encoder.h"
#include "attn/models/source2token.h"
#include "attn/nn/linear.h"

namespace attn {

// One direction's weights (a child module, so its names are "fw.w", ...).
class SruDirection : public Module {
 public:
  SruDirection(int64_t hidden, Generator& gen, DType dtype);
  Tensor w;  // [3h, h]: blocks x~, f, r
  Tensor b;  // [2h]: b_f, b_r
};

class BiSru : public Encoder {
 public:
  BiSru(int64_t input_dim, int64_t hidden, Activation readout, Generator& gen, DType dtype);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return 2 * hidden_; }
  int64_t sentence_dim() const override { return 2 * hidden_; }

 private:
  int64_t hidden_;
  Linear proj_;
  SruDirection fw_, bw_;
  Source2Token s2t_;
};

const ConfigSchema& bisru_config_keys();
std::unique_ptr<Encoder> build_bisru_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
