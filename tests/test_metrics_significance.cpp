// Paired bootstrap resampling and t-tests (train/metrics_significance.h).
// Student's t has closed forms at 1 and 2 degrees of freedom, which the
// incomplete-beta route is checked against.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/train/cli/commands.h"
#include "attn/train/metrics_significance.h"
#include "attn/util/cli_args.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::error_of;

TEST(Significance, IncompleteBetaClosedForms) {
  // I_x(1, 1) = x, I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b.
  EXPECT_NEAR(regularized_incomplete_beta(0.3, 1, 1), 0.3, 1e-12);
  EXPECT_NEAR(regularized_incomplete_beta(0.3, 3, 1), 0.027, 1e-12);
  EXPECT_NEAR(regularized_incomplete_beta(0.8, 1, 4), 1 - std::pow(0.2, 4), 1e-12);
  EXPECT_NE(error_of([] { regularized_incomplete_beta(1.5, 1, 1); }).find("[0, 1]"), std::string::npos);
}

TEST(Significance, StudentTTwoSidedP) {
  // df 1 is the Cauchy distribution: p = 1 - (2 / pi) atan|t|.
  for (double t : {0.5, 1.0, 3.0})
    EXPECT_NEAR(student_t_two_sided_p(t, 1), 1 - 2 / M_PI * std::atan(t), 1e-10) << t;
  // df 2: p = 1 - |t| / sqrt(2 + t^2).
  for (double t : {-2.0, 0.7, 5.0})
    EXPECT_NEAR(student_t_two_sided_p(t, 2), 1 - std::fabs(t) / std::sqrt(2 + t * t), 1e-10) << t;
  // Many degrees of freedom: the normal, p(1.96) = erfc(1.96 / sqrt 2).
  EXPECT_NEAR(student_t_two_sided_p(1.96, 1e7), std::erfc(1.96 / std::sqrt(2.0)), 1e-6);
  EXPECT_EQ(student_t_two_sided_p(0, 5), 1);
}

TEST(Significance, PairedTTest) {
  // d = b - a = {1, 2, 2}: mean 5/3, sample variance ((2/3)^2 + 2 (1/3)^2) / 2
  // = 1/3, standard error sqrt(1/3 / 3) = 1/3, t = 5, df 2,
  // p = 1 - 5 / sqrt(27) = 0.0377.
  const TTestResult r = paired_t_test({1, 2, 3}, {2, 4, 5});
  EXPECT_NEAR(r.mean_difference, 5.0 / 3, 1e-12);
  EXPECT_NEAR(r.t, 5, 1e-12);
  EXPECT_EQ(r.df, 2);
  EXPECT_NEAR(r.p_value, 1 - 5 / std::sqrt(27.0), 1e-10);
  // Equal differences: no spread, the sign decides.
  EXPECT_EQ(paired_t_test({1, 2}, {2, 3}).p_value, 0);
  EXPECT_EQ(paired_t_test({1, 2}, {1, 2}).p_value, 1);
  EXPECT_NE(error_of([] { paired_t_test({1, 2}, {1}); }).find("as many runs"), std::string::npos);
  EXPECT_NE(error_of([] { paired_t_test({1}, {2}); }).find("at least 2"), std::string::npos);
}

TEST(Significance, WelchTTest) {
  // a = {1, 3}, b = {4, 6}: variances 2 and 2, squared standard errors 1 and
  // 1, t = 3 / sqrt 2, df = (1 + 1)^2 / (1/1 + 1/1) = 2,
  // p = 1 - t / sqrt(2 + t^2) = 1 - 2.1213 / sqrt(6.5).
  const TTestResult r = welch_t_test({1, 3}, {4, 6});
  EXPECT_NEAR(r.t, 3 / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(r.df, 2, 1e-12);
  EXPECT_NEAR(r.p_value, 1 - r.t / std::sqrt(2 + r.t * r.t), 1e-10);
  // Unequal counts are allowed: 6 runs against 5 as in seed 001's Table 6.
  EXPECT_EQ(welch_t_test({1, 2, 3, 4, 5, 6}, {2, 3, 4, 5, 6}).n_a, 6);
}

TEST(Significance, BootstrapFindsAClearWinner) {
  // B copies the references, A gets every 4-gram wrong: B wins every sample.
  std::vector<std::string> refs, a, b;
  for (int i = 0; i < 20; ++i) {
    refs.push_back("sentence number " + std::to_string(i) + " is here today");
    b.push_back(refs.back());
    a.push_back("number sentence " + std::to_string(i) + " here is today");
  }
  const BootstrapResult r = paired_bootstrap(a, b, refs, 200, 7);
  EXPECT_NEAR(r.bleu_b, 100, 1e-9);
  EXPECT_LT(r.bleu_a, r.bleu_b);
  EXPECT_EQ(r.wins_b, 200);
  EXPECT_EQ(r.p_value, 0);
  EXPECT_EQ(r.wins_a + r.wins_b + r.ties, r.samples);
}

TEST(Significance, BootstrapOfASystemAgainstItselfIsAllTies) {
  const std::vector<std::string> refs = {"a b c d e", "f g h i j"}, hyps = {"a b c d x", "f g h i j"};
  const BootstrapResult r = paired_bootstrap(hyps, hyps, refs, 50, 1);
  EXPECT_EQ(r.ties, 50);
  EXPECT_EQ(r.p_value, 1);
}

TEST(Significance, BootstrapIsSeeded) {
  const std::vector<std::string> refs = {"a b c d e", "f g h i j", "k l m n o", "p q r s t"};
  const std::vector<std::string> a = {"a b c d e", "f g x i j", "k l m n o", "p q y s t"};
  const std::vector<std::string> b = {"a b x d e", "f g h i j", "k l m z o", "p q r s t"};
  const BootstrapResult r1 = paired_bootstrap(a, b, refs, 300, 11), r2 = paired_bootstrap(a, b, refs, 300, 11);
  EXPECT_EQ(r1.wins_a, r2.wins_a);
  EXPECT_EQ(r1.wins_b, r2.wins_b);
  EXPECT_EQ(r1.p_value, r2.p_value);
  EXPECT_EQ(r1.p_value_centred, r2.p_value_centred);
  // Each system wins some samples: the draws really vary.
  EXPECT_GT(r1.wins_a, 0);
  EXPECT_GT(r1.wins_b, 0);
  EXPECT_NE(error_of([&] { paired_bootstrap(a, b, {"x"}, 10, 1); }).find("as many sentences"), std::string::npos);
  EXPECT_NE(error_of([&] { paired_bootstrap(a, b, refs, 0, 1); }).find("at least 1 sample"), std::string::npos);
}

TEST(Significance, TTestCommand) {
  // The PairedTTest case: t = 5, df 2, p = 1 - 5 / sqrt(27) = 0.03775.
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_ttest_command({"--a", "1,2,3", "--b", "2, 4, 5"}), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("paired t-test: 3 and 3 runs, mean(b) - mean(a) = +1.6667, t = 5.0000, df = 2.000, p = 0.0377"),
            std::string::npos)
      << out;
  EXPECT_NE(error_of<UsageError>([] { run_ttest_command({"--a", "1,2,x", "--b", "1,2,3"}); }).find("got 'x'"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { run_ttest_command({"--a", "1,2,", "--b", "1,2,3"}); }).find("finite numbers"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { run_ttest_command({"--a", "1,2", "--b", "1,2,3"}); }).find("--unpaired"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { run_ttest_command({"--a", "1", "--b", "1", "--unpaired"}); }).find("at least 2"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([] { run_ttest_command({"--b", "1,2"}); }).find("--a is required"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
