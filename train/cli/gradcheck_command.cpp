// `attn gradcheck`: runs the op registry's full-Jacobian checks and prints one
// row per op and a summary line; exits 1 when any case fails. With --model or
// --config it checks whole models instead (train/cli/gradcheck_model.h).
#include <cstdio>
#include <iostream>

#include "attn/ops/gradcheck.h"
#include "attn/train/cli/gradcheck_model.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/commands.h"

namespace attn {

int run_gradcheck_command(const std::vector<std::string>& args) {
  ArgParser p("gradcheck",
              "Compares every registered op's analytic gradient with central differences in float64.\n"
              "With --model or --config: a whole model (embeddings, encoder, head) in float64 at a small size,\n"
              "its training loss on a batch with padding and an empty sentence, dropout off; a sample of\n"
              "elements of every parameter tensor against central differences.");
  p.option("op", "", "check only this op (see --list)")
      .flag("list", "list the registered ops and exit")
      .flag("verbose", "print one row per case (per parameter tensor with --model)");
  add_model_gradcheck_options(p);
  p.example("attn gradcheck", "every op; ends with \"gradcheck: N ops, M cases, 0 failed\"");
  p.example("attn gradcheck --op softmax --verbose", "one op, one row per case");
  p.example("attn gradcheck --model mtsa --verbose",
            "MTSA with the classify head, one row per parameter tensor; ends with \"gradcheck: model mtsa/classify, "
            "... 0 failed\"");
  p.example("attn gradcheck --model all --head tag", "every encoder with the tagging head");
  p.example("attn gradcheck --model mtsa --head tag_crf", "MTSA tagging through a CRF (model config crf = true)");
  p.example("attn gradcheck --config my_model.cfg --head pair --samples 20", "the model of a config file");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.is_set("model") || p.is_set("config")) return run_model_gradcheck(p);
  for (const char* flag : {"head", "samples", "seed", "width", "hidden", "heads", "tokens", "vocab", "classes", "eps",
                           "atol", "rtol", "device"})
    if (p.is_set(flag))
      throw UsageError(std::string("attn gradcheck: --") + flag + " belongs to model checks; add --model or --config");
  const OpRegistry& registry = op_registry();
  if (p.is_set("list")) {
    for (const OpSpec& s : registry.all()) std::printf("%-16s %s\n", s.name.c_str(), s.family.c_str());
    return 0;
  }
  std::vector<const OpSpec*> specs;
  if (p.is_set("op")) {
    const OpSpec* s = registry.find(p.get("op"));
    if (!s) throw UsageError("attn gradcheck: no op named '" + p.get("op") + "' (attn gradcheck --list shows them)");
    specs.push_back(s);
  } else {
    for (const OpSpec& s : registry.all()) specs.push_back(&s);
  }

  std::printf("%-16s %5s %12s %12s  %s\n", "op", "cases", "max abs err", "max rel err", "result");
  int cases = 0, failed = 0;
  for (const OpSpec* s : specs) {
    OpResult r = gradcheck_op(*s);
    int op_failed = 0;
    for (const CaseResult& c : r.cases) op_failed += c.passed ? 0 : 1;
    if (r.cases.empty()) op_failed = 1;  // an op without samples checks nothing
    cases += static_cast<int>(r.cases.size());
    failed += op_failed;
    std::printf("%-16s %5zu %12.3e %12.3e  %s%s\n", r.name.c_str(), r.cases.size(), r.max_abs_error, r.max_rel_error,
                op_failed ? "FAIL" : "pass", r.cases.empty() ? " (no samples)" : "");
    for (const CaseResult& c : r.cases) {
      if (!c.passed) std::printf("    case '%s': %s\n", c.label.c_str(), c.failure.c_str());
      else if (p.is_set("verbose"))
        std::printf("    case '%s': abs %.3e rel %.3e\n", c.label.c_str(), c.max_abs_error, c.max_rel_error);
    }
  }
  std::printf("gradcheck: %zu ops, %d cases, %d failed\n", specs.size(), cases, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace attn
