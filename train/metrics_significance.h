// Whether one translation system beats another: paired bootstrap
// resampling over the sentences of one test set (Koehn 2004, "Statistical
// Significance Tests for Machine Translation Evaluation"), and t-tests over
// the BLEU of several training runs, which is what seed 001's Table 6
// reports ("p-value: 0.001 (6 runs)"). docs/training.md, "BLEU and significance".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct BootstrapResult {
  double bleu_a = 0, bleu_b = 0;  // on the whole test set
  int64_t samples = 0;
  int64_t wins_a = 0, wins_b = 0, ties = 0;  // samples in which A (B) scored higher, or neither
  // Koehn's p-value: the fraction of samples in which the system with the
  // higher BLEU on the whole set does not score higher (1 when they tie).
  double p_value = 1;
  // sacreBLEU's --paired-bs p-value (Moses' bootstrap-hypothesis-difference-
  // significance.pl): with d_s = |BLEU_b - BLEU_a| on sample s and d the
  // whole set's difference, (#{s: d_s - mean(d_s) > d} + 1) / (samples + 1).
  double p_value_centred = 1;
};

// Draws `samples` test sets of the same size from the sentences, with
// replacement and the same draw for both systems (paired), from a Generator
// seeded with `seed`, and scores both with corpus BLEU (train/metrics_bleu.h).
// Throws attn::Error for unequal counts, an empty test set or samples < 1.
BootstrapResult paired_bootstrap(const std::vector<std::string>& hyps_a, const std::vector<std::string>& hyps_b,
                                 const std::vector<std::string>& refs, int64_t samples = 1000, uint64_t seed = 12345);

struct TTestResult {
  int64_t n_a = 0, n_b = 0;
  double mean_difference = 0;  // mean(b) - mean(a)
  double t = 0, df = 0;
  double p_value = 1;  // two-sided
};

// Paired t-test of b against a (b[i] and a[i] are one run each, paired, e.g.
// the same seed): t = mean(d) / (sd(d) / sqrt(n)), d = b - a, df = n - 1.
// Needs n >= 2 of each and equal counts (attn::Error otherwise). When every
// difference is the same, t is +-infinity and p 0 (or t 0 and p 1 when they
// are all 0).
TTestResult paired_t_test(const std::vector<double>& a, const std::vector<double>& b);

// Welch's unequal-variance t-test for unpaired runs (counts may differ, each
// >= 2): t = (mean(b) - mean(a)) / sqrt(var_a/n_a + var_b/n_b), df by
// Welch-Satterthwaite. Both variances 0: as for paired_t_test.
TTestResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// P(|T| >= |t|) for Student's t with df > 0 degrees of freedom: the
// regularised incomplete beta I_{df/(df+t^2)}(df/2, 1/2).
double student_t_two_sided_p(double t, double df);

// The regularised incomplete beta function I_x(a, b), a, b > 0, x in [0, 1]
// (continued fraction, Lentz's method).
double regularized_incomplete_beta(double x, double a, double b);

}  // namespace attn
