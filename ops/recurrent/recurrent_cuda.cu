// CUDA kernels of one recurrent step: one thread per (example, unit), the
// same formulas as the CPU's (recurrent_cell_math.h). Neighbouring threads
// take neighbouring units, so every row is read coalesced.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/recurrent/recurrent_kernels.h"

namespace attn {

namespace {

template <class T>
__global__ void step_kernel(recurrent_math::StepPtrs<T> p, RecurrentStepKind kind, bool backward) {
  ATTN_CUDA_LOOP(e, p.B * p.h) {
    switch (kind) {
      case RecurrentStepKind::Lstm:
        backward ? recurrent_math::lstm_backward<recurrent_math::DeviceMath>(p, e) : recurrent_math::lstm_forward<recurrent_math::DeviceMath>(p, e);
        break;
      case RecurrentStepKind::GruTorch:
        backward ? recurrent_math::gru_torch_backward<recurrent_math::DeviceMath>(p, e) : recurrent_math::gru_torch_forward<recurrent_math::DeviceMath>(p, e);
        break;
      case RecurrentStepKind::GruTfGates:
        backward ? recurrent_math::gru_tf_gates_backward<recurrent_math::DeviceMath>(p, e) : recurrent_math::gru_tf_gates_forward<recurrent_math::DeviceMath>(p, e);
        break;
      case RecurrentStepKind::GruTfCandidate:
        backward ? recurrent_math::gru_tf_candidate_backward<recurrent_math::DeviceMath>(p, e) : recurrent_math::gru_tf_candidate_forward<recurrent_math::DeviceMath>(p, e);
        break;
    }
  }
}

void launch(const RecurrentStep& s, bool backward, const char* name) {
  dispatch_floating(s.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t units = s.B * s.h;
    if (units == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(units), cuda::kThreads, 0, cuda::stream(), step_kernel<T>)
    (step_ptrs<T>(s), s.kind, backward);
    ATTN_CUDA_CHECK_LAUNCH(name);
  });
}

}  // namespace

void recurrent_step_cuda(const RecurrentStep& s) { launch(s, false, "recurrent_step"); }
void recurrent_step_backward_cuda(const RecurrentStep& s) { launch(s, true, "recurrent_step_backward"); }

}  // namespace attn
