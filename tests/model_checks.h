// Checks every mechanism's tests share: an end-to-end float64 gradcheck over
// all parameters and inputs, and padding invariance.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "attn/engine/random.h"
#include "attn/models/encoder.h"
#include "attn/models/masks.h"
#include "attn/ops/gradcheck.h"
#include "attn/ops/join/join.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace testing_support {

// Gradchecks f (which reads `x` and the module's parameters) with respect to
// x and every parameter, at the registry's default tolerances. Parameters
// whose names start with one of `unused_prefixes` are allowed no gradient
// (a tagging loss never reaches the sentence readout).
inline void expect_gradcheck(const Module& module, const Tensor& x, const std::function<Tensor()>& f,
                             const std::vector<std::string>& unused_prefixes = {}) {
  OpCase c;
  c.label = "module";
  c.inputs.push_back(x);
  for (const Tensor& p : module.parameters()) c.inputs.push_back(p);
  c.fn = [f](const std::vector<Tensor>&) { return f(); };
  CaseResult r = gradcheck_case(c, Tolerance{});
  EXPECT_TRUE(r.passed) << r.failure << " (max abs error " << r.max_abs_error << ")";
  // Every parameter must receive some gradient, or it is dead weight.
  Tensor y = f();
  Generator g(5);
  y.backward(rand_uniform(y.shape(), -1, 1, g, y.dtype()));
  for (const auto& [name, p] : module.named_parameters()) {
    bool nonzero = false;
    if (p.grad().defined())
      for (double v : p.grad().to_vector()) nonzero = nonzero || v != 0.0;
    bool exempt = false;
    for (const std::string& prefix : unused_prefixes) exempt = exempt || name.rfind(prefix, 0) == 0;
    if (!exempt) {
      EXPECT_TRUE(nonzero) << "parameter '" << name << "' gets no gradient";
    }
    p.zero_grad();
  }
  x.zero_grad();
}

// Both outputs of an encoder as one vector, so one Jacobian covers them.
inline Tensor flat_outputs(const EncoderOutput& o) {
  return concat({reshape(o.tokens, {-1}), reshape(o.sentence, {-1})}, 0);
}

// A float64 leaf x [B, n, d] from U(-1, 1).
inline Tensor random_input(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  return rand_uniform(shape, -1, 1, g, DType::F64).set_requires_grad(true);
}

// Overwriting the embeddings of padded positions with large values changes
// no valid token output and no sentence output; everything stays finite.
inline void expect_padding_invariant(Encoder& encoder, const Tensor& x, const Tensor& mask) {
  EncoderOutput a = encoder.encode(x.detach(), mask);
  Generator g(99);
  Tensor noisy = rand_uniform(x.shape(), -50, 50, g, x.dtype());
  const int64_t b = x.size(0), n = x.size(1), d = x.size(2);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t t = 0; t < n; ++t)
      if (mask.at({i, t}) != 0)
        for (int64_t k = 0; k < d; ++k) write_element(noisy, (i * n + t) * d + k, x.at({i, t, k}));
  EncoderOutput c = encoder.encode(noisy, mask);
  ASSERT_EQ(a.tokens.shape(), c.tokens.shape());
  std::vector<double> ta = a.tokens.to_vector(), tc = c.tokens.to_vector();
  const int64_t dt = a.tokens.size(2);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t t = 0; t < n; ++t)
      for (int64_t k = 0; k < dt; ++k) {
        size_t idx = static_cast<size_t>((i * n + t) * dt + k);
        ASSERT_TRUE(std::isfinite(tc[idx]));
        if (mask.at({i, t}) != 0) {
          ASSERT_NEAR(ta[idx], tc[idx], 1e-9) << "token " << t << " of example " << i;
        } else {
          ASSERT_EQ(tc[idx], 0.0) << "padded output must be zero";
        }
      }
  std::vector<double> sa = a.sentence.to_vector(), sc = c.sentence.to_vector();
  for (size_t k = 0; k < sa.size(); ++k) {
    ASSERT_TRUE(std::isfinite(sc[k]));
    ASSERT_NEAR(sa[k], sc[k], 1e-9);
  }
}

// Tokens a (before) and b (after an edit of token `edit`) of a bidirectional
// encoder, [1, n, 2 * hidden] with the forward half first: the forward half
// reads tokens up to its own, so it may change only at and after the edit,
// and the backward half only at and before it. Unchanged units must match
// exactly (one path run twice); the edited token itself must move.
inline void expect_each_direction_sees_its_side(const Tensor& a, const Tensor& b, int64_t edit, int64_t hidden) {
  const int64_t n = a.size(1);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < 2 * hidden; ++j) {
      const bool forward_half = j < hidden;
      const bool may_change = forward_half ? t >= edit : t <= edit;
      if (!may_change) {
        EXPECT_EQ(a.at({0, t, j}), b.at({0, t, j})) << "token " << t << " unit " << j;
      }
    }
  double moved = 0;
  for (int64_t j = 0; j < 2 * hidden; ++j) moved += std::abs(a.at({0, edit, j}) - b.at({0, edit, j}));
  EXPECT_GT(moved, 1e-9);
}

// d sum(pick(f(x))) / d x for a fresh leaf copy of x: which inputs an output reaches.
inline Tensor input_gradient(const Tensor& x_value, const std::function<Tensor(const Tensor&)>& f,
                             const std::function<Tensor(const Tensor&)>& pick) {
  Tensor x = x_value.detach().set_requires_grad(true);
  sum(pick(f(x))).backward();
  return x.grad();
}

// t[b, j, :] of a [B, n, d] tensor as [d].
inline Tensor token(const Tensor& t, int64_t b, int64_t j) {
  return reshape(narrow(narrow(t, 0, b, 1), 1, j, 1), {-1});
}

}  // namespace testing_support
}  // namespace attn
