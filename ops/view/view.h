// Differentiable views: they share storage with their input and record how to
// send a gradient back to the right elements of it.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// New shape with the same number of elements; one entry may be -1. A view when
// t is contiguous, a copy otherwise.
Tensor reshape(const Tensor& t, const Shape& shape);
Tensor flatten(const Tensor& t, int64_t start_axis = 0, int64_t end_axis = -1);
Tensor permute(const Tensor& t, const std::vector<int64_t>& order);
Tensor transpose(const Tensor& t, int64_t axis0, int64_t axis1);
// Broadcasts size-1 axes (stride 0) and prepends axes; -1 keeps a size.
Tensor expand(const Tensor& t, const Shape& shape);
Tensor unsqueeze(const Tensor& t, int64_t axis);
Tensor squeeze(const Tensor& t, int64_t axis);
// Elements start, start+step, ... below end along axis (Python slicing; negative start/end count from the end).
Tensor slice(const Tensor& t, int64_t axis, int64_t start, int64_t end, int64_t step = 1);
Tensor narrow(const Tensor& t, int64_t axis, int64_t start, int64_t length);

}  // namespace attn
