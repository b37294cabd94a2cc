// CUDA kernels of the sigmoid gate: one thread per output element through
// the broadcast offset calculator (a contiguous fast path when nothing
// broadcasts).
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/sigmoid_gate/sigmoid_gate_kernels.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {

namespace {

template <class T>
struct GateFn {
  T* out;
  const T* z;
  const T* a;
  const T* b;
  __device__ void operator()(const cuda::Offsets<4>& o) const {
    const T g = unary_math::stable_sigmoid(z[o.v[1]]);
    out[o.v[0]] = g * a[o.v[2]] + (T(1) - g) * b[o.v[3]];
  }
};

// o.v[0] indexes the three gradients (contiguous in grad's shape), o.v[1]
// grad through its own strides.
template <class T>
struct GateBackwardFn {
  const T* grad;
  const T* z;
  const T* a;
  const T* b;
  T* gz;
  T* ga;
  T* gb;
  __device__ void operator()(const cuda::Offsets<5>& o) const {
    const T g = unary_math::stable_sigmoid(z[o.v[2]]);
    const T gr = grad[o.v[1]];
    ga[o.v[0]] = gr * g;
    gb[o.v[0]] = gr * (T(1) - g);
    gz[o.v[0]] = gr * (a[o.v[3]] - b[o.v[4]]) * (g * (T(1) - g));
  }
};

}  // namespace

void sigmoid_gate_cuda(const Tensor& z, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_floating(out.dtype(), "sigmoid_gate", [&](auto tag) {
    using T = typename decltype(tag)::type;
    GateFn<T> f{out.data<T>(), z.data<T>(), a.data<T>(), b.data<T>()};
    cuda::launch_strided<4>("sigmoid_gate", out.shape(),
                            {out.strides(), broadcast_strides(z, out.shape()), broadcast_strides(a, out.shape()),
                             broadcast_strides(b, out.shape())},
                            f);
  });
}

void sigmoid_gate_backward_cuda(const Tensor& grad, const Tensor& z, const Tensor& a, const Tensor& b,
                                const Tensor& grad_z, const Tensor& grad_a, const Tensor& grad_b) {
  dispatch_floating(grad.dtype(), "sigmoid_gate_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    GateBackwardFn<T> f{grad.data<T>(),   z.data<T>(),      a.data<T>(),     b.data<T>(),
                        grad_z.data<T>(), grad_a.data<T>(), grad_b.data<T>()};
    cuda::launch_strided<5>("sigmoid_gate_backward", grad.shape(),
                            {contiguous_strides(grad.shape()), grad.strides(), broadcast_strides(z, grad.shape()),
                             broadcast_strides(a, grad.shape()), broadcast_strides(b, grad.shape())},
                            f);
  });
}

}  // namespace attn
