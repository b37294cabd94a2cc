// Sampled gradient check of any function of float64 tensors: the tape's
// gradient of one scalar against central differences at a sample of elements
// of every input that requires grad. Where ops/gradcheck.h builds the whole
// Jacobian of a small op, this one scales to a whole model: one backward pass,
// then two forward passes per sampled element.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attn/ops/registry.h"

namespace attn {

struct SampledGradcheckOptions {
  Tolerance tolerance;  // the step and the atol + rtol * |numeric| bound of ops/registry.h
  // Elements checked per input; every element when the input has no more.
  int64_t samples = 8;
  // Draws the sampled elements and the fixed weights R of sum(fn(x) * R).
  uint64_t seed = 1;
  // An input the backward pass never reaches (it gets no gradient at all, as
  // the sentence readout under a tagging head) passes when its sampled central
  // differences are zero within the tolerance too, instead of failing as
  // "all zero". A backward that drops an input it should reach still fails:
  // its central differences are not zero.
  bool allow_unreached = false;
};

// One checked element: which input, where, and the two derivatives.
struct GradcheckElement {
  size_t input = 0;
  std::vector<int64_t> index;  // multi-index into the input
  double analytic = 0;
  double numeric = 0;
  // |analytic - numeric| / (atol + rtol * |numeric|): above 1 is a failure.
  double excess = 0;
};

struct GradcheckInputReport {
  std::string label;  // "input 2", or "parameter 'encoder.w1'" (gradcheck_module)
  std::vector<int64_t> shape;
  int64_t checked = 0;  // elements compared
  double max_abs_error = 0;
  double max_rel_error = 0;  // over checked elements whose |numeric| exceeds atol
  GradcheckElement worst;    // the checked element with the largest excess
  bool reached = true;       // the backward pass gave it a gradient
  // The largest |analytic| over the whole input, sampled or not: a tensor
  // that passes with this near rounding level (a bias a softmax cancels) had
  // little to prove.
  double max_abs_gradient = 0;
  bool passed = false;
  std::string failure;  // empty when passed
};

struct SampledGradcheckResult {
  std::vector<GradcheckInputReport> inputs;  // the inputs that require grad, in order
  int64_t checked = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool passed = false;
  // The first failing input's failure, or a failure of the whole check
  // (nothing requires grad, the forward is not finite); empty when passed.
  std::string failure;
};

using TensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;

// Compares the tape's gradient of s = fn(x) (when fn returns one element) or
// s = sum(fn(x) * R) (R fixed, uniform in [-1, 1)) with central differences
// at `samples` elements of every input that requires grad. Fails when a
// sampled element is outside atol + rtol * |numeric|, when the output, a
// gradient or a difference quotient is not finite, or when an input's whole
// analytic gradient is zero (the check would prove nothing; see
// allow_unreached). The sample is
// drawn uniformly without repetition; when it misses every element whose
// analytic gradient is nonzero, one such element replaces its last draw, so
// each input's check compares at least one derivative that is not zero.
// Inputs must be float64 leaves (any device); fn must be deterministic.
// `labels[i]` names input i in reports (default "input i").
SampledGradcheckResult gradcheck(const TensorFunction& fn, const std::vector<Tensor>& inputs,
                                 const SampledGradcheckOptions& options = {},
                                 const std::vector<std::string>& labels = {});

// "parameter 'w' element [3, 7]: analytic 0.12 numeric 0.31".
std::string describe_element(const GradcheckInputReport& input, const GradcheckElement& e);

}  // namespace attn
