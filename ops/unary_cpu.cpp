// CPU kernels for the unary family: one strided loop per op and dtype, with a
// unit-stride branch the compiler vectorises.
#include "ops/unary_kernels.h"

#include "engine/cpu_loops.h"
#include "ops/unary_math.h"

namespace attn {

void unary_forward_cpu(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& out) {
  dispatch_floating(x.dtype(), unary_op_name(op), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* o = out.data<T>();
    const T a = static_cast<T>(p.a), b = static_cast<T>(p.b);
    unary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      strided_loop<2>(x.shape(), {out.strides(), x.strides()},
                      [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
                        T* dst = o + off[0];
                        const T* src = in + off[1];
                        if (s[0] == 1 && s[1] == 1) {
                          for (int64_t i = 0; i < n; ++i) dst[i] = M::f(src[i], a, b);
                        } else {
                          for (int64_t i = 0; i < n; ++i) dst[i * s[0]] = M::f(src[i * s[1]], a, b);
                        }
                      });
    });
  });
}

void unary_backward_cpu(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& y, const Tensor& grad,
                        const Tensor& grad_in) {
  dispatch_floating(x.dtype(), unary_op_name(op), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xs = x.data<T>();
    const T* ys = y.data<T>();
    const T* gs = grad.data<T>();
    T* gi = grad_in.data<T>();
    const T a = static_cast<T>(p.a), b = static_cast<T>(p.b);
    unary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      strided_loop<4>(x.shape(), {grad_in.strides(), x.strides(), y.strides(), grad.strides()},
                      [&](const std::array<int64_t, 4>& off, int64_t n, const std::array<int64_t, 4>& s) {
                        T* d = gi + off[0];
                        const T* xp = xs + off[1];
                        const T* yp = ys + off[2];
                        const T* gp = gs + off[3];
                        if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
                          for (int64_t i = 0; i < n; ++i) d[i] = gp[i] * M::df(xp[i], yp[i], a, b);
                        } else {
                          for (int64_t i = 0; i < n; ++i)
                            d[i * s[0]] = gp[i * s[3]] * M::df(xp[i * s[1]], yp[i * s[2]], a, b);
                        }
                      });
    });
  });
}

}  // namespace attn
