// Finite-value checks on weights: nothing non-finite is ever written to a
// checkpoint or loaded for evaluation (a NaN model answers class 0 for
// everything and still exits 0).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/error.h"
#include "attn/engine/tensor.h"

namespace attn {

// True when every element of a floating tensor is finite (other dtypes: true).
bool all_finite(const Tensor& t);

// The name of the first tensor holding a non-finite value, or "" when none.
// `tensors`: any range of (name, tensor) pairs (a map, a NamedTensors list).
template <class NamedRange>
std::string first_nonfinite(const NamedRange& tensors) {
  for (const auto& [name, t] : tensors)
    if (!all_finite(t)) return name;
  return "";
}

// Throws, naming `what` and the tensor, when any tensor is non-finite.
template <class NamedRange>
void require_finite(const NamedRange& tensors, const std::string& what) {
  const std::string bad = first_nonfinite(tensors);
  ATTN_CHECK(bad.empty(), "non-finite weights", what, ": the tensor '", bad,
             "' holds a NaN or infinite value; refusing to use it");
}

// The largest |value| over the tensors and the name of the tensor holding it
// (for messages that say how large the weights have grown).
std::pair<double, std::string> largest_magnitude(const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace attn
