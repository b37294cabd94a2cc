// CPU kernels of the binary family over broadcast strides; the unit-stride
// and scalar-broadcast inner runs (and, for where, a condition constant over
// the run) are the vectorised fast paths.
#include "attn/ops/binary/binary_kernels.h"

#include <algorithm>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/binary/binary_math.h"

namespace attn {

void binary_forward_cpu(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_floating(out.dtype(), binary_op_name(op), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    binary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      strided_loop<3>(out.shape(),
                      {out.strides(), broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())},
                      [&](const std::array<int64_t, 3>& o, int64_t n, const std::array<int64_t, 3>& s) {
                        T* d = po + o[0];
                        const T* x = pa + o[1];
                        const T* y = pb + o[2];
                        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
                          for (int64_t i = 0; i < n; ++i) d[i] = M::f(x[i], y[i]);
                        } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
                          const T c = *y;
                          for (int64_t i = 0; i < n; ++i) d[i] = M::f(x[i], c);
                        } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
                          const T c = *x;
                          for (int64_t i = 0; i < n; ++i) d[i] = M::f(c, y[i]);
                        } else {
                          for (int64_t i = 0; i < n; ++i) d[i * s[0]] = M::f(x[i * s[1]], y[i * s[2]]);
                        }
                      });
    });
  });
}

void compare_cpu(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_all(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    uint8_t* po = out.data<uint8_t>();
    binary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      strided_loop<3>(out.shape(),
                      {out.strides(), broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())},
                      [&](const std::array<int64_t, 3>& o, int64_t n, const std::array<int64_t, 3>& s) {
                        uint8_t* d = po + o[0];
                        const T* x = pa + o[1];
                        const T* y = pb + o[2];
                        // Unit-stride and scalar-operand runs vectorise (a mask against 0,
                        // a denominator against a threshold); the general run stays scalar.
                        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
                          for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(M::f(x[i], y[i]));
                        } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
                          const T c = *y;
                          for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(M::f(x[i], c));
                        } else {
                          for (int64_t i = 0; i < n; ++i) d[i * s[0]] = M::f(x[i * s[1]], y[i * s[2]]) ? 1 : 0;
                        }
                      });
    });
  });
}

void where_cpu(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const uint8_t* pc = cond.data<uint8_t>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    strided_loop<4>(out.shape(),
                    {out.strides(), broadcast_strides(cond, out.shape()), broadcast_strides(a, out.shape()),
                     broadcast_strides(b, out.shape())},
                    [&](const std::array<int64_t, 4>& o, int64_t n, const std::array<int64_t, 4>& s) {
                      T* d = po + o[0];
                      const uint8_t* c = pc + o[1];
                      const T* x = pa + o[2];
                      const T* y = pb + o[3];
                      if (s[0] == 1 && s[1] == 0) {
                        // One condition for the whole run (a row mask broadcast over features):
                        // the run is a copy or a fill of the chosen operand.
                        const T* src = *c ? x : y;
                        const int64_t step = *c ? s[2] : s[3];
                        if (step == 1) {
                          std::copy(src, src + n, d);
                        } else if (step == 0) {
                          std::fill(d, d + n, *src);
                        } else {
                          for (int64_t i = 0; i < n; ++i) d[i] = src[i * step];
                        }
                      } else if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
                        // Both sides are loaded before the select: a load under the
                        // condition would keep the loop scalar.
                        for (int64_t i = 0; i < n; ++i) {
                          const T xv = x[i], yv = y[i];
                          d[i] = c[i] ? xv : yv;
                        }
                      } else if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 0) {
                        const T yc = *y;
                        for (int64_t i = 0; i < n; ++i) {
                          const T xv = x[i];
                          d[i] = c[i] ? xv : yc;
                        }
                      } else if (s[0] == 1 && s[1] == 1 && s[2] == 0 && s[3] == 1) {
                        const T xc = *x;
                        for (int64_t i = 0; i < n; ++i) {
                          const T yv = y[i];
                          d[i] = c[i] ? xc : yv;
                        }
                      } else {
                        for (int64_t i = 0; i < n; ++i) d[i * s[0]] = c[i * s[1]] ? x[i * s[2]] : y[i * s[3]];
                      }
                    });
  });
}

void axpy_cpu(const Tensor& dst, double alpha, const Tensor& src) {
  dispatch_floating(dst.dtype(), "axpy_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T al = static_cast<T>(alpha);
    T* pd = dst.data<T>();
    const T* ps = src.data<T>();
    strided_loop<2>(dst.shape(), {dst.strides(), broadcast_strides(src, dst.shape())},
                    [&](const std::array<int64_t, 2>& o, int64_t n, const std::array<int64_t, 2>& s) {
                      T* d = pd + o[0];
                      const T* x = ps + o[1];
                      if (s[0] == 1 && s[1] == 1) {
                        for (int64_t i = 0; i < n; ++i) d[i] += al * x[i];
                      } else {
                        for (int64_t i = 0; i < n; ++i) d[i * s[0]] += al * x[i * s[1]];
                      }
                    });
  });
}

}  // namespace attn
