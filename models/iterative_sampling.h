// Iterative sampling (seed 004, appendix A, Eqs. 21-25), the sequential hard
// attention of Lei et al. 2016 that the paper compares RSS with (Table 4):
// each token's selection is drawn after, and conditioned on, those before it.
//   f_i = [x_i; xbar; x_i * xbar]          RSS's features (Eq. 6; see below)
//   h_0 = 0
//   a_i = w^T act(W_p [h_{i-1}; f_i] + b_p) + b,   p_i = sigmoid(a_i)    (Eq. 22)
//   z_i ~ Bernoulli(p_i)                                                (Eq. 23)
//   h_i = tanh(W_r [f_i; z_i; h_{i-1}] + b_r)   a basic (tanh) RNN over
//         x'_i = [f_i; z_i]                                    (Eqs. 24-25)
// so p(z | x) = prod_i p(z_i | x, z_{1:i-1}) (Eq. 21), and
//   log pi(z) = sum over valid i of z_i log p_i + (1 - z_i) log(1 - p_i)
// with every p_i computed along the drawn z: the same formula as RSS's
// (rss_log_prob), differentiable in every parameter through h.
// A padded position draws nothing (z_i = 0) and leaves the state as it was
// (h_i = h_{i-1}), so a valid token sees the same state wherever padding sits.
// Evaluation and the warm-up's "select all" decide each z_i as RSS does:
// 1[p_i >= 0.5] (RssEval::Threshold), a draw (RssEval::Sample), or z = valid;
// the recurrence then runs along that z.
// Sampling draws one seed from the noise generator per forward; step i draws
// from a generator seeded by it, one value per example row (the row-keyed
// streams of ops/dropout/dropout_example_keys.h inside a training step), so
// a draw depends on neither the batch's other examples nor its padded length.
// The input is Eq. 6's f_i rather than the bare x_i of Eq. 22: with f_i the
// two modules have the 0.9m more parameters of Table 4 (3.1m -> 4.0m), with
// x_i 0.2m (docs/models.md, ReSAN).
// Children: "proj" (W_p, b_p: [hidden, state + 3 input_dim], columns
// [h | x | xbar | x*xbar]), "out" (w, b: hidden -> 1), "rnn" (W_r, b_r:
// [state, 3 input_dim + 1 + state], columns [x | xbar | x*xbar | z | h]).
#pragma once
#include "attn/models/rss.h"

namespace attn {

class IterativeSampler : public TokenSampler {
 public:
  // hidden: width of Eq. 22's hidden layer; state: width of h. `noise` must
  // outlive the module.
  IterativeSampler(int64_t input_dim, int64_t hidden, int64_t state, Activation act, RssEval eval, Generator& init,
                   Generator& noise, DType dtype = DType::F32);

  // z chosen step by step under the current mode, with the logits a_i along
  // it, log pi(z) and the selected fraction.
  RssSample forward(const Tensor& x, const Tensor& valid) const override;
  // The logits a [B, n] of Eq. 22 along a given selection z (uint8 [B, n]):
  // a_i depends on z_1..z_{i-1} only. Differentiable in x and every parameter.
  Tensor logits_along(const Tensor& x, const Tensor& valid, const Tensor& z) const;

 private:
  struct Recurrence {
    Tensor logits;  // [B, n]
    Tensor z;       // uint8 [B, n]
  };
  // Runs Eqs. 22-25 over the tokens; z_i is given[:, i] when given is
  // defined, else chosen under the current mode.
  Recurrence run(const Tensor& x, const Tensor& valid, const Tensor& given) const;

  Activation act_;
  RssEval eval_;
  int64_t input_dim_, state_;
  Generator* noise_;
  Linear proj_, out_, rnn_;
};

}  // namespace attn
