// Copies between layouts, dtypes and devices. copy_into is the one kernel
// every materialisation goes through (contiguous, concat, pad, slice backward).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// dst[...] = src[...] elementwise; src is broadcast to dst's shape and cast to
// its dtype. Not recorded on the tape (use it on fresh tensors).
void copy_into(const Tensor& dst, const Tensor& src);

// A contiguous tensor with t's values (t itself when already contiguous).
// Differentiable.
Tensor contiguous(const Tensor& t);

// A contiguous copy that never aliases t. Differentiable.
Tensor clone(const Tensor& t);

// Converts between float32 and float64 (differentiable) or to data dtypes.
Tensor cast(const Tensor& t, DType dtype);

// Moves to a device (differentiable; gradient moves back).
Tensor to_device(const Tensor& t, Device device);

// Fills every element of t (any layout) with value. Not recorded.
void fill_(const Tensor& t, double value);

}  // namespace attn
