// CPU kernels of the SRU sequence op. A task is one sentence and a block of
// adjacent units; it walks the sentence's valid tokens in order with the
// block's carries in a local array, so each step reads contiguous rows
// (the per-unit loop over time of the GPU kernel would stride by 3h).
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

template <class T, class Body>
void for_each_block(const SruRun& s, const Body& body) {
  const int64_t blocks = (s.h + kUnitBlock - 1) / kUnitBlock;
  const sru_math::SruPtrs<T> p = sru_ptrs<T>(s);
  // One task walks up to n steps of kUnitBlock units: a few tasks already
  // outweigh a thread start.
  parallel_for(s.B * blocks, 4, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / blocks, j0 = (task % blocks) * kUnitBlock;
      body(p, b, j0, std::min(s.h, j0 + kUnitBlock));
    }
  });
}

template <class T>
void forward(const SruRun& s) {
  for_each_block<T>(s, [](const sru_math::SruPtrs<T>& p, int64_t b, int64_t j0, int64_t j1) {
    T c[kUnitBlock] = {};
    const int64_t len = p.len[b];
    for (int64_t step = 0; step < len; ++step) {
      const int64_t pos = sru_math::token_of(step, len, p.reverse);
      for (int64_t j = j0; j < j1; ++j) sru_math::forward_step<CpuMath>(p, b, pos, j, c[j - j0]);
    }
  });
}

template <class T>
void backward(const SruRun& s) {
  for_each_block<T>(s, [](const sru_math::SruPtrs<T>& p, int64_t b, int64_t j0, int64_t j1) {
    T dc[kUnitBlock] = {};
    const int64_t len = p.len[b];
    for (int64_t step = len - 1; step >= 0; --step) {
      const int64_t pos = sru_math::token_of(step, len, p.reverse);
      const int64_t prev = step > 0 ? sru_math::token_of(step - 1, len, p.reverse) : -1;
      for (int64_t j = j0; j < j1; ++j) sru_math::backward_step<CpuMath>(p, b, pos, prev, j, dc[j - j0]);
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
