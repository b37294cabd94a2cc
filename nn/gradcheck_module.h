// The sampled gradient check (ops/sampled_gradcheck.h) of a module's
// parameters: every parameter tensor is an input, named by its path in
// named_parameters(), so a failure reads "parameter 'encoder.fusion.w1'
// element [3, 7]: analytic 0.12 numeric 0.31".
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attn/nn/module.h"
#include "attn/ops/sampled_gradcheck.h"

namespace attn {

struct ModuleGradcheckOptions {
  SampledGradcheckOptions check;
  // Parameters left out of the check (e.g. a selection policy trained by
  // REINFORCE, which the loss does not reach); none when empty.
  std::function<bool(const std::string& name, const Tensor& parameter)> skip;
};

struct ModuleGradcheckResult {
  SampledGradcheckResult result;     // one report per checked parameter, in named_parameters() order
  std::vector<std::string> names;    // the checked parameters' names, same order
  std::vector<std::string> skipped;  // the names `skip` left out
};

// Checks the gradient of `fn` (the module's forward on fixed inputs, returning
// a loss or any tensor) with respect to every parameter of `module`. The
// parameters must be float64; the module should be in evaluation mode (no
// dropout or sampling), which the check verifies by running fn twice.
ModuleGradcheckResult gradcheck_module(const Module& module, const std::function<Tensor()>& fn,
                                       const ModuleGradcheckOptions& options = {});

}  // namespace attn
