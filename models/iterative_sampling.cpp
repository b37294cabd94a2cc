#include "attn/models/iterative_sampling.h"
#include "attn/models/masks.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

// t [B, n, ...] as [n, B, ...], so that step i is a contiguous slab.
Tensor steps_first(const Tensor& t) { return contiguous(transpose(t, 0, 1)); }
Tensor step(const Tensor& steps, int64_t i) { return squeeze(narrow(steps, 0, i, 1), 0); }

}  // namespace

IterativeSampler::IterativeSampler(int64_t input_dim, int64_t hidden, int64_t state, Activation act, RssEval eval,
                                   Generator& init, Generator& noise, DType dtype)
    : act_(act),
      eval_(eval),
      input_dim_(input_dim),
      state_(state),
      noise_(&noise),
      proj_(state + 3 * input_dim, hidden, init, true, dtype),
      out_(hidden, 1, init, true, dtype),
      rnn_(3 * input_dim + 1 + state, state, init, true, dtype) {
  ATTN_CHECK(input_dim > 0 && hidden > 0 && state > 0, "iterative_sampling",
             "input_dim, hidden and state must be positive, got ", input_dim, ", ", hidden, " and ", state);
  register_module("proj", proj_);
  register_module("out", out_);
  register_module("rnn", rnn_);
}

IterativeSampler::Recurrence IterativeSampler::run(const Tensor& x, const Tensor& valid, const Tensor& given) const {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, "iterative_sampling", "expects x of shape [B, n, ", input_dim_,
             "], got ", shape_str(x.shape()));
  const int64_t b = x.size(0), n = x.size(1), f = 3 * input_dim_;
  check_token_mask(valid, b, n, "iterative_sampling", "mask");
  if (given.defined()) check_token_mask(given, b, n, "iterative_sampling", "selection z");
  if (n == 0) return {zeros({b, 0}, x.dtype(), x.device()), zeros({b, 0}, DType::U8, x.device())};

  // The f_i blocks of both layers for every token at once (one GEMM each);
  // only the h_{i-1} and z_i blocks wait for the previous step.
  const Tensor& wp = proj_.weight;
  const Tensor& wr = rnn_.weight;
  Tensor proj_f = steps_first(pooled_features_linear(x, valid, narrow(wp, 1, state_, f), proj_.bias));
  Tensor rnn_f = steps_first(pooled_features_linear(x, valid, narrow(wr, 1, 0, f), rnn_.bias));
  Tensor proj_h = narrow(wp, 1, 0, state_);
  Tensor rnn_zh = narrow(wr, 1, f, 1 + state_);
  Tensor valid_steps = steps_first(valid);
  Tensor given_steps = given.defined() ? steps_first(given) : Tensor();

  const bool draws = !given.defined() && !select_all_ && (training() || eval_ == RssEval::Sample);
  // One seed per forward; step i draws from the i-th seed of its generator.
  Generator steps(draws ? noise_->derive_seed() : 0);

  Tensor h = zeros({b, state_}, x.dtype(), x.device());
  std::vector<Tensor> logits, chosen;
  for (int64_t i = 0; i < n; ++i) {
    Tensor valid_i = step(valid_steps, i);  // [B]
    Tensor pre = step(proj_f, i) + linear(h, proj_h);
    Tensor a = squeeze(out_.forward(activate(act_, pre)), -1);  // [B]
    Tensor z = given.defined() ? mask_and(step(given_steps, i), valid_i)
               : select_all_      ? valid_i
                                  : select_tokens(a, valid_i, draws ? &steps : nullptr);
    Tensor zf = unsqueeze(cast(z, x.dtype()), 1);  // [B, 1]
    Tensor next = tanh(step(rnn_f, i) + linear(Concat({zf, h}), rnn_zh));
    // A padded position leaves the state as it was.
    h = where(unsqueeze(valid_i, 1), next, h);
    logits.push_back(a);
    chosen.push_back(z);
  }
  return {stack(logits, 1), stack(chosen, 1)};
}

Tensor IterativeSampler::logits_along(const Tensor& x, const Tensor& valid, const Tensor& z) const {
  ATTN_CHECK(z.defined(), "iterative_sampling", "logits_along needs a selection z");
  return run(x, valid, z).logits;
}

RssSample IterativeSampler::forward(const Tensor& x, const Tensor& valid) const {
  Recurrence r = run(x, valid, Tensor());
  RssSample s;
  s.logits = r.logits;
  s.z = r.z;
  s.log_pi = rss_log_prob(r.logits, r.z, valid);
  s.fraction = rss_selected_fraction(r.z, valid, x.dtype());
  return s;
}

}  // namespace attn
