// Kernel signatures of the recurrent sequence op (ops/recurrent/recurrent.h),
// one slot per device: the fused elementwise part of one time step, forward
// or backward, for one cell (recurrent_cell_math.h has the formulas and the
// layout). The step's matrix products are the caller's.
#pragma once
#include "attn/engine/tensor.h"
#include "attn/ops/recurrent/recurrent_cell_math.h"

namespace attn {

enum class RecurrentStepKind {
  Lstm,              // one kernel per step
  GruTorch,          // one kernel per step
  GruTfGates,        // TensorFlow's GRU: r and u, then r * h for the candidate's product
  GruTfCandidate,    // the candidate and the new state
};

// One step's operands: every tensor contiguous, on one device; those a kind
// does not use are undefined.
struct RecurrentStep {
  RecurrentStepKind kind = RecurrentStepKind::Lstm;
  DType dtype = DType::F32;
  int64_t B = 0, n = 0, h = 0, G = 0, step = 0;
  bool reverse = false;
  int gi = 0, gf = 1, gg = 2, go = 3;
  double forget_bias = 0.0;
  Tensor lengths;  // int64 [B]
  Tensor xw, hh, b_hh, hs, cs, acts, extra, out;
  Tensor grad_out, dh, dc, du, d_rh, dxw, dp;  // backward
};

template <class T>
recurrent_math::StepPtrs<T> step_ptrs(const RecurrentStep& s) {
  auto ptr = [](const Tensor& t) { return t.defined() ? t.data<T>() : static_cast<T*>(nullptr); };
  recurrent_math::StepPtrs<T> p;
  p.B = s.B, p.n = s.n, p.h = s.h, p.G = s.G, p.step = s.step;
  p.reverse = s.reverse;
  p.gi = s.gi, p.gf = s.gf, p.gg = s.gg, p.go = s.go;
  p.forget_bias = static_cast<T>(s.forget_bias);
  p.len = s.lengths.data<int64_t>();
  p.xw = ptr(s.xw), p.hh = ptr(s.hh), p.b_hh = ptr(s.b_hh);
  p.hs = ptr(s.hs), p.cs = ptr(s.cs), p.acts = ptr(s.acts), p.extra = ptr(s.extra), p.out = ptr(s.out);
  p.grad_out = ptr(s.grad_out), p.dh = ptr(s.dh), p.dc = ptr(s.dc), p.du = ptr(s.du), p.d_rh = ptr(s.d_rh);
  p.dxw = ptr(s.dxw), p.dp = ptr(s.dp);
  return p;
}

void recurrent_step_cpu(const RecurrentStep& s);
void recurrent_step_backward_cpu(const RecurrentStep& s);

#ifdef ATTN_WITH_CUDA
void recurrent_step_cuda(const RecurrentStep& s);
void recurrent_step_backward_cuda(const RecurrentStep& s);
#endif

}  // namespace attn
