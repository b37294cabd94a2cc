// The CRF op family (ops/crf/crf.h) against brute force over every tag path
// of small sentences: the NLL (log Z minus the gold score), the Viterbi path
// (the argmax), the parameter gradients (expected minus observed counts);
// a float32 sentence of 2000 tokens against float64; bad operands refused;
// and, where a GPU (or the emulated one) is present, CUDA against the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/random.h"
#include "attn/ops/crf/crf.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::error_of;

// Operands of one problem, float64 on the CPU.
struct Problem {
  int64_t B, n, K;
  std::vector<int64_t> lengths;
  Tensor emissions, transitions, start, end, tags, mask;
  std::vector<double> e, A, s, f;  // the same values on the host, for brute force
};

Problem make_problem(int64_t n, int64_t K, const std::vector<int64_t>& lengths, uint64_t seed, DType dtype = DType::F64) {
  Generator gen(seed);
  Problem p;
  p.B = static_cast<int64_t>(lengths.size()), p.n = n, p.K = K, p.lengths = lengths;
  p.emissions = rand_uniform({p.B, n, K}, -2, 2, gen, dtype);
  p.transitions = rand_uniform({K, K}, -1, 1, gen, dtype);
  p.start = rand_uniform({K}, -1, 1, gen, dtype);
  p.end = rand_uniform({K}, -1, 1, gen, dtype);
  std::vector<int64_t> tags;
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t t = 0; t < n; ++t)
      tags.push_back(t < lengths[b] ? static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(K)) : -100);
  p.tags = from_indices(tags, {p.B, n});
  p.mask = samples::length_mask(lengths, n);
  p.e = p.emissions.to_vector(), p.A = p.transitions.to_vector();
  p.s = p.start.to_vector(), p.f = p.end.to_vector();
  return p;
}

// Every path of sentence b, with its score s(y) written from the definition.
struct Paths {
  std::vector<std::vector<int64_t>> paths;
  std::vector<double> scores;
};

double path_score(const Problem& p, int64_t b, const std::vector<int64_t>& y) {
  const int64_t L = static_cast<int64_t>(y.size());
  double score = p.s[y[0]] + p.f[y[L - 1]];
  for (int64_t t = 0; t < L; ++t) {
    score += p.e[(b * p.n + t) * p.K + y[t]];
    if (t > 0) score += p.A[y[t - 1] * p.K + y[t]];
  }
  return score;
}

Paths all_paths(const Problem& p, int64_t b) {
  const int64_t L = p.lengths[b];
  Paths out;
  int64_t count = 1;
  for (int64_t t = 0; t < L; ++t) count *= p.K;
  for (int64_t code = 0; code < count; ++code) {
    std::vector<int64_t> y(L);
    int64_t c = code;
    for (int64_t t = 0; t < L; ++t) y[t] = c % p.K, c /= p.K;
    out.scores.push_back(path_score(p, b, y));
    out.paths.push_back(y);
  }
  return out;
}

double log_z(const Paths& paths) {
  double m = -std::numeric_limits<double>::infinity();
  for (double s : paths.scores) m = std::max(m, s);
  double sum = 0;
  for (double s : paths.scores) sum += std::exp(s - m);
  return m + std::log(sum);
}

std::vector<int64_t> gold(const Problem& p, int64_t b) {
  const std::vector<int64_t> tags = to_indices(p.tags);
  return std::vector<int64_t>(tags.begin() + b * p.n, tags.begin() + b * p.n + p.lengths[b]);
}

TEST(CrfNll, EqualsBruteForceOverEveryPath) {
  for (int64_t K : {1, 2, 3}) {
    const Problem p = make_problem(5, K, {5, 3, 1, 0}, 11 + K);
    const std::vector<double> nll =
        crf_nll(p.emissions, p.tags, p.mask, p.transitions, p.start, p.end).to_vector();
    ASSERT_EQ(nll.size(), 4u);
    for (int64_t b = 0; b < p.B; ++b) {
      // Sums of a few dozen terms of magnitude < 20 in double: 1e-12 is
      // thousands of ulps of the result.
      const double expected = p.lengths[b] == 0 ? 0.0 : log_z(all_paths(p, b)) - path_score(p, b, gold(p, b));
      EXPECT_NEAR(nll[b], expected, 1e-12 * (1 + std::abs(expected))) << "K " << K << ", sentence " << b;
      if (p.lengths[b] > 0 && K > 1) {
        EXPECT_GT(nll[b], 0.0) << "a proper distribution over >1 paths";
      }
    }
  }
}

TEST(CrfNll, WithoutAMaskEveryTokenIsValid) {
  Problem p = make_problem(3, 3, {3, 3}, 5);
  const Tensor with_mask = crf_nll(p.emissions, p.tags, p.mask, p.transitions, p.start, p.end);
  const Tensor without = crf_nll(p.emissions, p.tags, Tensor(), p.transitions, p.start, p.end);
  EXPECT_EQ(with_mask.to_vector(), without.to_vector());
}

TEST(CrfViterbi, EqualsTheBruteForceArgmax) {
  for (uint64_t seed : {1, 2, 3}) {
    const Problem p = make_problem(6, 3, {6, 4, 1, 0}, seed);
    const std::vector<int64_t> path = to_indices(crf_viterbi(p.emissions, p.mask, p.transitions, p.start, p.end));
    for (int64_t b = 0; b < p.B; ++b) {
      std::vector<int64_t> best;
      if (p.lengths[b] > 0) {
        const Paths all = all_paths(p, b);
        size_t arg = 0;
        for (size_t i = 1; i < all.scores.size(); ++i)
          if (all.scores[i] > all.scores[arg]) arg = i;
        best = all.paths[arg];
      }
      for (int64_t t = 0; t < p.n; ++t) {
        const int64_t expected = t < p.lengths[b] ? best[t] : -1;
        EXPECT_EQ(path[b * p.n + t], expected) << "seed " << seed << ", sentence " << b << ", token " << t;
      }
    }
  }
}

// d sum_b nll_b / dA(i, j) = E[count of (i, j)] - gold count of (i, j), and
// likewise for start (the first tag) and end (the last), with expectations
// over every path of each sentence.
TEST(CrfNll, ParameterGradientsAreExpectedMinusObservedCounts) {
  Problem p = make_problem(4, 3, {4, 2, 1, 0}, 23);
  p.transitions.set_requires_grad(true);
  p.start.set_requires_grad(true);
  p.end.set_requires_grad(true);
  sum(crf_nll(p.emissions, p.tags, p.mask, p.transitions, p.start, p.end)).backward();
  const int64_t K = p.K;
  std::vector<double> dA(K * K, 0.0), ds(K, 0.0), de(K, 0.0);
  for (int64_t b = 0; b < p.B; ++b) {
    const int64_t L = p.lengths[b];
    if (L == 0) continue;
    const Paths all = all_paths(p, b);
    const double z = log_z(all);
    auto add = [&](const std::vector<int64_t>& y, double w) {
      ds[y[0]] += w;
      de[y[L - 1]] += w;
      for (int64_t t = 1; t < L; ++t) dA[y[t - 1] * K + y[t]] += w;
    };
    for (size_t k = 0; k < all.paths.size(); ++k) add(all.paths[k], std::exp(all.scores[k] - z));
    add(gold(p, b), -1.0);
  }
  auto expect_all_near = [](const Tensor& got, const std::vector<double>& want, const char* what) {
    const std::vector<double> g = got.to_vector();
    ASSERT_EQ(g.size(), want.size()) << what;
    double norm = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_NEAR(g[i], want[i], 1e-12) << what << "[" << i << "]";
      norm += std::abs(g[i]);
    }
    EXPECT_GT(norm, 0.1) << what << ": a gradient that checks nothing";
  };
  expect_all_near(p.transitions.grad(), dA, "transitions");
  expect_all_near(p.start.grad(), ds, "start");
  expect_all_near(p.end.grad(), de, "end");
}

TEST(CrfNll, PaddingAndEmptySentencesGetNoGradient) {
  Problem p = make_problem(4, 3, {2, 0}, 31);
  p.emissions.set_requires_grad(true);
  sum(crf_nll(p.emissions, p.tags, p.mask, p.transitions, p.start, p.end)).backward();
  const std::vector<double> g = p.emissions.grad().to_vector();
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t t = 0; t < p.n; ++t) {
      double row_sum = 0, row_abs = 0;
      for (int64_t k = 0; k < p.K; ++k) row_sum += g[(b * p.n + t) * p.K + k], row_abs += std::abs(g[(b * p.n + t) * p.K + k]);
      if (t >= p.lengths[b]) {
        EXPECT_EQ(row_abs, 0.0) << "sentence " << b << ", padded token " << t;
      } else {
        // Marginals sum to 1, the gold indicator to 1; each marginal is exp of
        // a sum of terms of magnitude ~10, good to ~1e-15 relative.
        EXPECT_NEAR(row_sum, 0.0, 1e-12) << "sentence " << b << ", token " << t;
        EXPECT_GT(row_abs, 0.0);
      }
    }
}

// The op runs its recursions in float64 for float32 inputs too, so on the
// same (float32-representable) inputs the float32 NLL differs from the
// float64 one only by the rounding of the result, |nll| 2^-24, plus
// float64's own rounding over the 2000 steps (2000 * K * 2^-53 * |log Z|,
// under 1e-9 here); two ulps are allowed. The emission gradients are
// marginals minus indicators, in [-1, 1]: one float32 rounding, 2^-24; the
// transitions' sums over tokens are rounded once after the float64 sum.
TEST(CrfNll, Float32SentenceOf2000TokensMatchesFloat64) {
  const int64_t n = 2000, K = 5;
  Problem p32 = make_problem(n, K, {n, 1500}, 41, DType::F32);
  Problem p64 = p32;
  for (Tensor* t : {&p64.emissions, &p64.transitions, &p64.start, &p64.end}) *t = cast(*t, DType::F64);
  std::vector<std::vector<double>> nll, d_emissions, d_transitions;
  for (Problem* p : {&p32, &p64}) {
    p->emissions.set_requires_grad(true);
    p->transitions.set_requires_grad(true);
    Tensor y = crf_nll(p->emissions, p->tags, p->mask, p->transitions, p->start, p->end);
    sum(y).backward();
    nll.push_back(y.to_vector());
    d_emissions.push_back(p->emissions.grad().to_vector());
    d_transitions.push_back(p->transitions.grad().to_vector());
  }
  const double u = std::ldexp(1.0, -24);
  for (size_t b = 0; b < 2; ++b) {
    ASSERT_TRUE(std::isfinite(nll[0][b]));
    EXPECT_GT(nll[1][b], 100.0) << "a long sentence's NLL is large, so the test is about magnitude";
    EXPECT_NEAR(nll[0][b], nll[1][b], 2 * u * std::abs(nll[1][b]) + 1e-9) << "sentence " << b;
  }
  for (size_t i = 0; i < d_emissions[1].size(); ++i) {
    ASSERT_TRUE(std::isfinite(d_emissions[0][i]));
    ASSERT_NEAR(d_emissions[0][i], d_emissions[1][i], 2 * u) << "emission gradient " << i;
  }
  for (size_t i = 0; i < d_transitions[1].size(); ++i)
    EXPECT_NEAR(d_transitions[0][i], d_transitions[1][i], 2 * u * std::abs(d_transitions[1][i]) + 1e-9) << i;
}

TEST(CrfNll, RefusesBadOperandsNamingThem) {
  const Problem p = make_problem(3, 3, {3, 2}, 7);
  auto nll_error = [&](const Tensor& e, const Tensor& tags, const Tensor& mask, const Tensor& A, const Tensor& s,
                       const Tensor& f) { return error_of([&] { crf_nll(e, tags, mask, A, s, f); }); };
  EXPECT_NE(nll_error(reshape(p.emissions, {6, 3}), p.tags, p.mask, p.transitions, p.start, p.end)
                .find("emissions must be a float32 or float64 tensor [B, n, K]"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, p.tags, p.mask, zeros({3, 2}, DType::F64), p.start, p.end)
                .find("transitions must be [3, 3]"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, p.tags, p.mask, p.transitions, zeros({4}, DType::F64), p.end).find("start must be [3]"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, p.tags, p.mask, p.transitions, p.start, zeros({3}, DType::F32)).find("end is float32"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, from_indices({0, 1, 2}, {1, 3}), p.mask, p.transitions, p.start, p.end)
                .find("tags must be int64 [2, 3]"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, from_indices({0, 1, 2, 0, 3, -100}, {2, 3}), p.mask, p.transitions, p.start, p.end)
                .find("tag 3 of sentence 1, token 1 is out of range [0, 3)"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, from_indices({0, 1, -1, 0, 0, -100}, {2, 3}), p.mask, p.transitions, p.start, p.end)
                .find("tag -1 of sentence 0, token 2 is out of range"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, p.tags, samples::u8_mask({1, 0, 1, 1, 1, 0}, {2, 3}), p.transitions, p.start, p.end)
                .find("not a prefix mask"),
            std::string::npos);
  EXPECT_NE(nll_error(p.emissions, p.tags, zeros({2, 3}, DType::F32), p.transitions, p.start, p.end)
                .find("mask must be uint8 [2, 3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { crf_viterbi(zeros({2, 3, 0}, DType::F64), p.mask, zeros({0, 0}, DType::F64),
                                       zeros({0}, DType::F64), zeros({0}, DType::F64)); })
                .find("no tags (K = 0)"),
            std::string::npos);
}

// Viterbi has no gradient, so the registry's CUDA comparison does not reach
// it: its paths must equal the CPU's exactly (the recursion adds and
// compares, identically on both devices, lowest index on ties). 40 tags
// take two warps per block; the NLL and its gradients are compared too.
TEST(CudaCrf, ViterbiAndNllMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  for (DType dt : {DType::F64, DType::F32}) {
    Problem p = make_problem(5, 40, {5, 3, 1, 0}, 53, dt);
    auto on = [&](Device d) {
      Tensor e = p.emissions.detach().to(d).set_requires_grad(true);
      Tensor A = p.transitions.detach().to(d).set_requires_grad(true);
      Tensor y = crf_nll(e, p.tags.to(d), p.mask.to(d), A, p.start.to(d), p.end.to(d));
      sum(y).backward();
      const Tensor path = crf_viterbi(e.detach(), p.mask.to(d), A.detach(), p.start.to(d), p.end.to(d));
      return std::vector<Tensor>{y.to(Device::CPU), e.grad().to(Device::CPU), A.grad().to(Device::CPU),
                                 path.to(Device::CPU)};
    };
    const std::vector<Tensor> cpu = on(Device::CPU), gpu = on(Device::CUDA);
    EXPECT_EQ(to_indices(gpu[3]), to_indices(cpu[3])) << dtype_name(dt);
    // float64 recursions on both devices; exp and log differ by an ulp or
    // two, and the float32 results are rounded once.
    const double tol = dt == DType::F64 ? 1e-10 : 1e-5;
    for (int k = 0; k < 3; ++k)
      EXPECT_LE(testing_support::max_abs_diff(gpu[k], cpu[k]), tol * (1 + testing_support::max_abs(cpu[k])))
          << dtype_name(dt) << " output " << k;
  }
}

}  // namespace
}  // namespace attn
