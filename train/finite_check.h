// Finite-value checks on weights: nothing non-finite is ever written to a
// checkpoint or loaded for evaluation (a NaN model answers class 0 for
// everything and still exits 0).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/tensor.h"

namespace attn {

// True when every element of a floating tensor is finite (other dtypes: true).
bool all_finite(const Tensor& t);

// The name of the first tensor holding a non-finite value, or "" when none.
std::string first_nonfinite(const std::vector<std::pair<std::string, Tensor>>& tensors);
std::string first_nonfinite(const std::map<std::string, Tensor>& tensors);

// Throws, naming `what` and the tensor, when any tensor is non-finite.
void require_finite(const std::vector<std::pair<std::string, Tensor>>& tensors, const std::string& what);
void require_finite(const std::map<std::string, Tensor>& tensors, const std::string& what);

// The largest |value| over the tensors and the name of the tensor holding it
// (for messages that say how large the weights have grown).
std::pair<double, std::string> largest_magnitude(const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace attn
