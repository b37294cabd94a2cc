// CPU kernels of the token unfold. Tasks are rows (b, t) of the output,
// each writing its own k d (forward) or d (backward) values: no atomics, and
// the backward's sum over taps runs in tap order, so the bits do not depend
// on the thread count.
#include <algorithm>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/token_conv/token_conv_kernels.h"

namespace attn {

namespace {

inline bool valid_token(const uint8_t* mask, int64_t row) { return mask == nullptr || mask[row] != 0; }

}  // namespace

void token_unfold_cpu(const Tensor& x, const Tensor& mask, int64_t left, const Tensor& cols) {
  dispatch_floating(x.dtype(), "token_unfold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = x.size(0), n = x.size(1), d = x.size(2), k = cols.size(2);
    const T* px = x.data<T>();
    const uint8_t* m = mask.defined() ? mask.data<uint8_t>() : nullptr;
    T* pc = cols.data<T>();
    parallel_for(B * n, row_grain(k * d), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / n, t = row % n;
        for (int64_t j = 0; j < k; ++j) {
          T* out = pc + (row * k + j) * d;
          const int64_t s = t + j - left;
          if (s >= 0 && s < n && valid_token(m, row) && valid_token(m, b * n + s)) {
            const T* in = px + (b * n + s) * d;
            std::copy(in, in + d, out);
          } else {
            std::fill(out, out + d, T(0));
          }
        }
      }
    });
  });
}

void token_unfold_backward_cpu(const Tensor& grad_cols, const Tensor& mask, int64_t left, const Tensor& grad_x) {
  dispatch_floating(grad_x.dtype(), "token_unfold_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = grad_x.size(0), n = grad_x.size(1), d = grad_x.size(2), k = grad_cols.size(2);
    const T* pg = grad_cols.data<T>();
    const uint8_t* m = mask.defined() ? mask.data<uint8_t>() : nullptr;
    T* px = grad_x.data<T>();
    parallel_for(B * n, row_grain(k * d), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / n, s = row % n;
        T* __restrict out = px + row * d;
        std::fill(out, out + d, T(0));
        if (!valid_token(m, row)) continue;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t t = s - j + left;
          if (t < 0 || t >= n || !valid_token(m, b * n + t)) continue;
          const T* __restrict g = pg + ((b * n + t) * k + j) * d;
          for (int64_t f = 0; f < d; ++f) out[f] += g[f];
        }
      }
    });
  });
}

}  // namespace attn
