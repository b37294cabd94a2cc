// CPU kernels of the softmax family: one pass for the max over valid entries,
// one for the exponentials and their sum, one to normalise. Rows run in
// parallel; sums accumulate in double so float32 tracks float64 closely.
// float32 rows take vector_math::exp in SIMD clones; float64 rows keep the C
// library's exp (gradcheck compares against it).
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/softmax/softmax_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

// Max over valid entries; -inf when there is none. NaNs never win a comparison.
template <class T>
T valid_max(const T* x, const uint8_t* mk, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  if (mk) {
    for (int64_t i = 0; i < n; ++i)
      if (mk[i] && x[i] > m) m = x[i];
  } else {
    for (int64_t i = 0; i < n; ++i)
      if (x[i] > m) m = x[i];
  }
  return m;
}

// The float32 max in kLanes independent lanes, which vectorise; max is
// exact, so the result equals the sequential loop's.
ATTN_SIMD_CLONES float valid_max(const float* __restrict x, const uint8_t* __restrict mk, int64_t n) {
  constexpr int64_t kLanes = 16;
  const float lowest = -std::numeric_limits<float>::infinity();
  float lanes[kLanes];
  for (int64_t k = 0; k < kLanes; ++k) lanes[k] = lowest;
  int64_t i = 0;
  if (mk) {
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t k = 0; k < kLanes; ++k) {
        const float v = mk[i + k] ? x[i + k] : lowest;
        lanes[k] = v > lanes[k] ? v : lanes[k];
      }
  } else {
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t k = 0; k < kLanes; ++k) lanes[k] = x[i + k] > lanes[k] ? x[i + k] : lanes[k];
  }
  float m = valid_max<float>(x + i, mk ? mk + i : nullptr, n - i);
  for (int64_t k = 0; k < kLanes; ++k) m = lanes[k] > m ? lanes[k] : m;
  return m;
}

// out[i] = exp(x[i] - m) (0 where masked); returns the sum in double.
double exp_shifted_and_sum(const double* x, const uint8_t* mk, double m, double* out, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = !mk || mk[i] ? std::exp(x[i] - m) : 0.0;
    out[i] = e;
    s += e;
  }
  return s;
}

// The float32 row in two vectorisable loops: the exponentials, then a double
// sum over kLanes independent partial sums (a fixed order, so a row's result
// does not depend on the thread that runs it).
ATTN_SIMD_CLONES double exp_shifted_and_sum(const float* __restrict x, const uint8_t* __restrict mk, float m,
                                             float* __restrict out, int64_t n) {
  if (mk) {
    // exp runs on masked entries too (no traps: -fno-trapping-math) and is
    // then selected away; a branch around it would keep the loop scalar.
    for (int64_t i = 0; i < n; ++i) {
      const float e = vector_math::exp(x[i] - m);
      out[i] = mk[i] ? e : 0.0f;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = vector_math::exp(x[i] - m);
  }
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] += out[i + k];
  double s = 0;
  for (; i < n; ++i) s += out[i];
  for (int64_t k = 0; k < kLanes; ++k) s += lanes[k];
  return s;
}

// One row; returns true when the row had no valid finite entry (output zeros).
template <class T>
bool forward_row(bool log, const T* x, const uint8_t* mk, T* out, int64_t n) {
  const T m = valid_max(x, mk, n);
  if (m == -std::numeric_limits<T>::infinity()) {
    std::memset(out, 0, static_cast<size_t>(n) * sizeof(T));
    return true;
  }
  // Masked entries are selected away before they touch the sum, so -inf or
  // 1e30 stored there cannot produce inf - inf.
  const double s = exp_shifted_and_sum(x, mk, m, out, n);
  // s >= 1: the max entry contributes exp(0).
  if (log) {
    const T log_s = static_cast<T>(std::log(s));
    if (mk) {
      for (int64_t i = 0; i < n; ++i) out[i] = mk[i] ? (x[i] - m) - log_s : T(0);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - m) - log_s;
    }
  } else {
    const T inv = static_cast<T>(1.0 / s);
    for (int64_t i = 0; i < n; ++i) out[i] *= inv;
  }
  return false;
}

}  // namespace

void softmax_forward_cpu(bool log, const Tensor& x, const Tensor& mask, const Tensor& out, const Tensor& row_empty) {
  const char* name = log ? "log_softmax" : "softmax";
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.shape().empty() ? 1 : x.shape().back();
    const int64_t rows = n > 0 ? x.numel() / n : 0;
    const T* px = x.data<T>();
    const uint8_t* pm = mask.defined() ? mask.data<uint8_t>() : nullptr;
    T* po = out.data<T>();
    uint8_t* pe = row_empty.defined() ? row_empty.data<uint8_t>() : nullptr;
    parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        bool empty_row = forward_row(log, px + r * n, pm ? pm + r * n : nullptr, po + r * n, n);
        if (pe) pe[r] = empty_row ? 1 : 0;
      }
    });
  });
}

void softmax_backward_cpu(bool log, const Tensor& y, const Tensor& grad, const Tensor& mask, const Tensor& row_empty,
                          const Tensor& grad_in) {
  const char* name = log ? "log_softmax_backward" : "softmax_backward";
  dispatch_floating(y.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = y.shape().empty() ? 1 : y.shape().back();
    const int64_t rows = n > 0 ? y.numel() / n : 0;
    const T* py = y.data<T>();
    const T* pg = grad.data<T>();
    const uint8_t* pm = log && mask.defined() ? mask.data<uint8_t>() : nullptr;
    const uint8_t* pe = log && row_empty.defined() ? row_empty.data<uint8_t>() : nullptr;
    T* pd = grad_in.data<T>();
    parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* yr = py + r * n;
        const T* gr = pg + r * n;
        const uint8_t* mr = pm ? pm + r * n : nullptr;
        T* dr = pd + r * n;
        if (!log) {
          // Masked entries and empty rows hold y = 0, so their gradient is 0.
          double dot = 0;
          for (int64_t i = 0; i < n; ++i) dot += static_cast<double>(gr[i]) * yr[i];
          const T d = static_cast<T>(dot);
          for (int64_t i = 0; i < n; ++i) dr[i] = yr[i] * (gr[i] - d);
        } else if (pe && pe[r]) {
          std::memset(dr, 0, static_cast<size_t>(n) * sizeof(T));
        } else if (mr) {
          double s = 0;
          for (int64_t i = 0; i < n; ++i) s += mr[i] ? static_cast<double>(gr[i]) : 0.0;
          const T st = static_cast<T>(s);
          for (int64_t i = 0; i < n; ++i) dr[i] = mr[i] ? gr[i] - std::exp(yr[i]) * st : T(0);
        } else {
          double s = 0;
          for (int64_t i = 0; i < n; ++i) s += gr[i];
          const T st = static_cast<T>(s);
          for (int64_t i = 0; i < n; ++i) dr[i] = gr[i] - std::exp(yr[i]) * st;
        }
      }
    });
  });
}

}  // namespace attn
