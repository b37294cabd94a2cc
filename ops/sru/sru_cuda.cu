// CUDA kernels of the SRU sequence op: one thread per (sentence, unit),
// looping over the sentence's valid tokens (sru_math.h). Neighbouring
// threads take neighbouring units, so every step's reads are coalesced; the
// recurrence has no matrix product, so one launch covers all time steps.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/sru/sru_kernels.h"

namespace attn {

namespace {

template <class T>
__global__ void sru_kernel(sru_math::SruPtrs<T> p, bool backward) {
  ATTN_CUDA_LOOP(e, p.B * p.h) {
    const int64_t b = e / p.h, j = e % p.h;
    if (backward)
      sru_math::backward_unit<sru_math::DeviceMath>(p, b, j);
    else
      sru_math::forward_unit<sru_math::DeviceMath>(p, b, j);
  }
}

void launch(const SruRun& s, bool backward, const char* name) {
  dispatch_floating(s.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t units = s.B * s.h;
    if (units == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(units), cuda::kThreads, 0, cuda::stream(), sru_kernel<T>)
    (sru_ptrs<T>(s), backward);
    ATTN_CUDA_CHECK_LAUNCH(name);
  });
}

}  // namespace

void sru_forward_cuda(const SruRun& s) { launch(s, false, "sru_forward"); }
void sru_backward_cuda(const SruRun& s) { launch(s, true, "sru_backward"); }

}  // namespace attn
