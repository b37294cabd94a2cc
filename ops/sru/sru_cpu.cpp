// CPU kernels of the SRU sequence op. A task is one sentence and a block of
// adjacent units; it walks the sentence's valid tokens in order with the
// block's carries in a local array, so each step is a loop over contiguous
// rows that the compiler vectorises (the per-unit loop over time of the GPU
// kernel would stride by 3h and stay scalar).
#include <algorithm>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/cpu/vector_math.h"
#include "attn/ops/sru/sru_kernels.h"

namespace attn {

namespace {

// The engine's own float32 sigmoid and tanh (ops/cpu/vector_math.h: inline
// polynomials the compiler can vectorise; float64 takes the C library's).
struct CpuMath {
  template <class T> static T sig(T x) { return vector_math::sigmoid(x); }
  template <class T> static T tanh(T x) { return vector_math::tanh(x); }
};

constexpr int64_t kUnitBlock = 64;

// The rows of one token that a block of units [j0, j0 + w) reads and
// writes, as non-aliasing pointers so that the loop over units vectorises.
template <class T>
struct Rows {
  const T* __restrict xt;  // x~ block of u
  const T* __restrict af;  // f block
  const T* __restrict ar;  // r block
  const T* __restrict x;   // highway
  int64_t at;              // (b, pos, j0) in the [B, n, h] tensors
};

template <class T>
Rows<T> rows_of(const sru_math::SruPtrs<T>& p, int64_t b, int64_t pos, int64_t j0) {
  const T* ut = p.u + (b * p.n + pos) * 3 * p.h + j0;
  const int64_t at = (b * p.n + pos) * p.h + j0;
  return {ut, ut + p.h, ut + 2 * p.h, p.hw + at, at};
}

// Calls body(p, b, j0, w, bf, br) for every (sentence, block of <= kUnitBlock
// units); bf, br are the block's biases (zeros without a bias).
template <class T, class Body>
void for_each_block(const SruRun& s, const Body& body) {
  const int64_t blocks = (s.h + kUnitBlock - 1) / kUnitBlock;
  const sru_math::SruPtrs<T> p = sru_ptrs<T>(s);
  // One task walks up to n steps of kUnitBlock units: a few tasks already
  // outweigh a thread start.
  parallel_for(s.B * blocks, 4, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks, j0 = (task % blocks) * kUnitBlock;
      const int64_t w = std::min(s.h, j0 + kUnitBlock) - j0;
      T bf[kUnitBlock] = {}, br[kUnitBlock] = {};
      if (p.bias)
        for (int64_t k = 0; k < w; ++k) bf[k] = p.bias[j0 + k], br[k] = p.bias[p.h + j0 + k];
      body(p, b, j0, w, bf, br);
    }
  });
}

template <class T>
void forward(const SruRun& s) {
  for_each_block<T>(s, [](const sru_math::SruPtrs<T>& p, int64_t b, int64_t j0, int64_t w, const T* bf,
                          const T* br) {
    T c[kUnitBlock] = {};
    const int64_t len = p.len[b];
    for (int64_t step = 0; step < len; ++step) {
      const Rows<T> r = rows_of(p, b, sru_math::token_of(step, len, p.reverse), j0);
      T* __restrict out = p.out + r.at;
      T* __restrict cs = p.cs + r.at;
#pragma omp simd
      for (int64_t k = 0; k < w; ++k) {
        T ck = c[k];
        out[k] = sru_math::cell_forward<CpuMath>(r.xt[k], r.af[k] + bf[k], r.ar[k] + br[k], r.x[k], ck);
        cs[k] = c[k] = ck;
      }
    }
  });
}

template <class T>
void backward(const SruRun& s) {
  for_each_block<T>(s, [](const sru_math::SruPtrs<T>& p, int64_t b, int64_t j0, int64_t w, const T* bf,
                          const T* br) {
    T dc[kUnitBlock] = {};
    const T zero[kUnitBlock] = {};  // c_{-1}
    const int64_t len = p.len[b];
    for (int64_t step = len - 1; step >= 0; --step) {
      const Rows<T> r = rows_of(p, b, sru_math::token_of(step, len, p.reverse), j0);
      const T* __restrict c = p.cs + r.at;
      const T* __restrict c_prev =
          step > 0 ? p.cs + rows_of(p, b, sru_math::token_of(step - 1, len, p.reverse), j0).at : zero;
      const T* __restrict dh = p.grad_out + r.at;
      T* __restrict dxt = p.du + (r.xt - p.u);
      T* __restrict daf = p.du + (r.af - p.u);
      T* __restrict dar = p.du + (r.ar - p.u);
      T* __restrict dx = p.dhw + r.at;
#pragma omp simd
      for (int64_t k = 0; k < w; ++k) {
        T d = dc[k];
        sru_math::cell_backward<CpuMath>(r.xt[k], r.af[k] + bf[k], r.ar[k] + br[k], r.x[k], c[k], c_prev[k], dh[k], d,
                                         dxt[k], daf[k], dar[k], dx[k]);
        dc[k] = d;
      }
    }
  });
}

}  // namespace

void sru_forward_cpu(const SruRun& s) {
  dispatch_floating(s.dtype, "sru_forward", [&](auto tag) { forward<typename decltype(tag)::type>(s); });
}

void sru_backward_cpu(const SruRun& s) {
  dispatch_floating(s.dtype, "sru_backward", [&](auto tag) { backward<typename decltype(tag)::type>(s); });
}

}  // namespace attn
