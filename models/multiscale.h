// Multi-Scale Transformer (seed 003): scale-aware self-attention heads, each
// restricted to a window around its query, several scales per layer.
//
// Scale-aware self-attention (SASA, Eq. 6-8), per head c with window radius r:
//   head_c[j] = sum_{|i-j| <= r} softmax_i(q_c[j] . k_c[i] / sqrt(d_h)) v_c[i]
// with keys outside the sentence (before its start, past its end, padding)
// masked. A scale is a window SIZE w (odd; w = 1 is the token alone, the FFN
// the paper drops), so r = (w - 1) / 2; a ratio scale N/k of the sentence
// length N has r = floor(N / (2k)), i.e. the odd size 2r+1 in (N/k - 1, N/k + 1].
// The window attention is one fused op (ops/window_attention/window_attention.h) that reads
// each query's 2R+1 neighbours in place: O(n R d) time, O(n (R + d)) memory,
// never n^2.
//
// MSMSA(H) = [head_1; ...; head_N'] W^O (Eq. 9), Q/K/V/W^O without biases.
// Layer (Eq. 10, no FFN): H' = LN(H + drop(relu(MSMSA(H)))).
// Head counts per layer and scale: Eq. 11-12 (see scale_head_counts) or given.
// Encoder: input projection (only when input_dim != hidden), a learned [CLS]
// vector prepended (position 0, attended like any token), no positional
// encoding (the paper: small scales replace it), `layers` layers;
// tokens = last layer without [CLS]; sentence = [CLS ; max-pool over the
// valid tokens] (2 * hidden), all zero for an empty sentence.
//
// Config keys: mstrans_config_keys() (multiscale.cpp): heads and alpha for
// Eq. 11-12, or head_counts (layers x scales integers, layer-major) instead.
// Parameters: "proj" (optional), "cls" [hidden], "layer<l>.msmsa.{q,k,v,out}",
// "layer<l>.ln".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/nn/dropout.h"
#include "attn/nn/layer_norm.h"
#include "attn/nn/linear.h"

namespace attn {

// A head's scale: a constant odd window size, or the sentence length / divisor.
struct Scale {
  int64_t window = 1;   // constant window size (odd), used when divisor == 0
  int64_t divisor = 0;  // > 0: window N / divisor for a sentence of N tokens
  int64_t radius(int64_t length) const;
  std::string name() const;  // "3", "n/16"
};

// Parses "1,3,n/16,n/8" (N/16 also accepted). Constant sizes must be odd.
std::vector<Scale> parse_scales(const std::string& list);

// Eq. 11-12: heads per layer (rows, bottom layer first) and scale (columns,
// smallest first). Our reading: z^l_|Omega| = 0, z^l_k = z^l_{k+1} + s_l with
// step s_l = alpha (L - l) / (L - 1) (0 when L = 1), so the top layer is
// uniform and the bottom one steps by alpha; n^l = softmax(z^l) * heads,
// rounded by largest remainder (ties to the smaller scale) so every layer has
// exactly `heads` heads.
std::vector<std::vector<int64_t>> scale_head_counts(int64_t layers, int64_t scales, int64_t heads, double alpha);

// Windowed attention for q, k, v [B, h, n, d_h]: query j of example b sees
// keys i with |i - j| <= radii[b], 0 <= i < n and valid[b, i] (uint8 [B, n]).
// Radii >= n - 1 cover the whole sentence (full masked attention). A query
// with no allowed key gets zeros. O(n * (2R + 1) * d_h) time,
// R = min(max radius, n - 1); runs ops/window_attention/window_attention.h (fused) and records
// its probabilities [B, h, n, 2R+1] and band mask [B, 1, n, 2R+1] as the
// "window" and "window_mask" attention traces.
Tensor window_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& valid,
                        const std::vector<int64_t>& radii);

// MSMSA. Heads are grouped by scale in `scales` order, head_counts[s] of
// scale s (zero allowed); d_h = features / sum(head_counts).
// Children "q", "k", "v", "out": Linear(D, D) without bias.
class MultiScaleAttention : public Module {
 public:
  MultiScaleAttention(int64_t features, std::vector<Scale> scales, std::vector<int64_t> head_counts, Generator& gen,
                      DType dtype = DType::F32);
  // x [B, n, D], mask [B, n] -> [B, n, D], zero at padded positions.
  // lengths[b] is the N of ratio scales for example b (default: mask's count).
  Tensor forward(const Tensor& x, const Tensor& mask, const std::vector<int64_t>& lengths = {}) const;
  const std::vector<int64_t>& head_counts() const { return counts_; }

 private:
  int64_t features_, heads_;
  std::vector<Scale> scales_;
  std::vector<int64_t> counts_;
  Linear wq_, wk_, wv_, wo_;
};

// H' = LN(H + drop(relu(MSMSA(H)))), zero at padded positions.
// Children "msmsa", "ln".
class MultiScaleLayer : public Module {
 public:
  MultiScaleLayer(int64_t hidden, const std::vector<Scale>& scales, const std::vector<int64_t>& head_counts,
                  double keep_prob, Generator& init, Generator& noise, DType dtype = DType::F32);
  Tensor forward(const Tensor& h, const Tensor& mask, const std::vector<int64_t>& lengths = {}) const;
  const MultiScaleAttention& attention() const { return msmsa_; }

 private:
  MultiScaleAttention msmsa_;
  LayerNorm ln_;
  Dropout drop_;
};

// The config keys of build_mstrans_encoder.
const ConfigSchema& mstrans_config_keys();

// Starts from the config table's defaults.
struct MultiScaleOptions {
  int64_t hidden = mstrans_config_keys().default_int("hidden");
  int64_t layers = mstrans_config_keys().default_int("layers");
  std::vector<Scale> scales;  // empty: the config table's default scales
  int64_t heads = mstrans_config_keys().default_int("heads");
  double alpha = mstrans_config_keys().default_float("alpha");
  std::vector<std::vector<int64_t>> head_counts;  // empty: Eq. 11-12 from heads and alpha
  double keep_prob = mstrans_config_keys().default_float("keep_prob");
};

class MultiScaleTransformer : public Encoder {
 public:
  MultiScaleTransformer(int64_t input_dim, const MultiScaleOptions& options, Generator& init, Generator& noise,
                        DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return hidden_; }
  int64_t sentence_dim() const override { return 2 * hidden_; }
  const MultiScaleLayer& layer(int64_t l) const { return *layers_.at(static_cast<size_t>(l)); }

  Tensor cls;  // [hidden], the learned classification node

 private:
  int64_t input_dim_, hidden_;
  std::unique_ptr<Linear> proj_;
  std::vector<std::unique_ptr<MultiScaleLayer>> layers_;
  Dropout drop_;
};

std::unique_ptr<Encoder> build_mstrans_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
