// Kernel signatures of the index family, one slot per device. Index tensors
// are contiguous int64 and already range-checked (index_range_check) when a
// kernel runs, so kernels never fail halfway through.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// True when every element of index lies in [0, limit); otherwise false with
// *bad set to the first offending value (in row-major order).
bool index_in_range_cpu(const Tensor& index, int64_t limit, int64_t* bad);

// x contiguous, viewed as [outer, n, inner]; out [outer, k, inner] with
// out[o, j, :] = x[o, index[j], :] (k = index.numel()).
void index_select_cpu(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& index,
                      const Tensor& out);
// grad_in [outer, n, inner] (zeroed) += grad [outer, k, inner] at rows index[j].
void index_add_cpu(const Tensor& grad, const Tensor& index, int64_t outer, int64_t n, int64_t inner,
                   const Tensor& grad_in);

// weight [V, D] contiguous; out [N, D] with out[i] = weight[ids[i]] (N = ids.numel()).
void embedding_forward_cpu(const Tensor& weight, const Tensor& ids, const Tensor& out);
// grad_weight [V, D] (zeroed) += grad [N, D] row i at row ids[i]; race-free and
// deterministic (each thread owns a block of columns).
void embedding_backward_cpu(const Tensor& grad, const Tensor& ids, const Tensor& grad_weight);

// out (index's shape) = x at index along axis; x and out any strides.
void gather_cpu(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& out);
// out[... index ...] += src along axis (out holds base already); serial along
// each line of axis, so repeated indices accumulate deterministically.
void scatter_add_cpu(const Tensor& out, int64_t axis, const Tensor& index, const Tensor& src);

// out [N, C] zeroed; out[i, index[i]] = 1.
void one_hot_cpu(const Tensor& index, const Tensor& out);

#ifdef ATTN_WITH_CUDA
bool index_in_range_cuda(const Tensor& index, int64_t limit, int64_t* bad);
void index_select_cuda(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& index,
                       const Tensor& out);
void index_add_cuda(const Tensor& grad, const Tensor& index, int64_t outer, int64_t n, int64_t inner,
                    const Tensor& grad_in);
void embedding_forward_cuda(const Tensor& weight, const Tensor& ids, const Tensor& out);
void embedding_backward_cuda(const Tensor& grad, const Tensor& ids, const Tensor& grad_weight);
void gather_cuda(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& out);
void scatter_add_cuda(const Tensor& out, int64_t axis, const Tensor& index, const Tensor& src);
void one_hot_cuda(const Tensor& index, const Tensor& out);
#endif

}  // namespace attn
