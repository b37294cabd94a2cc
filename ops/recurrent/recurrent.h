// The fused recurrent sequence op: an LSTM or GRU run over every sentence
// of a batch, in one direction, over exactly its valid tokens.
//
// The input projection of every token is one GEMM the caller makes
// (`linear(x, W_ih, b)` -> xw [B, n, G]); this op then runs, per time step,
// one [B, h] x [h, G] product and one fused elementwise gate kernel, and
// back through time in its backward pass, keeping only the states, the cell
// states and the gate activations (and one [B, h] per step for a GRU).
//
// Lengths are exact: the mask must be a prefix mask (a sentence's valid
// tokens first). Sentence b's forward state stops at its length; in reverse
// the op reads its valid tokens last to first, never the padding. Padded
// outputs are exactly 0, and padded inputs are never read (NaN there changes
// nothing, in either pass).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

enum class RecurrentCell { Lstm, Gru };

// Which published cell: the papers' authors' TensorFlow cells, or PyTorch's
// (weights exchangeable with torch.nn.LSTM / torch.nn.GRU).
enum class CellForm {
  // LSTM: gate blocks i, j (candidate), f, o; forget bias 1.0 added to f's
  // pre-activation; one bias (in xw). GRU: blocks r, u, c; the candidate's
  // product reads r * h: c = tanh(x_c + (r h) W_c), h' = u h + (1 - u) c.
  TensorFlow,
  // LSTM: blocks i, f, g, o, no forget bias; b_hh added like b_ih. GRU:
  // blocks r, z, n with n = tanh(x_n + r (h W_n + b_hn)), h' = (1 - z) n + z h.
  PyTorch,
};

// The number of gate blocks G / h of a cell: 4 for an LSTM, 3 for a GRU.
int64_t recurrent_gate_blocks(RecurrentCell cell);

// xw [B, n, G] (G = blocks * h): every token's input projection with its
// bias. w_hh [h, G]: the recurrent weight, h W_hh the step's product. b_hh
// [G] (PyTorch form only; undefined for none, and for the TensorFlow form).
// mask: uint8 [B, n] prefix mask, or undefined for every token valid.
// Returns the hidden states [B, n, h]. Differentiable in xw, w_hh and b_hh.
Tensor recurrent_sequence(const Tensor& xw, const Tensor& w_hh, const Tensor& b_hh, const Tensor& mask,
                          RecurrentCell cell, CellForm form, bool reverse);

}  // namespace attn
