// CPU kernels of the sigmoid gate over broadcast strides; runs where every
// operand is unit-strided go through SIMD clones (ops/cpu/vector_math.h's
// branch-free sigmoid), the rest element by element.
#include "attn/engine/cpu_loops.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

template <class T>
inline T mix(T z, T a, T b) {
  const T g = vector_math::sigmoid(z);
  return g * a + (T(1) - g) * b;
}

template <class T>
ATTN_SIMD_CLONES void forward_run(const T* __restrict z, const T* __restrict a, const T* __restrict b, int64_t n,
                                  T* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = mix(z[i], a[i], b[i]);
}

template <class T>
inline void backward_one(T grad, T z, T a, T b, T* gz, T* ga, T* gb) {
  const T g = vector_math::sigmoid(z);
  *ga = grad * g;
  *gb = grad * (T(1) - g);
  *gz = grad * (a - b) * (g * (T(1) - g));
}

template <class T>
ATTN_SIMD_CLONES void backward_run(const T* __restrict grad, const T* __restrict z, const T* __restrict a,
                                   const T* __restrict b, int64_t n, T* __restrict gz, T* __restrict ga,
                                   T* __restrict gb) {
  for (int64_t i = 0; i < n; ++i) backward_one(grad[i], z[i], a[i], b[i], gz + i, ga + i, gb + i);
}

}  // namespace

void sigmoid_gate_cpu(const Tensor& z, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_floating(out.dtype(), "sigmoid_gate", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pz = z.data<T>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    strided_loop<4>(out.shape(),
                    {out.strides(), broadcast_strides(z, out.shape()), broadcast_strides(a, out.shape()),
                     broadcast_strides(b, out.shape())},
                    [&](const std::array<int64_t, 4>& o, int64_t n, const std::array<int64_t, 4>& s) {
                      if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
                        forward_run(pz + o[1], pa + o[2], pb + o[3], n, po + o[0]);
                      } else {
                        for (int64_t i = 0; i < n; ++i)
                          po[o[0] + i * s[0]] = mix(pz[o[1] + i * s[1]], pa[o[2] + i * s[2]], pb[o[3] + i * s[3]]);
                      }
                    });
  });
}

void sigmoid_gate_backward_cpu(const Tensor& grad, const Tensor& z, const Tensor& a, const Tensor& b,
                               const Tensor& grad_z, const Tensor& grad_a, const Tensor& grad_b) {
  dispatch_floating(grad.dtype(), "sigmoid_gate_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pg = grad.data<T>();
    const T* pz = z.data<T>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* gz = grad_z.data<T>();
    T* ga = grad_a.data<T>();
    T* gb = grad_b.data<T>();
    // o[0] indexes the three gradients (contiguous in grad's shape), o[1]
    // grad through its own strides (a half of a concatenation's gradient
    // is read in place).
    strided_loop<5>(grad.shape(),
                    {contiguous_strides(grad.shape()), grad.strides(), broadcast_strides(z, grad.shape()),
                     broadcast_strides(a, grad.shape()), broadcast_strides(b, grad.shape())},
                    [&](const std::array<int64_t, 5>& o, int64_t n, const std::array<int64_t, 5>& s) {
                      if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1 && s[4] == 1) {
                        backward_run(pg + o[1], pz + o[2], pa + o[3], pb + o[4], n, gz + o[0], ga + o[0], gb + o[0]);
                      } else {
                        for (int64_t i = 0; i < n; ++i) {
                          const int64_t d = o[0] + i * s[0];
                          backward_one(pg[o[1] + i * s[1]], pz[o[2] + i * s[2]], pa[o[3] + i * s[3]],
                                       pb[o[4] + i * s[4]], gz + d, ga + d, gb + d);
                        }
                      }
                    });
  });
}

}  // namespace attn
