#include "attn/train/metrics_significance.h"

#include <cmath>
#include <limits>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/train/metrics_bleu.h"

namespace attn {

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Sample variance (n - 1 in the denominator).
double variance_of(const std::vector<double>& v, double mean) {
  double s = 0;
  for (double x : v) s += (x - mean) * (x - mean);
  return s / static_cast<double>(v.size() - 1);
}

void check_finite(const std::vector<double>& v, const char* op, const char* name) {
  for (double x : v) ATTN_CHECK(std::isfinite(x), op, name, " holds a value that is not finite: ", x);
}

// t and p from a difference and its standard error, with the degenerate
// zero-error case decided by the sign of the difference.
void finish(TTestResult& r, double standard_error) {
  if (standard_error == 0) {
    r.t = r.mean_difference == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), r.mean_difference);
    r.p_value = r.mean_difference == 0 ? 1 : 0;
    return;
  }
  r.t = r.mean_difference / standard_error;
  r.p_value = student_t_two_sided_p(r.t, r.df);
}

// The continued fraction of I_x(a, b), evaluated with the modified Lentz
// method; converges quickly for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double x, double a, double b) {
  const double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double f = d;
  for (int m = 1; m <= 10000; ++m) {
    // Even step: m (b - m) x / ((a + 2m - 1)(a + 2m)).
    double num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::fabs(d) < tiny) d = tiny;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    f *= c * d;
    // Odd step: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::fabs(d) < tiny) d = tiny;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = c * d;
    f *= step;
    if (std::fabs(step - 1) < eps) return f;
  }
  throw Error("regularized_incomplete_beta: the continued fraction did not converge for x = " + std::to_string(x) +
              ", a = " + std::to_string(a) + ", b = " + std::to_string(b));
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
  ATTN_CHECK(a > 0 && b > 0, "regularized_incomplete_beta", "a and b must be positive, got ", a, " and ", b);
  ATTN_CHECK(x >= 0 && x <= 1, "regularized_incomplete_beta", "x must lie in [0, 1], got ", x);
  if (x == 0 || x == 1) return x;
  // x^a (1-x)^b / (a B(a, b)), in logs to stay finite for large a, b.
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
  // I_x(a, b) = 1 - I_{1-x}(b, a): the fraction converges on the other side.
  return 1 - std::exp(log_front) * beta_continued_fraction(1 - x, b, a) / b;
}

double student_t_two_sided_p(double t, double df) {
  ATTN_CHECK(df > 0, "student_t_two_sided_p", "degrees of freedom must be positive, got ", df);
  ATTN_CHECK(!std::isnan(t), "student_t_two_sided_p", "t is NaN");
  if (std::isinf(t)) return 0;
  return regularized_incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

TTestResult paired_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  ATTN_CHECK(a.size() == b.size(), "paired_t_test", "a paired test needs as many runs of each system, got ",
             a.size(), " and ", b.size());
  ATTN_CHECK(a.size() >= 2, "paired_t_test", "needs at least 2 pairs of runs, got ", a.size());
  check_finite(a, "paired_t_test", "a");
  check_finite(b, "paired_t_test", "b");
  std::vector<double> d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
  TTestResult r;
  r.n_a = r.n_b = static_cast<int64_t>(a.size());
  r.mean_difference = mean_of(d);
  r.df = static_cast<double>(d.size() - 1);
  finish(r, std::sqrt(variance_of(d, r.mean_difference) / static_cast<double>(d.size())));
  return r;
}

TTestResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  ATTN_CHECK(a.size() >= 2 && b.size() >= 2, "welch_t_test", "needs at least 2 runs of each system, got ", a.size(),
             " and ", b.size());
  check_finite(a, "welch_t_test", "a");
  check_finite(b, "welch_t_test", "b");
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double ma = mean_of(a), mb = mean_of(b);
  const double va = variance_of(a, ma) / na, vb = variance_of(b, mb) / nb;  // squared standard errors
  TTestResult r;
  r.n_a = static_cast<int64_t>(a.size());
  r.n_b = static_cast<int64_t>(b.size());
  r.mean_difference = mb - ma;
  r.df = va + vb > 0 ? (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1)) : na + nb - 2;
  finish(r, std::sqrt(va + vb));
  return r;
}

BootstrapResult paired_bootstrap(const std::vector<std::string>& hyps_a, const std::vector<std::string>& hyps_b,
                                 const std::vector<std::string>& refs, int64_t samples, uint64_t seed) {
  ATTN_CHECK(hyps_a.size() == refs.size() && hyps_b.size() == refs.size(), "paired_bootstrap",
             "the two systems and the references must have as many sentences, got ", hyps_a.size(), ", ",
             hyps_b.size(), " and ", refs.size());
  ATTN_CHECK(!refs.empty(), "paired_bootstrap", "the test set is empty");
  ATTN_CHECK(samples >= 1, "paired_bootstrap", "needs at least 1 sample, got ", samples);
  const size_t n = refs.size();
  std::vector<BleuStats> sa(n), sb(n);
  BleuStats total_a, total_b;
  for (size_t i = 0; i < n; ++i) {
    sa[i] = sentence_bleu_stats(hyps_a[i], refs[i]);
    sb[i] = sentence_bleu_stats(hyps_b[i], refs[i]);
    total_a += sa[i];
    total_b += sb[i];
  }
  BootstrapResult r;
  r.bleu_a = bleu_from_stats(total_a).bleu;
  r.bleu_b = bleu_from_stats(total_b).bleu;
  r.samples = samples;
  Generator gen(seed);
  std::vector<double> diffs(static_cast<size_t>(samples));
  for (int64_t s = 0; s < samples; ++s) {
    BleuStats a, b;
    for (size_t k = 0; k < n; ++k) {
      // Rejection sampling: an unbiased index even when n does not divide 2^64.
      const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
      uint64_t x;
      do x = gen.next_u64();
      while (x >= limit);
      a += sa[x % n];
      b += sb[x % n];
    }
    const double ba = bleu_from_stats(a).bleu, bb = bleu_from_stats(b).bleu;
    (ba > bb ? r.wins_a : bb > ba ? r.wins_b : r.ties) += 1;
    diffs[static_cast<size_t>(s)] = std::fabs(bb - ba);
  }
  const int64_t better_wins = r.bleu_a > r.bleu_b ? r.wins_a : r.bleu_b > r.bleu_a ? r.wins_b : 0;
  r.p_value = 1 - static_cast<double>(better_wins) / static_cast<double>(samples);
  double mean_diff = 0;
  for (double d : diffs) mean_diff += d;
  mean_diff /= static_cast<double>(samples);
  const double real = std::fabs(r.bleu_b - r.bleu_a);
  int64_t above = 0;
  for (double d : diffs) above += d - mean_diff > real;
  r.p_value_centred = static_cast<double>(above + 1) / static_cast<double>(samples + 1);
  return r;
}

}  // namespace attn
