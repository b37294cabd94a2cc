// CPU kernels of the fused optimiser updates: one parallel pass per
// parameter, each thread running a range of elements through a loop compiled
// per SIMD level. The pointers are restrict-qualified (a parameter, its
// gradient and its states never overlap) and this file is compiled with
// -fno-math-errno (CMakeLists.txt; sqrt's argument is never negative here), so
// the per-element formulas vectorise: sqrt setting errno kept Adam's loop
// scalar, 19 ms a step on a 50000-word embedding (docs/benchmarks.md).
#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/optim_update/optim_update_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

template <class T>
ATTN_SIMD_CLONES void adam_range(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                                 int64_t n, const optim_math::AdamStep s) {
  for (int64_t i = 0; i < n; ++i) optim_math::adam(p[i], g[i], m[i], v[i], s);
}

template <class T>
ATTN_SIMD_CLONES void adadelta_range(T* __restrict p, const T* __restrict g, T* __restrict a, T* __restrict u,
                                     int64_t n, const optim_math::AdadeltaStep s) {
  for (int64_t i = 0; i < n; ++i) optim_math::adadelta(p[i], g[i], a[i], u[i], s);
}

template <class T>
ATTN_SIMD_CLONES void momentum_range(T* __restrict p, const T* __restrict g, T* __restrict v, int64_t n,
                                     const optim_math::MomentumStep s) {
  for (int64_t i = 0; i < n; ++i) optim_math::momentum(p[i], g[i], v[i], s);
}

// Calls range(begin, count) over every element, split across threads for
// large tensors.
template <class F>
void for_each_range(int64_t n, const F& range) {
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) { range(begin, end - begin); });
}

}  // namespace

void adam_update_cpu(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v,
                     const optim_math::AdamStep& s) {
  dispatch_floating(p.dtype(), "adam_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pp = p.data<T>(), *pm = m.data<T>(), *pv = v.data<T>();
    const T* pg = g.data<T>();
    for_each_range(p.numel(), [&](int64_t i, int64_t n) { adam_range(pp + i, pg + i, pm + i, pv + i, n, s); });
  });
}

void adadelta_update_cpu(const Tensor& p, const Tensor& g, const Tensor& a, const Tensor& u,
                         const optim_math::AdadeltaStep& s) {
  dispatch_floating(p.dtype(), "adadelta_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pp = p.data<T>(), *pa = a.data<T>(), *pu = u.data<T>();
    const T* pg = g.data<T>();
    for_each_range(p.numel(), [&](int64_t i, int64_t n) { adadelta_range(pp + i, pg + i, pa + i, pu + i, n, s); });
  });
}

void momentum_update_cpu(const Tensor& p, const Tensor& g, const Tensor& v, const optim_math::MomentumStep& s) {
  dispatch_floating(p.dtype(), "sgd_momentum_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *pp = p.data<T>(), *pv = v.data<T>();
    const T* pg = g.data<T>();
    for_each_range(p.numel(), [&](int64_t i, int64_t n) { momentum_range(pp + i, pg + i, pv + i, n, s); });
  });
}

}  // namespace attn
