// CPU kernels of one recurrent step: the (example, unit) pairs split among
// the threads; each pair reads and writes only its own elements.
#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/cpu/vector_math.h"
#include "attn/ops/recurrent/recurrent_kernels.h"

namespace attn {

namespace {

// The engine's own float32 sigmoid and tanh (ops/cpu/vector_math.h: inline
// polynomials, several times cheaper than the C library's calls; float64
// takes the C library's).
struct CpuMath {
  template <class T> static T sig(T x) { return vector_math::sigmoid(x); }
  template <class T> static T tanh(T x) { return vector_math::tanh(x); }
};

// Each element costs a few exp/tanh: far cheaper than a thread start.
constexpr int64_t kGrain = 4096;

template <class T, class F>
void for_each_unit(const RecurrentStep& s, const F& f) {
  const recurrent_math::StepPtrs<T> p = step_ptrs<T>(s);
  parallel_for(s.B * s.h, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) f(p, e);
  });
}

}  // namespace

void recurrent_step_cpu(const RecurrentStep& s) {
  dispatch_floating(s.dtype, "recurrent_step", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using P = recurrent_math::StepPtrs<T>;
    switch (s.kind) {
      case RecurrentStepKind::Lstm: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::lstm_forward<CpuMath>(p, e); }); break;
      case RecurrentStepKind::GruTorch: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::gru_torch_forward<CpuMath>(p, e); }); break;
      case RecurrentStepKind::GruTfGates: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::gru_tf_gates_forward<CpuMath>(p, e); }); break;
      case RecurrentStepKind::GruTfCandidate: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::gru_tf_candidate_forward<CpuMath>(p, e); }); break;
    }
  });
}

void recurrent_step_backward_cpu(const RecurrentStep& s) {
  dispatch_floating(s.dtype, "recurrent_step_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using P = recurrent_math::StepPtrs<T>;
    switch (s.kind) {
      case RecurrentStepKind::Lstm: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::lstm_backward<CpuMath>(p, e); }); break;
      case RecurrentStepKind::GruTorch: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::gru_torch_backward<CpuMath>(p, e); }); break;
      // The TensorFlow GRU's backward stages run in the reverse order of its forward ones.
      case RecurrentStepKind::GruTfCandidate: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::gru_tf_candidate_backward<CpuMath>(p, e); }); break;
      case RecurrentStepKind::GruTfGates: for_each_unit<T>(s, [](const P& p, int64_t e) { recurrent_math::gru_tf_gates_backward<CpuMath>(p, e); }); break;
    }
  });
}

}  // namespace attn
