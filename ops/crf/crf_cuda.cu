// CUDA kernels of the CRF family: one block per sentence, one thread per tag
// (a block-stride loop when there are more tags than threads), a barrier
// between time steps; the per-sentence ends (log Z and the gold score, the
// Viterbi backtrack) run on the block's first thread. The recursions are
// crf_math.h's, the CPU's own.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/crf/crf_kernels.h"

namespace attn {

namespace {

#define ATTN_CRF_TAGS(j) for (int64_t j = threadIdx.x; j < p.K; j += blockDim.x)

template <class T>
__global__ void crf_forward_kernel(crf_math::CrfPtrs<T> p) {
  for (int64_t b = blockIdx.x; b < p.B; b += gridDim.x) {
    const int64_t len = p.len[b];
    for (int64_t t = 0; t < len; ++t) {
      ATTN_CRF_TAGS(j) crf_math::forward_cell(p, b, t, j);
      __syncthreads();
    }
    if (threadIdx.x == 0) crf_math::finish_nll(p, b, len);
  }
}

template <class T>
__global__ void crf_backward_kernel(crf_math::CrfPtrs<T> p) {
  for (int64_t b = blockIdx.x; b < p.B; b += gridDim.x) {
    const int64_t len = p.len[b];
    if (len == 0) continue;
    ATTN_CRF_TAGS(i) crf_math::init_beta(p, b, i);
    __syncthreads();
    int cur = 0;
    for (int64_t t = len - 1; t >= 0; --t) {
      ATTN_CRF_TAGS(j) crf_math::gradient_column(p, b, len, t, cur, j);
      if (t == 0) break;
      ATTN_CRF_TAGS(i) crf_math::beta_cell(p, b, t, cur, i);
      __syncthreads();
      cur = 1 - cur;
    }
  }
}

template <class T>
__global__ void crf_viterbi_kernel(crf_math::CrfPtrs<T> p) {
  for (int64_t b = blockIdx.x; b < p.B; b += gridDim.x) {
    const int64_t len = p.len[b];
    for (int64_t t = 0; t < len; ++t) {
      ATTN_CRF_TAGS(j) crf_math::viterbi_cell(p, b, t, j);
      __syncthreads();
    }
    if (threadIdx.x == 0) crf_math::viterbi_backtrack(p, b, len);
  }
}

#undef ATTN_CRF_TAGS

enum class Pass { Forward, Backward, Viterbi };

void launch(const CrfRun& r, Pass pass, const char* name) {
  dispatch_floating(r.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (r.B == 0) return;
    const crf_math::CrfPtrs<T> p = crf_ptrs<T>(r);
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(r.B, cuda::kMaxBlocks));
    // Whole warps, at most one thread per tag.
    const int threads = static_cast<int>(std::min<int64_t>(cuda::kThreads, (r.K + cuda::kWarp - 1) / cuda::kWarp * cuda::kWarp));
    switch (pass) {
      case Pass::Forward:
        ATTN_CUDA_LAUNCH(blocks, threads, 0, cuda::stream(), crf_forward_kernel<T>)(p);
        break;
      case Pass::Backward:
        ATTN_CUDA_LAUNCH(blocks, threads, 0, cuda::stream(), crf_backward_kernel<T>)(p);
        break;
      case Pass::Viterbi:
        ATTN_CUDA_LAUNCH(blocks, threads, 0, cuda::stream(), crf_viterbi_kernel<T>)(p);
        break;
    }
    ATTN_CUDA_CHECK_LAUNCH(name);
  });
}

}  // namespace

void crf_forward_cuda(const CrfRun& r) { launch(r, Pass::Forward, "crf_forward"); }
void crf_backward_cuda(const CrfRun& r) { launch(r, Pass::Backward, "crf_backward"); }
void crf_viterbi_cuda(const CrfRun& r) { launch(r, Pass::Viterbi, "crf_viterbi"); }

}  // namespace attn
