// CUDA kernels of cross_entropy. Forward: one warp per row (up to 1024
// classes) or one block per row computes the row max and the log of the sum
// of exponentials (accumulated in double), then the weighted loss. Backward:
// one thread per logit, (softmax - onehot) * example_weight * grad * scale.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/loss/loss_kernels.h"

namespace attn {

namespace {

template <class T, bool kBlock>
__global__ void cross_entropy_forward_kernel(const T* logits, const int64_t* target, const T* weights,
                                             int64_t ignore_index, int64_t n, int64_t c, T* loss, T* row_max,
                                             T* row_log_sum, T* example_weight) {
  using G = cuda::RowGroup<kBlock>;
  ATTN_SHARED(T, smem_t, [32]);
  ATTN_SHARED(double, smem_d, [32]);
  for (int64_t i = G::first_row(); i < n; i += G::row_step()) {
    const T* row = logits + i * c;
    T m = cuda::neg_inf<T>();
    for (int64_t k = G::lane(); k < c; k += G::size()) m = row[k] > m ? row[k] : m;
    m = G::reduce(m, cuda::MaxOp{}, cuda::neg_inf<T>(), smem_t);
    double s = 0;
    for (int64_t k = G::lane(); k < c; k += G::size()) s += static_cast<double>(std::exp(row[k] - m));
    s = G::reduce(s, cuda::SumOp{}, 0.0, smem_d);
    if (G::lane() != 0) continue;
    const double log_s = std::log(s);
    row_max[i] = m;
    row_log_sum[i] = static_cast<T>(log_s);
    const int64_t t = target[i];
    if (t == ignore_index) {
      loss[i] = T(0);
      example_weight[i] = T(0);
      continue;
    }
    const T w = weights ? weights[t] : T(1);
    example_weight[i] = w;
    // x_t - m is exact for nearby values, so the loss keeps its precision
    // even when the logits are large.
    loss[i] = static_cast<T>(static_cast<double>(w) * (log_s - static_cast<double>(row[t] - m)));
  }
}

template <class T>
__global__ void cross_entropy_backward_kernel(const T* logits, const int64_t* target, int64_t ignore_index,
                                              const T* row_max, const T* row_log_sum, const T* example_weight,
                                              const T* grad, bool broadcast_grad, double scale, int64_t c,
                                              int64_t total, T* grad_in) {
  ATTN_CUDA_LOOP(e, total) {
    const int64_t i = e / c;
    const int64_t k = e - i * c;
    const int64_t t = target[i];
    if (t == ignore_index) {
      grad_in[e] = T(0);
      continue;
    }
    const T coef = static_cast<T>(static_cast<double>(example_weight[i]) * (broadcast_grad ? grad[0] : grad[i]) *
                                  scale);
    T d = std::exp((logits[e] - row_max[i]) - row_log_sum[i]) * coef;
    if (k == t) d -= coef;
    grad_in[e] = d;
  }
}

}  // namespace

void cross_entropy_forward_cuda(const Tensor& logits, const Tensor& target, const Tensor& weights,
                                int64_t ignore_index, const Tensor& loss, const Tensor& row_max,
                                const Tensor& row_log_sum, const Tensor& example_weight) {
  dispatch_floating(logits.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = logits.shape()[0], c = logits.shape()[1];
    if (n == 0) return;
    const T* px = logits.data<T>();
    const int64_t* pt = target.data<int64_t>();
    const T* pw = weights.defined() ? weights.data<T>() : nullptr;
    const cuda::RowLaunch l = cuda::row_launch(n, c);
    if (l.block)
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), cross_entropy_forward_kernel<T, true>)(
          px, pt, pw, ignore_index, n, c, loss.data<T>(), row_max.data<T>(), row_log_sum.data<T>(),
          example_weight.data<T>());
    else
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), cross_entropy_forward_kernel<T, false>)(
          px, pt, pw, ignore_index, n, c, loss.data<T>(), row_max.data<T>(), row_log_sum.data<T>(),
          example_weight.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("cross_entropy");
  });
}

void cross_entropy_backward_cuda(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                 const Tensor& row_max, const Tensor& row_log_sum, const Tensor& example_weight,
                                 const Tensor& grad, double scale, const Tensor& grad_in) {
  dispatch_floating(logits.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = logits.shape()[0], c = logits.shape()[1];
    const int64_t total = n * c;
    if (total == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(total), cuda::kThreads, 0, cuda::stream(), cross_entropy_backward_kernel<T>)(
        logits.data<T>(), target.data<int64_t>(), ignore_index, row_max.data<T>(), row_log_sum.data<T>(),
        example_weight.data<T>(), grad.data<T>(), grad.numel() == 1, scale, c, total, grad_in.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("cross_entropy_backward");
  });
}

}  // namespace attn
