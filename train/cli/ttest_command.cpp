// `attn ttest`: whether one system's scores over several training runs beat
// another's (seed 001's Table 6 reports such a t-test over BLEU of runs).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "attn/train/cli/commands.h"
#include "attn/train/metrics_significance.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

std::vector<double> scores(const ArgParser& p, const std::string& flag) {
  if (!p.is_set(flag)) throw UsageError("attn ttest: --" + flag + " is required");
  const std::string list = p.get(flag);
  std::vector<double> out;
  for (size_t start = 0, comma; start <= list.size(); start = comma + 1) {
    comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = text::trim(list.substr(start, comma - start));
    char* end = nullptr;
    const double v = item.empty() ? 0 : std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v))
      throw UsageError("attn ttest: --" + flag + " expects a comma list of finite numbers, got " + text::quote(item) +
                       " in " + text::quote(list));
    out.push_back(v);
  }
  return out;
}

}  // namespace

int run_ttest_command(const std::vector<std::string>& args) {
  ArgParser p("ttest",
              "Two-sided t-test of system B's scores against system A's over training runs (one score a run,\n"
              "e.g. test BLEU): paired by default (run i of A and of B share a seed), Welch's unequal-variance\n"
              "test with --unpaired. docs/training.md, \"BLEU and significance\".");
  p.option("a", "", "LIST: comma list of system A's scores, one a run")
      .option("b", "", "LIST: comma list of system B's scores, one a run")
      .flag("unpaired", "Welch's test for runs that do not pair up (counts may differ)");
  p.example("attn ttest --a 23.5,23.7,23.6,23.8,23.6 --b 24.0,24.1,24.2,24.0,24.1",
            "paired t-test of five runs each");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  const std::vector<double> a = scores(p, "a"), b = scores(p, "b");
  const bool unpaired = p.is_set("unpaired");
  if (!unpaired && a.size() != b.size())
    throw UsageError("attn ttest: a paired test needs as many runs of each system, got " + std::to_string(a.size()) +
                     " and " + std::to_string(b.size()) + " (--unpaired for Welch's test)");
  if (a.size() < 2 || b.size() < 2) throw UsageError("attn ttest: needs at least 2 runs of each system");
  const TTestResult r = unpaired ? welch_t_test(a, b) : paired_t_test(a, b);
  std::printf("%s: %lld and %lld runs, mean(b) - mean(a) = %+.4f, t = %.4f, df = %.3f, p = %.4f (two-sided)\n",
              unpaired ? "Welch's t-test" : "paired t-test", static_cast<long long>(r.n_a),
              static_cast<long long>(r.n_b), r.mean_difference, r.t, r.df, r.p_value);
  return 0;
}

}  // namespace attn
