// Reinforced Sequence Sampling (RSS; seed 004 Sec. 3.1, Eqs. 5-7): a hard
// attention that keeps or drops every token independently, in parallel.
//   xbar  = mean of x over the valid tokens (0 for an empty sequence)
//   h_i   = [x_i; xbar; x_i * xbar]                          (Eq. 6)
//   a_i   = w^T act(W h_i + b) + b',   p_i = sigmoid(a_i)     (Eq. 7)
//   z_i   ~ Bernoulli(p_i) in training (no gradient flows through z);
//           in evaluation 1[p_i >= 0.5] (RssEval::Threshold, the default:
//           deterministic) or a sample (RssEval::Sample)
//   log pi(z) = sum over valid i of z_i log p_i + (1 - z_i) log(1 - p_i),
//           computed as log_sigmoid(a_i) / log_sigmoid(-a_i) (stable for any a)
// Padded tokens are never selected. The "select all" switch (warm-up, Sec. 4)
// makes z = valid in every mode. log pi is differentiable in the RSS
// parameters (REINFORCE, Eq. 20); z is not.
// Children: "fc" (W, b: 3*input_dim -> hidden), "out" (w, b': hidden -> 1).
//
// TokenSampler is what ReSA needs of a hard attention: RSS here, or the
// iterative sampling of the paper's appendix A (models/iterative_sampling.h).
#pragma once
#include <string>

#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/linear.h"

namespace attn {

enum class RssEval { Threshold, Sample };
RssEval rss_eval_from_name(const std::string& name);  // "threshold", "sample"
const char* rss_eval_name(RssEval e);

struct RssSample {
  Tensor logits;    // a [B, n], differentiable
  Tensor z;         // uint8 [B, n], 0 at padded positions
  Tensor log_pi;    // [B] log pi(z), differentiable in the RSS parameters
  Tensor fraction;  // [B] selected / valid tokens (0 for an empty example)
};

// A hard attention over tokens: a selection z, the differentiable log pi(z)
// and the selected fraction for REINFORCE, and the warm-up's "select all".
class TokenSampler : public Module {
 public:
  // x [B, n, input_dim], valid [B, n] uint8.
  virtual RssSample forward(const Tensor& x, const Tensor& valid) const = 0;
  // While on, z = valid in every mode (log pi is still that of z = valid).
  void set_select_all(bool on) { select_all_ = on; }
  bool select_all() const { return select_all_; }

 protected:
  bool select_all_ = false;
};

class Rss : public TokenSampler {
 public:
  // `noise` drives the sampling; it must outlive the module.
  Rss(int64_t input_dim, int64_t hidden, Activation act, RssEval eval, Generator& init, Generator& noise,
      DType dtype = DType::F32);

  // x [B, n, input_dim], valid [B, n] uint8 -> logits a [B, n].
  Tensor logits(const Tensor& x, const Tensor& valid) const;
  // z for these logits under the current mode (training / evaluation / select all).
  Tensor select(const Tensor& logits, const Tensor& valid) const;
  // logits, z, log pi(z) and the selected fraction in one call.
  RssSample forward(const Tensor& x, const Tensor& valid) const override;

  RssEval eval_mode() const { return eval_; }

 private:
  Activation act_;
  RssEval eval_;
  Generator* noise_;
  Linear fc_, out_;
};

// The tokens a hard attention selects from its logits a (any shape, valid
// alike): Bernoulli draws of sigmoid(a) from `draws` when it is given, else
// the threshold p >= 0.5. A padded token is never selected; no gradient.
Tensor select_tokens(const Tensor& logits, const Tensor& valid, Generator* draws);
// log pi(z) [B] for logits a [B, n], a uint8 selection z and validity mask.
Tensor rss_log_prob(const Tensor& logits, const Tensor& z, const Tensor& valid);
// Selected / valid tokens per example [B] in dtype (0 where nothing is valid).
Tensor rss_selected_fraction(const Tensor& z, const Tensor& valid, DType dtype);
// Mean of x [B, n, d] over valid tokens, [B, 1, d] (0 for an empty example).
Tensor masked_mean_over_tokens(const Tensor& x, const Tensor& valid);
// W f_i + b for Eq. 6's features f_i = [x_i; xbar; x_i * xbar] of every token
// (x [B, n, d], xbar the masked mean; padded x zeroed first), weight [h, 3d]
// by its column blocks, without building the [B, n, 3d] concatenation:
// [B, n, h]. bias may be undefined.
Tensor pooled_features_linear(const Tensor& x, const Tensor& valid, const Tensor& weight, const Tensor& bias);

}  // namespace attn
