// CUDA kernels of the unary family: one elementwise functor per op and dtype,
// run over a contiguous fast path or the strided offset calculator. The
// formulas are those of the CPU kernels (ops/unary/unary_math.h).
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/unary/unary_kernels.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {

namespace {

template <class T, class M>
struct UnaryForward {
  T* out;
  const T* x;
  T a, b;
  __device__ void operator()(const cuda::Offsets<2>& o) const { out[o.v[0]] = M::f(x[o.v[1]], a, b); }
};

template <class T, class M>
struct UnaryBackward {
  T* grad_in;
  const T* x;
  const T* y;
  const T* grad;
  T a, b;
  __device__ void operator()(const cuda::Offsets<4>& o) const {
    grad_in[o.v[0]] = unary_math::chain<M>(grad[o.v[3]], x[o.v[1]], y[o.v[2]], a, b);
  }
};

}  // namespace

void unary_forward_cuda(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& out) {
  const char* name = unary_op_name(op);
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      UnaryForward<T, M> f{out.data<T>(), x.data<T>(), static_cast<T>(p.a), static_cast<T>(p.b)};
      cuda::launch_strided<2>(name, x.shape(), {out.strides(), x.strides()}, f);
    });
  });
}

void unary_backward_cuda(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& y, const Tensor& grad,
                         const Tensor& grad_in) {
  const char* name = unary_op_name(op);
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      UnaryBackward<T, M> f{grad_in.data<T>(), x.data<T>(), y.data<T>(), grad.data<T>(), static_cast<T>(p.a),
                            static_cast<T>(p.b)};
      cuda::launch_strided<4>(name, x.shape(), {grad_in.strides(), x.strides(), y.strides(), grad.strides()}, f);
    });
  });
}

}  // namespace attn
