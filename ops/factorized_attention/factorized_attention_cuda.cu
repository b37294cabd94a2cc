// CUDA kernels of the factorized attention: one thread per row for the
// passes that reduce along it (the pair weights' row maximum and key count,
// the output's per-row exactness flag), one thread per (group, feature) for
// the key weights (the identity's shift is a maximum over keys, coalesced
// across features), one thread per element elsewhere. No atomics: results
// are deterministic.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/factorized_attention/factorized_attention.h"
#include "attn/ops/factorized_attention/factorized_attention_kernels.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {

namespace {

struct Dims {
  int64_t B, h, n, d;
  int64_t vb, vh, vn;  // v's strides over batch, head and key
};

Dims dims_of(const Tensor& t, const Tensor& v = Tensor()) {
  Dims z{t.size(0), t.size(1), t.size(2), t.size(3), 0, 0, 0};
  if (v.defined()) {
    z.vb = v.strides()[0];
    z.vh = v.strides()[1];
    z.vn = v.strides()[2];
  }
  return z;
}

template <class T>
__device__ __forceinline__ T weight(bool sigmoid, T y, T shift) {
  return sigmoid ? unary_math::stable_sigmoid(y) : std::exp(y - shift);
}

template <class T>
__global__ void pair_weights_kernel(T* r, const uint8_t* pos, const uint8_t* valid, bool sigmoid_t, T scale, Dims z,
                                    uint8_t* has_key) {
  ATTN_CUDA_LOOP(row, z.B * z.h * z.n) {
    const int64_t j = row % z.n, g = row / z.n, c = g % z.h, b = g / z.h;
    T* e = r + row * z.n;
    const uint8_t* p = pos + (c * z.n + j) * z.n;
    const uint8_t* key_ok = valid + b * z.n;
    const bool query_ok = valid[b * z.n + j] != 0;
    bool any = false;
    T m = cuda::neg_inf<T>();
    for (int64_t i = 0; i < z.n; ++i) {
      const bool ok = query_ok && p[i] && key_ok[i];
      any |= ok;
      if (ok) m = fmax(m, e[i] * scale);
    }
    has_key[row] = any;
    for (int64_t i = 0; i < z.n; ++i) {
      const bool ok = query_ok && p[i] && key_ok[i];
      e[i] = ok ? weight(sigmoid_t, e[i] * scale, m) : T(0);
    }
  }
}

template <class T>
__global__ void key_weights_kernel(const T* s, const T* v, const uint8_t* valid, bool sigmoid_s, Dims z, T* packed) {
  ATTN_CUDA_LOOP(col, z.B * z.h * z.d) {
    const int64_t l = col % z.d, g = col / z.d, c = g % z.h, b = g / z.h;
    const uint8_t* key_ok = valid + b * z.n;
    const T* sg = s + g * z.n * z.d;
    T m = cuda::neg_inf<T>();
    if (!sigmoid_s)
      for (int64_t i = 0; i < z.n; ++i)
        if (key_ok[i]) m = fmax(m, sg[i * z.d + l]);
    if (m == cuda::neg_inf<T>()) m = T(0);
    for (int64_t i = 0; i < z.n; ++i) {
      T* f = packed + (g * z.n + i) * 2 * z.d;
      const T w = key_ok[i] ? weight(sigmoid_s, sg[i * z.d + l], m) : T(0);
      f[l] = w;
      f[z.d + l] = key_ok[i] ? v[b * z.vb + c * z.vh + i * z.vn + l] * w : T(0);
    }
  }
}

template <class T>
__global__ void output_kernel(const T* dn, const uint8_t* has_key, Dims z, T* out, uint8_t* unsafe) {
  ATTN_CUDA_LOOP(row, z.B * z.h * z.n) {
    const T* den = dn + row * 2 * z.d;
    const T* num = den + z.d;
    bool small = false;
    for (int64_t l = 0; l < z.d; ++l) {
      small |= den[l] < T(kMinDenominator);
      out[row * z.d + l] = den[l] > T(0) ? num[l] / den[l] : T(0);
    }
    unsafe[row] = has_key[row] && small;
  }
}

template <class T>
__global__ void output_backward_kernel(const T* grad, const T* out, const T* dn, Dims z, T* packed_grad) {
  ATTN_CUDA_LOOP(idx, z.B * z.h * z.n * z.d) {
    const int64_t l = idx % z.d, row = idx / z.d;
    const T den = dn[row * 2 * z.d + l];
    const bool positive = den > T(0);
    packed_grad[row * 2 * z.d + l] = positive ? -grad[idx] * out[idx] / den : T(0);
    packed_grad[row * 2 * z.d + z.d + l] = positive ? grad[idx] / den : T(0);
  }
}

template <class T>
__global__ void pair_backward_kernel(T* ge, const T* e, bool sigmoid_t, T scale, int64_t count) {
  ATTN_CUDA_LOOP(idx, count) {
    const T w = e[idx];
    const T dw = sigmoid_t ? w * (T(1) - w) : w;
    ge[idx] = w > T(0) ? ge[idx] * dw * scale : T(0);
  }
}

template <class T>
__global__ void key_backward_kernel(const T* y, const T* packed, const T* v, const uint8_t* valid, bool sigmoid_s,
                                    Dims z, T* gv, bool accumulate_v, T* gs) {
  ATTN_CUDA_LOOP(idx, z.B * z.h * z.n * z.d) {
    const int64_t l = idx % z.d, row = idx / z.d, i = row % z.n, g = row / z.n, c = g % z.h, b = g / z.h;
    if (!valid[b * z.n + i]) {  // a padded key: no gradient, whatever v holds there
      if (!accumulate_v) gv[idx] = T(0);
      gs[idx] = T(0);
      continue;
    }
    const T f = packed[row * 2 * z.d + l];
    const T g_vf = y[row * 2 * z.d + z.d + l];
    const T g_f = g_vf * v[b * z.vb + c * z.vh + i * z.vn + l] + y[row * 2 * z.d + l];
    gv[idx] = accumulate_v ? gv[idx] + g_vf * f : g_vf * f;
    gs[idx] = g_f * (sigmoid_s ? f * (T(1) - f) : f);
  }
}

}  // namespace

void factorized_pair_weights_cuda(const Tensor& r, const Tensor& positional, const Tensor& valid, bool sigmoid_t,
                                  double scale, const Tensor& row_has_key) {
  dispatch_floating(r.dtype(), "factorized_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Dims z = dims_of(r);
    const int64_t rows = z.B * z.h * z.n;
    if (rows == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(rows), cuda::kThreads, 0, cuda::stream(), pair_weights_kernel<T>)(
        r.data<T>(), positional.data<uint8_t>(), valid.data<uint8_t>(), sigmoid_t, static_cast<T>(scale), z,
        row_has_key.data<uint8_t>());
    ATTN_CUDA_CHECK_LAUNCH("factorized_pair_weights");
  });
}

void factorized_key_weights_cuda(const Tensor& s, const Tensor& v, const Tensor& valid, bool sigmoid_s,
                                 const Tensor& packed) {
  dispatch_floating(s.dtype(), "factorized_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Dims z = dims_of(s, v);
    const int64_t cols = z.B * z.h * z.d;
    if (cols == 0 || z.n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(cols), cuda::kThreads, 0, cuda::stream(), key_weights_kernel<T>)(
        s.data<T>(), v.data<T>(), valid.data<uint8_t>(), sigmoid_s, z, packed.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("factorized_key_weights");
  });
}

void factorized_output_cuda(const Tensor& dn, const Tensor& row_has_key, const Tensor& out,
                            const Tensor& row_unsafe) {
  dispatch_floating(out.dtype(), "factorized_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Dims z = dims_of(out);
    const int64_t rows = z.B * z.h * z.n;
    if (rows == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(rows), cuda::kThreads, 0, cuda::stream(), output_kernel<T>)(
        dn.data<T>(), row_has_key.data<uint8_t>(), z, out.data<T>(), row_unsafe.data<uint8_t>());
    ATTN_CUDA_CHECK_LAUNCH("factorized_output");
  });
}

void factorized_output_backward_cuda(const Tensor& grad, const Tensor& out, const Tensor& dn,
                                     const Tensor& packed_grad) {
  dispatch_floating(out.dtype(), "factorized_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Dims z = dims_of(out);
    const int64_t count = out.numel();
    if (count == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(count), cuda::kThreads, 0, cuda::stream(), output_backward_kernel<T>)(
        grad.data<T>(), out.data<T>(), dn.data<T>(), z, packed_grad.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("factorized_output_backward");
  });
}

void factorized_pair_backward_cuda(const Tensor& grad_e, const Tensor& e, bool sigmoid_t, double scale) {
  dispatch_floating(e.dtype(), "factorized_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t count = e.numel();
    if (count == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(count), cuda::kThreads, 0, cuda::stream(), pair_backward_kernel<T>)(
        grad_e.data<T>(), e.data<T>(), sigmoid_t, static_cast<T>(scale), count);
    ATTN_CUDA_CHECK_LAUNCH("factorized_pair_backward");
  });
}

void factorized_key_backward_cuda(const Tensor& y, const Tensor& packed, const Tensor& v, const Tensor& valid,
                                  bool sigmoid_s, const Tensor& grad_v, bool accumulate_v, const Tensor& grad_s) {
  dispatch_floating(v.dtype(), "factorized_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Dims z = dims_of(grad_v, v);
    const int64_t count = grad_v.numel();
    if (count == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(count), cuda::kThreads, 0, cuda::stream(), key_backward_kernel<T>)(
        y.data<T>(), packed.data<T>(), v.data<T>(), valid.data<uint8_t>(), sigmoid_s, z, grad_v.data<T>(),
        accumulate_v, grad_s.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("factorized_key_backward");
  });
}

}  // namespace attn
