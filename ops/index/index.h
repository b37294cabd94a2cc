// Indexing ops: selecting, gathering and scattering by int64 index tensors.
// Every index is bounds-checked; an out-of-range one throws attn::Error naming
// the op, the bad value and the size it had to fit.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// Slices x at the positions of a 1-D index along axis; the output has
// index.numel() entries there. Repeated indices accumulate in the gradient.
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);

// The transpose of index_select: base, plus slice i of src along axis added
// at position index[i] (repeated indices accumulate). src has base's shape
// except index.numel() entries along axis. Differentiable in base and src
// (src's gradient is index_select of the output's).
Tensor index_add(const Tensor& base, int64_t axis, const Tensor& index, const Tensor& src);

// Row lookup: weight [V, D], ids of any shape -> [..., D]. The gradient sums
// into the rows of weight (repeated ids accumulate).
Tensor embedding(const Tensor& weight, const Tensor& ids);

// out[i][j][k] = x[i][index[i][j][k]][k] for axis 1 (likewise for any axis).
// index has x's rank, any size along axis, and sizes <= x's on the others.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);

// out = base plus src[i][j][k] added at out[i][index[i][j][k]][k] for axis 1.
// index has base's rank; its sizes are <= src's on every axis and <= base's
// off axis. Differentiable in base and src.
Tensor scatter_add(const Tensor& base, int64_t axis, const Tensor& index, const Tensor& src);

// index (int64, any shape) -> [..., num_classes] with a 1 at each index. No gradient.
Tensor one_hot(const Tensor& index, int64_t num_classes, DType dtype = DType::F32);

}  // namespace attn
