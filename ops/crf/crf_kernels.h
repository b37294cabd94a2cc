// Kernel signatures of the CRF family (ops/crf/crf.h), one slot per device:
// the forward algorithm with the NLL, its backward (forward-backward
// marginals), and Viterbi decoding. crf_math.h has the recursions and the
// layout of every tensor.
#pragma once
#include "attn/engine/tensor.h"
#include "attn/ops/crf/crf_math.h"

namespace attn {

// Every tensor contiguous and on one device; the scratch tensors (alpha,
// log_z, beta and the gradients) are float64, the others of `dtype` or
// int64. Tensors a kernel does not use are undefined.
struct CrfRun {
  DType dtype = DType::F32;
  int64_t B = 0, n = 0, K = 0;
  Tensor lengths;  // int64 [B]
  Tensor emissions, tags, transitions, start, end;
  Tensor alpha, log_z, nll;
  Tensor grad, beta, d_emissions, d_transitions, d_start, d_end;
  Tensor back, path;
};

template <class P>
P* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<P>() : nullptr;
}

template <class T>
crf_math::CrfPtrs<T> crf_ptrs(const CrfRun& r) {
  crf_math::CrfPtrs<T> p;
  p.B = r.B, p.n = r.n, p.K = r.K;
  p.len = data_or_null<int64_t>(r.lengths);
  p.emissions = data_or_null<T>(r.emissions);
  p.tags = data_or_null<int64_t>(r.tags);
  p.transitions = data_or_null<T>(r.transitions);
  p.start = data_or_null<T>(r.start);
  p.end = data_or_null<T>(r.end);
  p.alpha = data_or_null<double>(r.alpha);
  p.log_z = data_or_null<double>(r.log_z);
  p.nll = data_or_null<T>(r.nll);
  p.grad = data_or_null<T>(r.grad);
  p.beta = data_or_null<double>(r.beta);
  p.d_emissions = data_or_null<T>(r.d_emissions);
  p.d_transitions = data_or_null<double>(r.d_transitions);
  p.d_start = data_or_null<double>(r.d_start);
  p.d_end = data_or_null<double>(r.d_end);
  p.back = data_or_null<int64_t>(r.back);
  p.path = data_or_null<int64_t>(r.path);
  return p;
}

// alpha, log_z, nll.
void crf_forward_cpu(const CrfRun& r);
// d_emissions, d_transitions, d_start, d_end (zero-filled by the caller; a
// padded token and an empty sentence keep their zeros) from alpha and log_z.
void crf_backward_cpu(const CrfRun& r);
// path (the best tags, -1 at padding), with alpha and back as scratch.
void crf_viterbi_cpu(const CrfRun& r);

#ifdef ATTN_WITH_CUDA
void crf_forward_cuda(const CrfRun& r);
void crf_backward_cuda(const CrfRun& r);
void crf_viterbi_cuda(const CrfRun& r);
#endif

}  // namespace attn
