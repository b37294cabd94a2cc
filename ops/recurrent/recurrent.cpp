#include "attn/ops/recurrent/recurrent.h"

#include <algorithm>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/prefix_lengths.h"
#include "attn/ops/recurrent/recurrent_kernels.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "recurrent_sequence";

using StepFn = void (*)(const RecurrentStep&);
const DeviceKernels<StepFn> kStep{"recurrent_step", recurrent_step_cpu, ATTN_CUDA_KERNEL(recurrent_step_cuda)};
const DeviceKernels<StepFn> kStepBackward{"recurrent_step_backward", recurrent_step_backward_cpu,
                                          ATTN_CUDA_KERNEL(recurrent_step_backward_cuda)};

std::string describe(const Tensor& t) { return t.defined() ? shape_str(t.shape()) : std::string("(undefined)"); }

void check_operands(const Tensor& xw, const Tensor& w_hh, const Tensor& b_hh, const Tensor& mask, RecurrentCell cell,
                    CellForm form) {
  ATTN_CHECK(xw.defined() && is_floating(xw.dtype()) && xw.dim() == 3, kOp,
             "xw must be a float32 or float64 tensor [B, n, G], got ", describe(xw));
  const int64_t blocks = recurrent_gate_blocks(cell), G = xw.size(2);
  ATTN_CHECK(G > 0 && G % blocks == 0, kOp, "xw ", shape_str(xw.shape()), ": its last axis must be ", blocks,
             " gate blocks of the hidden width (", blocks, " h, h >= 1)");
  const int64_t h = G / blocks;
  ATTN_CHECK(w_hh.defined() && w_hh.shape() == Shape({h, G}), kOp, "w_hh must be [", h, ", ", G, "] for xw ",
             shape_str(xw.shape()), ", got ", describe(w_hh));
  ATTN_CHECK(w_hh.dtype() == xw.dtype() && w_hh.device() == xw.device(), kOp, "w_hh is ", dtype_name(w_hh.dtype()),
             " on ", device_name(w_hh.device()), ", xw is ", dtype_name(xw.dtype()), " on ", device_name(xw.device()));
  if (b_hh.defined()) {
    ATTN_CHECK(form == CellForm::PyTorch, kOp,
               "b_hh is PyTorch's second bias; the TensorFlow form has one bias, in xw (pass no b_hh)");
    ATTN_CHECK(b_hh.shape() == Shape({G}), kOp, "b_hh must be [", G, "], got ", shape_str(b_hh.shape()));
    ATTN_CHECK(b_hh.dtype() == xw.dtype() && b_hh.device() == xw.device(), kOp, "b_hh is ",
               dtype_name(b_hh.dtype()), " on ", device_name(b_hh.device()), ", xw is ", dtype_name(xw.dtype()),
               " on ", device_name(xw.device()));
  }
  if (!mask.defined()) return;
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({xw.size(0), xw.size(1)}), kOp,
             "mask must be uint8 [", xw.size(0), ", ", xw.size(1), "], got ", dtype_name(mask.dtype()), " ",
             shape_str(mask.shape()));
}

// Row s of a [S(+1), B, w] buffer as a [B, w] view.
Tensor row(const Tensor& t, int64_t s) { return reshape(narrow(t, 0, s, 1), {t.size(1), t.size(2)}); }

void set_gate_blocks(RecurrentStep& st, RecurrentCell cell, CellForm form) {
  if (cell != RecurrentCell::Lstm) return;
  if (form == CellForm::TensorFlow) {  // BasicLSTMCell: i, j, f, o and forget_bias = 1
    st.gi = 0, st.gg = 1, st.gf = 2, st.go = 3;
    st.forget_bias = 1.0;
  } else {  // torch.nn.LSTM: i, f, g, o
    st.gi = 0, st.gf = 1, st.gg = 2, st.go = 3;
    st.forget_bias = 0.0;
  }
}

}  // namespace

int64_t recurrent_gate_blocks(RecurrentCell cell) { return cell == RecurrentCell::Lstm ? 4 : 3; }

Tensor recurrent_sequence(const Tensor& xw_in, const Tensor& w_hh, const Tensor& b_hh, const Tensor& mask,
                          RecurrentCell cell, CellForm form, bool reverse) {
  check_operands(xw_in, w_hh, b_hh, mask, cell, form);
  const Device dev = xw_in.device();
  const DType dt = xw_in.dtype();
  const int64_t B = xw_in.size(0), n = xw_in.size(1), G = xw_in.size(2);
  const int64_t h = G / recurrent_gate_blocks(cell);
  const std::vector<int64_t> lens = prefix_lengths(mask, B, n, kOp);
  const int64_t S = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
  const bool lstm = cell == RecurrentCell::Lstm;
  const bool gru_tf = cell == RecurrentCell::Gru && form == CellForm::TensorFlow;

  RecurrentStep st;
  st.dtype = dt;
  st.B = B, st.n = n, st.h = h, st.G = G, st.reverse = reverse;
  set_gate_blocks(st, cell, form);
  st.lengths = from_indices(lens, {B}).to(dev);
  st.xw = contiguous(xw_in.detach());
  st.b_hh = b_hh.defined() ? contiguous(b_hh.detach()) : Tensor();
  st.hs = zeros({S + 1, B, h}, dt, dev);
  st.cs = lstm ? zeros({S + 1, B, h}, dt, dev) : Tensor();
  st.acts = empty({S, B, G}, dt, dev);
  st.extra = lstm ? Tensor() : empty({S, B, h}, dt, dev);
  st.out = zeros({B, n, h}, dt, dev);
  const Tensor w = w_hh.detach();
  {
    NoGrad no_grad;
    for (int64_t s = 0; s < S; ++s) {
      st.step = s;
      if (gru_tf) {
        st.kind = RecurrentStepKind::GruTfGates;
        st.hh = matmul(row(st.hs, s), narrow(w, 1, 0, 2 * h));
        kStep(dev, st);
        st.kind = RecurrentStepKind::GruTfCandidate;
        st.hh = matmul(row(st.extra, s), narrow(w, 1, 2 * h, h));
        kStep(dev, st);
      } else {
        st.kind = lstm ? RecurrentStepKind::Lstm : RecurrentStepKind::GruTorch;
        st.hh = matmul(row(st.hs, s), w);
        kStep(dev, st);
      }
    }
  }
  Tensor out = st.out;
  std::vector<Tensor> inputs{xw_in, w_hh};
  if (b_hh.defined()) inputs.push_back(b_hh);
  if (!any_requires_grad(inputs)) return out;

  // What the backward reads: the states, gate activations and the GRU's
  // extra row, never xw (the activations already hold what it gave).
  RecurrentStep saved = st;
  saved.xw = Tensor();
  saved.hh = Tensor();
  saved.b_hh = Tensor();
  saved.out = Tensor();
  record(out, kOp, inputs,
         {saved.lengths, saved.xw, saved.hh, saved.b_hh, saved.hs, saved.cs, saved.acts, saved.extra, saved.out,
          saved.grad_out, saved.dh, saved.dc, saved.du, saved.d_rh, saved.dxw, saved.dp, w},
         [saved, w, lstm, gru_tf, S](const Tensor& g, const std::vector<bool>& needs) {
    RecurrentStep bs = saved;
    const Device dev = g.device();
    const DType dt = g.dtype();
    const int64_t B = bs.B, h = bs.h, G = bs.G;
    bs.grad_out = contiguous(g);
    bs.dxw = zeros({B, bs.n, G}, dt, dev);
    bs.dp = empty({S, B, G}, dt, dev);
    bs.dh = zeros({B, h}, dt, dev);
    bs.dc = lstm ? zeros({B, h}, dt, dev) : Tensor();
    bs.du = gru_tf ? empty({B, h}, dt, dev) : Tensor();
    const Tensor wt = transpose(w, 0, 1);  // [G, h]
    for (int64_t s = S - 1; s >= 0; --s) {
      bs.step = s;
      const Tensor dps = row(bs.dp, s);
      if (gru_tf) {
        bs.kind = RecurrentStepKind::GruTfCandidate;
        kStepBackward(dev, bs);
        bs.d_rh = matmul(narrow(dps, 1, 2 * h, h), narrow(wt, 0, 2 * h, h));
        bs.kind = RecurrentStepKind::GruTfGates;
        kStepBackward(dev, bs);
        bs.dh = add(bs.dh, matmul(narrow(dps, 1, 0, 2 * h), narrow(wt, 0, 0, 2 * h)));
      } else {
        bs.kind = lstm ? RecurrentStepKind::Lstm : RecurrentStepKind::GruTorch;
        kStepBackward(dev, bs);
        bs.dh = add(bs.dh, matmul(dps, wt));
      }
    }
    // The recurrent weight's gradient over all steps at once: [S B, h]^T [S B, G].
    Tensor dw, db;
    if (S == 0) {  // no sentence has a token: nothing reached the weights
      dw = needs[1] ? zeros({h, G}, dt, dev) : Tensor();
      db = needs.size() > 2 && needs[2] ? zeros({G}, dt, dev) : Tensor();
      std::vector<Tensor> grads{needs[0] ? bs.dxw : Tensor(), dw};
      if (needs.size() > 2) grads.push_back(db);
      return grads;
    }
    const Tensor dp_rows = reshape(bs.dp, {S * B, G});
    if (needs[1]) {
      const Tensor h_rows = transpose(reshape(narrow(bs.hs, 0, 0, S), {S * B, h}), 0, 1);
      if (gru_tf) {
        const Tensor rh_rows = transpose(reshape(bs.extra, {S * B, h}), 0, 1);
        dw = concat({matmul(h_rows, narrow(dp_rows, 1, 0, 2 * h)), matmul(rh_rows, narrow(dp_rows, 1, 2 * h, h))}, 1);
      } else {
        dw = matmul(h_rows, dp_rows);
      }
    }
    if (needs.size() > 2 && needs[2]) db = sum(dp_rows, {0});
    std::vector<Tensor> grads{needs[0] ? bs.dxw : Tensor(), dw};
    if (needs.size() > 2) grads.push_back(db);
    return grads;
  });
  return out;
}

}  // namespace attn
