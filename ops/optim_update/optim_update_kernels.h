// Kernel signatures of the fused optimiser updates, one slot per device. All
// tensors are contiguous with the same number of elements and dtype.
#pragma once
#include "attn/engine/tensor.h"
#include "attn/ops/optim_update/optim_update_math.h"

namespace attn {

void adam_update_cpu(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v,
                     const optim_math::AdamStep& s);
void adadelta_update_cpu(const Tensor& p, const Tensor& g, const Tensor& a, const Tensor& u,
                         const optim_math::AdadeltaStep& s);
void momentum_update_cpu(const Tensor& p, const Tensor& g, const Tensor& v, const optim_math::MomentumStep& s);

#ifdef ATTN_WITH_CUDA
void adam_update_cuda(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v,
                      const optim_math::AdamStep& s);
void adadelta_update_cuda(const Tensor& p, const Tensor& g, const Tensor& a, const Tensor& u,
                          const optim_math::AdadeltaStep& s);
void momentum_update_cuda(const Tensor& p, const Tensor& g, const Tensor& v, const optim_math::MomentumStep& s);
#endif

}  // namespace attn
