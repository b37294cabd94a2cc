// The op registry: every differentiable op registers its name, sample inputs
// and tolerances here. One list drives the gradcheck test, `attn gradcheck`,
// and (with the CUDA backend) the CUDA-versus-CPU comparison.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/engine/tensor.h"

namespace attn {

struct Tolerance {
  double eps = 1e-6;   // central-difference step
  double atol = 1e-5;
  double rtol = 1e-3;
};

// One sample: inputs (float64; those with requires_grad are checked) and the
// function of them whose Jacobian is compared.
struct OpCase {
  std::string label;  // e.g. "broadcast", "transposed input"
  std::vector<Tensor> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  // True when an input is broadcast against another or is a non-contiguous view.
  bool broadcast_or_strided = false;
};

struct OpSpec {
  std::string name;
  std::string family;  // the ops/ file stem that implements it
  std::function<std::vector<OpCase>()> cases;
  Tolerance tolerance;
};

// A spec at the default tolerances: a samples file registers each op as
// r.add(op_spec("name", "family", [] { ...return cases; })).
OpSpec op_spec(const std::string& name, const std::string& family, std::function<std::vector<OpCase>()> cases);

class OpRegistry {
 public:
  void add(OpSpec spec);
  const std::vector<OpSpec>& all() const { return specs_; }
  const OpSpec* find(const std::string& name) const;

 private:
  std::vector<OpSpec> specs_;
};

// Every family's samples, registered once (ops/registry.cpp lists the families).
const OpRegistry& op_registry();

// Sample helpers, all float64.
namespace samples {
// Values drawn uniformly from [lo, hi) (choose ranges away from kinks).
Tensor input(const Shape& shape, Generator& gen, double lo = -1.0, double hi = 1.0);
// A non-contiguous leaf: the transpose (last two axes) of a fresh tensor.
Tensor transposed_input(const Shape& shape, Generator& gen, double lo = -1.0, double hi = 1.0);
// Values in [lo, hi) with a random sign: magnitudes stay away from 0.
Tensor signed_input(const Shape& shape, Generator& gen, double lo, double hi);
// A constant a case function builds or captures (mask, index, target, ramp),
// brought to where `ref` lives: ref's device, and ref's dtype when both are
// floating. Lets one case run on float32 or on the GPU (tests/test_cuda_ops.cpp).
Tensor like(const Tensor& t, const Tensor& ref);
// y times a fixed ramp 1, 1.1, 1.2, ... over its elements in row-major
// order, so each output element weighs differently in the checked Jacobian:
// a gradient sent to the wrong element (or summed into the wrong one) shows.
Tensor times_ramp(const Tensor& y);
// A uint8 mask of `shape` from row-major values (nonzero = valid).
Tensor u8_mask(const std::vector<int64_t>& values, const Shape& shape);
// A uint8 [B, n] mask of sentences of lengths[b] tokens: 1 at the first
// lengths[b] positions of row b, 0 after them.
Tensor length_mask(const std::vector<int64_t>& lengths, int64_t n);
}  // namespace samples

// Every op family with gradcheck samples, one line each: a new family is one
// more X(name) here and a register_<name>_samples(OpRegistry&) in its own
// ops/<name>/<name>_samples.cpp. op_registry() registers them in this order.
#define ATTN_OP_FAMILIES(X)                                                                                      \
  X(unary)                                                                                                     \
  X(binary)                                                                                                    \
  X(reduce)                                                                                                    \
  X(view)                                                                                                      \
  X(softmax)                                                                                                   \
  X(softmax_pool)                                                                                              \
  X(modulated_linear)                                                                                          \
  X(matmul)                                                                                                    \
  X(join)                                                                                                      \
  X(index)                                                                                                     \
  X(layer_norm)                                                                                                \
  X(dropout)                                                                                                   \
  X(loss)                                                                                                      \
  X(multi_dim_attention)                                                                                       \
  X(separable_attention)                                                                                       \
  X(factorized_attention)                                                                                      \
  X(sigmoid_gate)                                                                                              \
  X(window_attention)                                                                                          \
  X(dot_product_attention)                                                                                     \
  X(token_conv)                                                                                                \
  X(recurrent)                                                                                                 \
  X(sru)                                                                                                       \
  X(crf)                                                                                                       \
  /* a new family: one more X(name) line above */

#define ATTN_DECLARE_OP_SAMPLES(family) void register_##family##_samples(OpRegistry& r);
ATTN_OP_FAMILIES(ATTN_DECLARE_OP_SAMPLES)
#undef ATTN_DECLARE_OP_SAMPLES

}  // namespace attn
