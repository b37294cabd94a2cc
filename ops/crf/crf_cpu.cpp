// CPU kernels of the CRF family: one task per sentence, sentences in
// parallel, each walking its valid tokens with a loop over tags per step
// (crf_math.h). A sentence writes only its own rows of every output.
#include <algorithm>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/crf/crf_kernels.h"

namespace attn {

namespace {

// f(p, b, len) for every sentence; a sentence costs about n K^2 operations.
template <class T, class F>
void for_each_sentence(const CrfRun& r, const F& f) {
  const crf_math::CrfPtrs<T> p = crf_ptrs<T>(r);
  const int64_t work = std::max<int64_t>(1, r.n * r.K * r.K);
  parallel_for(r.B, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) f(p, b, p.len[b]);
  });
}

template <class T>
void forward(const CrfRun& r) {
  for_each_sentence<T>(r, [](const crf_math::CrfPtrs<T>& p, int64_t b, int64_t len) {
    for (int64_t t = 0; t < len; ++t)
      for (int64_t j = 0; j < p.K; ++j) crf_math::forward_cell(p, b, t, j);
    crf_math::finish_nll(p, b, len);
  });
}

template <class T>
void backward(const CrfRun& r) {
  for_each_sentence<T>(r, [](const crf_math::CrfPtrs<T>& p, int64_t b, int64_t len) {
    if (len == 0) return;
    for (int64_t i = 0; i < p.K; ++i) crf_math::init_beta(p, b, i);
    int cur = 0;
    for (int64_t t = len - 1; t >= 0; --t) {
      for (int64_t j = 0; j < p.K; ++j) crf_math::gradient_column(p, b, len, t, cur, j);
      if (t == 0) break;
      for (int64_t i = 0; i < p.K; ++i) crf_math::beta_cell(p, b, t, cur, i);
      cur = 1 - cur;
    }
  });
}

template <class T>
void viterbi(const CrfRun& r) {
  for_each_sentence<T>(r, [](const crf_math::CrfPtrs<T>& p, int64_t b, int64_t len) {
    for (int64_t t = 0; t < len; ++t)
      for (int64_t j = 0; j < p.K; ++j) crf_math::viterbi_cell(p, b, t, j);
    crf_math::viterbi_backtrack(p, b, len);
  });
}

}  // namespace

void crf_forward_cpu(const CrfRun& r) {
  dispatch_floating(r.dtype, "crf_forward", [&](auto tag) { forward<typename decltype(tag)::type>(r); });
}
void crf_backward_cpu(const CrfRun& r) {
  dispatch_floating(r.dtype, "crf_backward", [&](auto tag) { backward<typename decltype(tag)::type>(r); });
}
void crf_viterbi_cpu(const CrfRun& r) {
  dispatch_floating(r.dtype, "crf_viterbi", [&](auto tag) { viterbi<typename decltype(tag)::type>(r); });
}

}  // namespace attn
