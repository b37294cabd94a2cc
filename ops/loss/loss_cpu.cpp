// CPU kernels of cross_entropy: one row of logits per example, rows in
// parallel. Row sums accumulate in double.
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/loss/loss_kernels.h"

namespace attn {

void cross_entropy_forward_cpu(const Tensor& logits, const Tensor& target, const Tensor& weights,
                               int64_t ignore_index, const Tensor& loss, const Tensor& row_max,
                               const Tensor& row_log_sum, const Tensor& example_weight) {
  dispatch_floating(logits.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = logits.shape()[0], c = logits.shape()[1];
    const T* px = logits.data<T>();
    const int64_t* pt = target.data<int64_t>();
    const T* pw = weights.defined() ? weights.data<T>() : nullptr;
    T* pl = loss.data<T>();
    T* pm = row_max.data<T>();
    T* ps = row_log_sum.data<T>();
    T* pe = example_weight.data<T>();
    parallel_for(n, row_grain(c), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* row = px + i * c;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < c; ++k) m = row[k] > m ? row[k] : m;
        double s = 0;
        for (int64_t k = 0; k < c; ++k) s += std::exp(row[k] - m);
        const double log_s = std::log(s);
        pm[i] = m;
        ps[i] = static_cast<T>(log_s);
        const int64_t t = pt[i];
        if (t == ignore_index) {
          pl[i] = 0;
          pe[i] = 0;
          continue;
        }
        const T w = pw ? pw[t] : T(1);
        pe[i] = w;
        // x_t - m is exact for nearby values, so the loss keeps its precision
        // even when the logits are large.
        pl[i] = static_cast<T>(static_cast<double>(w) * (log_s - static_cast<double>(row[t] - m)));
      }
    });
  });
}

void cross_entropy_backward_cpu(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                const Tensor& row_max, const Tensor& row_log_sum, const Tensor& example_weight,
                                const Tensor& grad, double scale, const Tensor& grad_in) {
  dispatch_floating(logits.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = logits.shape()[0], c = logits.shape()[1];
    const T* px = logits.data<T>();
    const int64_t* pt = target.data<int64_t>();
    const T* pm = row_max.data<T>();
    const T* ps = row_log_sum.data<T>();
    const T* pe = example_weight.data<T>();
    const T* pg = grad.data<T>();
    const bool broadcast_grad = grad.numel() == 1;
    T* pd = grad_in.data<T>();
    parallel_for(n, row_grain(c), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T* d = pd + i * c;
        const int64_t t = pt[i];
        if (t == ignore_index) {
          std::memset(d, 0, static_cast<size_t>(c) * sizeof(T));
          continue;
        }
        const T* row = px + i * c;
        const T m = pm[i], log_s = ps[i];
        const T coef = static_cast<T>(static_cast<double>(pe[i]) * (broadcast_grad ? pg[0] : pg[i]) * scale);
        for (int64_t k = 0; k < c; ++k) d[k] = std::exp((row[k] - m) - log_s) * coef;
        d[t] -= coef;
      }
    });
  });
}

}  // namespace attn
