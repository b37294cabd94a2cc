// CPU kernels of softmax over a middle axis: x is [outer, n, inner] and each
// of the outer * inner columns (stride inner) is one softmax over n. The
// inner features are contiguous, so every loop runs across features and
// vectorises; no permuted copy of x, the mask or the gradient is made. Sums
// accumulate in double, as in the row kernels.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/softmax/softmax_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

constexpr int64_t kFeatureBlock = 256;  // columns per task: a few rows of them stay in cache

struct ColumnDims {
  int64_t outer, n, inner, blocks;
};

template <class F>
void for_each_column_block(const ColumnDims& s, const F& task) {
  const int64_t work = std::max<int64_t>(1, s.n * std::min(s.inner, kFeatureBlock));
  parallel_for(s.outer * s.blocks, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / s.blocks, f0 = (t % s.blocks) * kFeatureBlock;
      task(o, f0, std::min(s.inner, f0 + kFeatureBlock));
    }
  });
}

// Row j of column block (o, f0..): its mask flags, one per feature (null
// when the mask is per row or absent), and whether a per-row mask keeps it.
struct RowMask {
  const uint8_t* per_feature;
  bool row_valid;
};

inline RowMask row_mask(const uint8_t* mask, bool per_feature, const ColumnDims& s, int64_t o, int64_t j, int64_t f0) {
  if (!mask) return {nullptr, true};
  if (per_feature) return {mask + (o * s.n + j) * s.inner + f0, true};
  return {nullptr, mask[o * s.n + j] != 0};
}

template <class T>
ATTN_SIMD_CLONES void forward_block(const T* x, const uint8_t* mask, bool per_feature, const ColumnDims& s, int64_t o,
                                    int64_t f0, int64_t f1, T* out) {
  const int64_t w = f1 - f0;
  const T lowest = -std::numeric_limits<T>::infinity();
  std::vector<T> mx(w, lowest);
  std::vector<double> sum(w, 0.0);
  T* __restrict m = mx.data();
  double* __restrict acc = sum.data();
  for (int64_t j = 0; j < s.n; ++j) {
    const T* __restrict xr = x + (o * s.n + j) * s.inner + f0;
    const RowMask rm = row_mask(mask, per_feature, s, o, j, f0);
    if (rm.per_feature) {
      for (int64_t f = 0; f < w; ++f) {
        const T v = rm.per_feature[f] ? xr[f] : lowest;
        m[f] = v > m[f] ? v : m[f];  // NaN never wins
      }
    } else if (rm.row_valid) {
      for (int64_t f = 0; f < w; ++f) m[f] = xr[f] > m[f] ? xr[f] : m[f];
    }
  }
  for (int64_t j = 0; j < s.n; ++j) {
    const T* __restrict xr = x + (o * s.n + j) * s.inner + f0;
    T* __restrict yr = out + (o * s.n + j) * s.inner + f0;
    const RowMask rm = row_mask(mask, per_feature, s, o, j, f0);
    if (!rm.per_feature && !rm.row_valid) {
      std::fill(yr, yr + w, T(0));
      continue;
    }
    // exp runs everywhere and is then selected away where masked or where
    // the column has no valid entry (max -inf): a branch would keep the
    // loop scalar. The double sums are a loop of their own: mixed into the
    // exp loop they made GCC's AVX-512 clone spill and run ~4x slower.
    if (rm.per_feature) {
      for (int64_t f = 0; f < w; ++f) {
        const T e = vector_math::exp(xr[f] - m[f]);
        yr[f] = rm.per_feature[f] && m[f] != lowest ? e : T(0);
      }
    } else {
      for (int64_t f = 0; f < w; ++f) {
        const T e = vector_math::exp(xr[f] - m[f]);
        yr[f] = m[f] != lowest ? e : T(0);
      }
    }
    for (int64_t f = 0; f < w; ++f) acc[f] += yr[f];
  }
  std::vector<T> inv(w);
  for (int64_t f = 0; f < w; ++f) inv[f] = acc[f] > 0 ? static_cast<T>(1.0 / acc[f]) : T(0);
  for (int64_t j = 0; j < s.n; ++j) {
    T* __restrict yr = out + (o * s.n + j) * s.inner + f0;
    for (int64_t f = 0; f < w; ++f) yr[f] *= inv[f];
  }
}

// grad_in = y * (grad - sum over n of grad * y): masked entries and empty
// columns hold y = 0, so their gradient is 0.
template <class T>
ATTN_SIMD_CLONES void backward_block(const T* y, const T* grad, const ColumnDims& s, int64_t o, int64_t f0,
                                     int64_t f1, T* grad_in) {
  const int64_t w = f1 - f0;
  std::vector<double> dot(w, 0.0);
  for (int64_t j = 0; j < s.n; ++j) {
    const int64_t row = (o * s.n + j) * s.inner + f0;
    for (int64_t f = 0; f < w; ++f) dot[f] += static_cast<double>(grad[row + f]) * y[row + f];
  }
  std::vector<T> d(w);
  for (int64_t f = 0; f < w; ++f) d[f] = static_cast<T>(dot[f]);
  for (int64_t j = 0; j < s.n; ++j) {
    const int64_t row = (o * s.n + j) * s.inner + f0;
    for (int64_t f = 0; f < w; ++f) grad_in[row + f] = y[row + f] * (grad[row + f] - d[f]);
  }
}

ColumnDims column_dims(int64_t outer, int64_t n, int64_t inner) {
  return {outer, n, inner, (inner + kFeatureBlock - 1) / kFeatureBlock};
}

}  // namespace

void softmax_columns_forward_cpu(const Tensor& x, const Tensor& mask, int64_t outer, int64_t n, int64_t inner,
                                 const Tensor& out) {
  dispatch_floating(x.dtype(), "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ColumnDims s = column_dims(outer, n, inner);
    const uint8_t* pm = mask.defined() ? mask.data<uint8_t>() : nullptr;
    const bool per_feature = mask.defined() && mask.numel() == outer * n * inner && inner > 1;
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for_each_column_block(s, [&](int64_t o, int64_t f0, int64_t f1) {
      forward_block<T>(px, pm, per_feature, s, o, f0, f1, po);
    });
  });
}

void softmax_columns_backward_cpu(const Tensor& y, const Tensor& grad, int64_t outer, int64_t n, int64_t inner,
                                  const Tensor& grad_in) {
  dispatch_floating(y.dtype(), "softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ColumnDims s = column_dims(outer, n, inner);
    const T* py = y.data<T>();
    const T* pg = grad.data<T>();
    T* pd = grad_in.data<T>();
    for_each_column_block(s, [&](int64_t o, int64_t f0, int64_t f1) { backward_block<T>(py, pg, s, o, f0, f1, pd); });
  });
}

}  // namespace attn
