// Full-Jacobian gradient check by central differences, in float64, and a
// determinism check of the backward. Used by the test suite and `attn gradcheck`.
#pragma once
#include <string>
#include <vector>

#include "attn/ops/registry.h"

namespace attn {

struct CaseResult {
  std::string label;
  double max_abs_error = 0;
  double max_rel_error = 0;  // over entries whose numeric value exceeds atol
  bool passed = false;
  std::string failure;  // why it failed, empty when passed
};

struct OpResult {
  std::string name;
  std::vector<CaseResult> cases;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool passed = false;
  bool broadcast_or_strided = false;  // some case covers a broadcast or strided input
};

// Compares the analytic Jacobian with central differences; fails when any entry
// is outside atol + rtol * |numeric|, when an output is not finite, or when the
// analytic gradient is all zeros.
CaseResult gradcheck_case(const OpCase& c, const Tolerance& tol);

// Runs backward on two fresh graphs with the same upstream gradient; returns
// an empty string when the input gradients are bitwise identical.
std::string backward_determinism_failure(const OpCase& c);

// Every case of one op (fails when the op has no case at all).
OpResult gradcheck_op(const OpSpec& spec);

}  // namespace attn
