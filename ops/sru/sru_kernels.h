// Kernel signatures of the SRU sequence op (ops/sru/sru.h), one slot per
// device: the whole recurrence over time, forward or backward
// (sru_math.h has the step). The projections are the caller's GEMM.
#pragma once
#include "attn/engine/tensor.h"
#include "attn/ops/sru/sru_math.h"

namespace attn {

// Every tensor contiguous, on one device; bias may be undefined, and the
// backward-only ones are undefined in the forward pass.
struct SruRun {
  DType dtype = DType::F32;
  int64_t B = 0, n = 0, h = 0;
  bool reverse = false;
  Tensor lengths;  // int64 [B]
  Tensor u, highway, bias, cs, out;
  Tensor grad_out, du, dhw;
};

template <class T>
sru_math::SruPtrs<T> sru_ptrs(const SruRun& s) {
  auto ptr = [](const Tensor& t) { return t.defined() ? t.data<T>() : static_cast<T*>(nullptr); };
  sru_math::SruPtrs<T> p;
  p.B = s.B, p.n = s.n, p.h = s.h, p.reverse = s.reverse;
  p.len = s.lengths.data<int64_t>();
  p.u = ptr(s.u), p.hw = ptr(s.highway), p.bias = ptr(s.bias), p.cs = ptr(s.cs), p.out = ptr(s.out);
  p.grad_out = ptr(s.grad_out), p.du = ptr(s.du), p.dhw = ptr(s.dhw);
  return p;
}

void sru_forward_cpu(const SruRun& s);
void sru_backward_cpu(const SruRun& s);

#ifdef ATTN_WITH_CUDA
void sru_forward_cuda(const SruRun& s);
void sru_backward_cuda(const SruRun& s);
#endif

}  // namespace attn
