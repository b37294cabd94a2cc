// CPU kernels of the fused optimiser updates: one parallel pass per parameter.
#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/optim_update_kernels.h"

namespace attn {

namespace {

// Calls f(i) for every element index, split across threads for large tensors.
template <class F>
void for_each_element(int64_t n, const F& f) {
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) f(i);
  });
}

}  // namespace

void adam_update_cpu(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v,
                     const optim_math::AdamStep& s) {
  dispatch_floating(p.dtype(), "adam_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pp = p.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
    const T* pg = g.data<T>();
    for_each_element(p.numel(), [&](int64_t i) { optim_math::adam(pp[i], pg[i], pm[i], pv[i], s); });
  });
}

void adadelta_update_cpu(const Tensor& p, const Tensor& g, const Tensor& a, const Tensor& u,
                         const optim_math::AdadeltaStep& s) {
  dispatch_floating(p.dtype(), "adadelta_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pp = p.data<T>(), *pa = a.data<T>(), *pu = u.data<T>();
    const T* pg = g.data<T>();
    for_each_element(p.numel(), [&](int64_t i) { optim_math::adadelta(pp[i], pg[i], pa[i], pu[i], s); });
  });
}

void momentum_update_cpu(const Tensor& p, const Tensor& g, const Tensor& v, const optim_math::MomentumStep& s) {
  dispatch_floating(p.dtype(), "sgd_momentum_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pp = p.data<T>(), *pv = v.data<T>();
    const T* pg = g.data<T>();
    for_each_element(p.numel(), [&](int64_t i) { optim_math::momentum(pp[i], pg[i], pv[i], s); });
  });
}

}  // namespace attn
