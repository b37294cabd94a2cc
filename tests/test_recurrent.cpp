// The recurrent sequence op (ops/recurrent/recurrent.h) against a per-step
// loop written from the cells' equations in float64, its exact lengths
// (padding never read, padded outputs zero), and float32 at extreme inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/ops/recurrent/recurrent.h"
#include "attn/util/error.h"

namespace attn {
namespace {

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The cells written from their papers' and libraries' equations, one sentence
// at a time, over its valid tokens (reversed for the backward direction).
std::vector<double> reference(const Tensor& xw_t, const Tensor& w_t, const Tensor& b_t,
                              const std::vector<int64_t>& lens, RecurrentCell cell, CellForm form, bool reverse) {
  const int64_t B = xw_t.size(0), n = xw_t.size(1), G = xw_t.size(2);
  const int64_t H = G / recurrent_gate_blocks(cell);
  const std::vector<double> xw = xw_t.to_vector(), w = w_t.to_vector();
  const std::vector<double> bh = b_t.defined() ? b_t.to_vector() : std::vector<double>(G, 0.0);
  std::vector<double> out(B * n * H, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h(H, 0.0), c(H, 0.0);
    for (int64_t s = 0; s < lens[b]; ++s) {
      const int64_t t = reverse ? lens[b] - 1 - s : s;
      auto x = [&](int64_t col) { return xw[(b * n + t) * G + col]; };
      // prod(v, col) = (v W)[col] for a state-like vector v.
      auto prod = [&](const std::vector<double>& v, int64_t col) {
        double acc = 0;
        for (int64_t k = 0; k < H; ++k) acc += v[k] * w[k * G + col];
        return acc;
      };
      std::vector<double> nh(H);
      if (cell == RecurrentCell::Lstm) {
        // TensorFlow BasicLSTMCell: i, j, f, o, forget bias 1; PyTorch: i, f, g, o.
        const bool tf = form == CellForm::TensorFlow;
        const int64_t bi = 0, bg = tf ? 1 : 2, bf = tf ? 2 : 1, bo = 3;
        const double fb = tf ? 1.0 : 0.0;
        for (int64_t j = 0; j < H; ++j) {
          auto pre = [&](int64_t blk) { return x(blk * H + j) + prod(h, blk * H + j) + bh[blk * H + j]; };
          const double i = sig(pre(bi)), f = sig(pre(bf) + fb), g = std::tanh(pre(bg)), o = sig(pre(bo));
          c[j] = f * c[j] + i * g;
          nh[j] = o * std::tanh(c[j]);
        }
      } else if (form == CellForm::PyTorch) {
        for (int64_t j = 0; j < H; ++j) {
          const double r = sig(x(j) + prod(h, j) + bh[j]);
          const double z = sig(x(H + j) + prod(h, H + j) + bh[H + j]);
          const double nn = std::tanh(x(2 * H + j) + r * (prod(h, 2 * H + j) + bh[2 * H + j]));
          nh[j] = (1 - z) * nn + z * h[j];
        }
      } else {  // TensorFlow GRUCell: the candidate reads r * h
        std::vector<double> r(H), u(H), rh(H);
        for (int64_t j = 0; j < H; ++j) {
          r[j] = sig(x(j) + prod(h, j));
          u[j] = sig(x(H + j) + prod(h, H + j));
          rh[j] = r[j] * h[j];
        }
        for (int64_t j = 0; j < H; ++j) {
          const double cand = std::tanh(x(2 * H + j) + prod(rh, 2 * H + j));
          nh[j] = u[j] * h[j] + (1 - u[j]) * cand;
        }
      }
      h = nh;
      for (int64_t j = 0; j < H; ++j) out[(b * n + t) * H + j] = h[j];
    }
  }
  return out;
}

struct Form {
  RecurrentCell cell;
  CellForm form;
};
const Form kForms[] = {{RecurrentCell::Lstm, CellForm::TensorFlow},
                       {RecurrentCell::Lstm, CellForm::PyTorch},
                       {RecurrentCell::Gru, CellForm::TensorFlow},
                       {RecurrentCell::Gru, CellForm::PyTorch}};

TEST(Recurrent, MatchesPerStepLoopOfTheEquations) {
  const std::vector<int64_t> lens{5, 3, 1, 0};
  const int64_t n = 5, H = 3;
  const Tensor mask = length_mask(lens, n);
  Generator gen(17);
  for (const Form& f : kForms)
    for (bool reverse : {false, true}) {
      const int64_t G = recurrent_gate_blocks(f.cell) * H;
      const Tensor xw = rand_uniform({4, n, G}, -2, 2, gen, DType::F64);
      const Tensor w = rand_uniform({H, G}, -1, 1, gen, DType::F64);
      const Tensor b = f.form == CellForm::PyTorch ? rand_uniform({G}, -1, 1, gen, DType::F64) : Tensor();
      const std::vector<double> got = recurrent_sequence(xw, w, b, mask, f.cell, f.form, reverse).to_vector();
      const std::vector<double> want = reference(xw, w, b, lens, f.cell, f.form, reverse);
      ASSERT_EQ(got.size(), want.size());
      // float64, a few dozen operations per value, each within an ulp.
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 1e-13) << "form " << static_cast<int>(f.form) << " cell "
                                            << static_cast<int>(f.cell) << " reverse " << reverse << " at " << i;
    }
}

// NaN and Inf in padded positions of xw change neither the outputs (padded
// ones exactly 0) nor any gradient; the padded rows of xw's gradient are 0.
TEST(Recurrent, PaddingIsNeverRead) {
  const std::vector<int64_t> lens{4, 2, 0};
  const int64_t n = 4, H = 2;
  const Tensor mask = length_mask(lens, n);
  for (const Form& f : kForms)
    for (bool reverse : {false, true}) {
      const int64_t G = recurrent_gate_blocks(f.cell) * H;
      Generator gen(3);
      const Tensor clean = rand_uniform({3, n, G}, -1, 1, gen, DType::F64);
      const Tensor w = rand_uniform({H, G}, -1, 1, gen, DType::F64);
      std::vector<double> dirty_v = clean.to_vector();
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t t = lens[b]; t < n; ++t)
          for (int64_t k = 0; k < G; ++k)
            dirty_v[(b * n + t) * G + k] =
                k % 2 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
      const Tensor dirty = from_vector(dirty_v, clean.shape(), DType::F64);
      std::vector<std::vector<double>> outs, gx, gw;
      for (const Tensor& x0 : {clean, dirty}) {
        const Tensor x = x0.detach().set_requires_grad(true);
        const Tensor wl = w.detach().set_requires_grad(true);
        const Tensor y = recurrent_sequence(x, wl, Tensor(), mask, f.cell, f.form, reverse);
        Generator g2(8);
        y.backward(rand_uniform(y.shape(), -1, 1, g2, DType::F64));
        outs.push_back(y.to_vector());
        gx.push_back(x.grad().to_vector());
        gw.push_back(wl.grad().to_vector());
      }
      // The same kernels on the same valid values: the same bits.
      EXPECT_EQ(outs[0], outs[1]);
      EXPECT_EQ(gx[0], gx[1]);
      EXPECT_EQ(gw[0], gw[1]);
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t t = lens[b]; t < n; ++t) {
          for (int64_t j = 0; j < H; ++j) EXPECT_EQ(outs[1][(b * n + t) * H + j], 0.0);
          for (int64_t k = 0; k < G; ++k) EXPECT_EQ(gx[1][(b * n + t) * G + k], 0.0);
        }
    }
}

// Every sentence empty: zero outputs and zero (not missing) gradients.
TEST(Recurrent, AllEmptySentences) {
  Generator gen(4);
  const Tensor x = rand_uniform({2, 3, 8}, -1, 1, gen, DType::F64).set_requires_grad(true);
  const Tensor w = rand_uniform({2, 8}, -1, 1, gen, DType::F64).set_requires_grad(true);
  const Tensor y =
      recurrent_sequence(x, w, Tensor(), length_mask({0, 0}, 3), RecurrentCell::Lstm, CellForm::TensorFlow, false);
  for (double v : y.to_vector()) EXPECT_EQ(v, 0.0);
  y.backward(ones(y.shape(), DType::F64));
  for (double v : x.grad().to_vector()) EXPECT_EQ(v, 0.0);
  for (double v : w.grad().to_vector()) EXPECT_EQ(v, 0.0);
}

// float32 stays finite when the pre-activations are huge: the gates saturate
// (stable sigmoid, tanh) instead of overflowing.
TEST(Recurrent, Float32FiniteUnderExtremeInputs) {
  for (const Form& f : kForms)
    for (double big : {1e30, -1e30}) {
      const int64_t G = recurrent_gate_blocks(f.cell) * 4;
      const Tensor x = full({2, 5, G}, big, DType::F32).set_requires_grad(true);
      const Tensor w = full({4, G}, big, DType::F32).set_requires_grad(true);
      const Tensor y = recurrent_sequence(x, w, Tensor(), length_mask({5, 2}, 5), f.cell, f.form, true);
      y.backward(ones(y.shape(), DType::F32));
      for (double v : y.to_vector()) ASSERT_TRUE(std::isfinite(v));
      for (double v : x.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
    }
}

TEST(Recurrent, ErrorsNameTheShapes) {
  const Tensor x = zeros({2, 3, 8}, DType::F64);
  try {
    recurrent_sequence(x, zeros({3, 8}, DType::F64), Tensor(), Tensor(), RecurrentCell::Lstm, CellForm::TensorFlow,
                       false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w_hh must be [2, 8]"), std::string::npos) << e.what();
  }
  const Tensor holes = from_vector({1, 0, 1, 1, 1, 1}, {2, 3}, DType::F32);
  Tensor mask = empty({2, 3}, DType::U8);
  for (int64_t i = 0; i < 6; ++i) mask.data<uint8_t>()[i] = static_cast<uint8_t>(holes.to_vector()[i]);
  try {
    recurrent_sequence(x, zeros({2, 8}, DType::F64), Tensor(), mask, RecurrentCell::Lstm, CellForm::TensorFlow,
                       false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a prefix mask"), std::string::npos) << e.what();
  }
  EXPECT_THROW(recurrent_sequence(x, zeros({2, 8}, DType::F64), zeros({8}, DType::F64), Tensor(),
                                  RecurrentCell::Lstm, CellForm::TensorFlow, false),
               Error);
}

}  // namespace
}  // namespace attn
