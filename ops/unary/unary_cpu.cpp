// CPU kernels for the unary family: one strided loop per op and dtype, with a
// unit-stride branch the compiler vectorises.
#include "attn/ops/unary/unary_kernels.h"

#include <algorithm>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/unary/unary_math.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

// float32 exp, tanh and sigmoid go through ops/cpu/vector_math.h (within 4 ulp of
// the C library): glibc's expf and tanhf are calls that keep a loop scalar,
// these compile to SIMD, in AVX2 and baseline clones. Their derivatives only
// need the output, so the backward kernel is unchanged. float64 (gradcheck)
// keeps the C library.
ATTN_SIMD_CLONES void exp_run(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vector_math::exp(x[i]);
}
ATTN_SIMD_CLONES void tanh_run(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vector_math::tanh(x[i]);
}
ATTN_SIMD_CLONES void sigmoid_run(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vector_math::sigmoid(x[i]);
}

using FloatRun = void (*)(const float* x, float* y, int64_t n);

FloatRun vector_run(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: return exp_run;
    case UnaryOp::Tanh: return tanh_run;
    case UnaryOp::Sigmoid: return sigmoid_run;
    default: return nullptr;
  }
}

// Strided runs are gathered into a small buffer so they use the same code.
void run_strided(FloatRun run, const float* x, int64_t x_step, float* y, int64_t y_step, int64_t n) {
  constexpr int64_t kBuffer = 256;
  float in[kBuffer], out[kBuffer];
  for (int64_t start = 0; start < n; start += kBuffer) {
    const int64_t len = std::min(kBuffer, n - start);
    for (int64_t i = 0; i < len; ++i) in[i] = x[(start + i) * x_step];
    run(in, out, len);
    for (int64_t i = 0; i < len; ++i) y[(start + i) * y_step] = out[i];
  }
}

bool vector_forward_float(UnaryOp op, const Tensor& x, const Tensor& out) {
  const FloatRun run = vector_run(op);
  if (run == nullptr) return false;
  const float* in = x.data<float>();
  float* o = out.data<float>();
  strided_loop<2>(x.shape(), {out.strides(), x.strides()},
                  [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
                    if (s[0] == 1 && s[1] == 1) {
                      run(in + off[1], o + off[0], n);
                    } else {
                      run_strided(run, in + off[1], s[1], o + off[0], s[0], n);
                    }
                  });
  return true;
}

}  // namespace

void unary_forward_cpu(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& out) {
  if (x.dtype() == DType::F32 && vector_forward_float(op, x, out)) return;
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
                          for (int64_t i = 0; i < n; ++i) d[i] = unary_math::chain<M>(gp[i], xp[i], yp[i], a, b);
                        } else {
                          for (int64_t i = 0; i < n; ++i)
                            d[i * s[0]] = unary_math::chain<M>(gp[i * s[3]], xp[i * s[1]], yp[i * s[2]], a, b);
                        }
                      });
    });
  });
}

}  // namespace attn
