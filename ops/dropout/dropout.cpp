#include "attn/ops/dropout/dropout.h"

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dropout/dropout_kernels.h"
#include "attn/ops/dropout/dropout_stream.h"
#include "attn/ops/dropout/dropout_example_keys.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {

namespace {

using DropoutFn = void (*)(const Tensor&, double, const NoiseStreams&, const Tensor&, const Tensor&);
using BernoulliFn = void (*)(const Tensor&, const NoiseStreams&, const Tensor&);
const DeviceKernels<DropoutFn> kDropout{"dropout", dropout_cpu, ATTN_CUDA_KERNEL(dropout_cuda)};
using DropoutBackwardFn = void (*)(const Tensor&, const Tensor&, double, const Tensor&);
const DeviceKernels<DropoutBackwardFn> kDropoutBackward{"dropout_backward", dropout_backward_cpu,
                                                        ATTN_CUDA_KERNEL(dropout_backward_cuda)};
const DeviceKernels<BernoulliFn> kBernoulli{"bernoulli", bernoulli_cpu, ATTN_CUDA_KERNEL(bernoulli_cuda)};

// Probabilities outside [0, 1], NaN included (it fails both comparisons),
// counted with ops that run on any device.
int64_t count_invalid_probabilities(const Tensor& probs) {
  NoGrad no_grad;
  Tensor zero = zeros({}, probs.dtype(), probs.device());
  Tensor one = ones({}, probs.dtype(), probs.device());
  Tensor inside = mul(cast(ge(probs, zero), DType::F64), cast(le(probs, one), DType::F64));
  return probs.numel() - std::llround(sum(inside).item());
}

// The streams of one call drawing `seed`: one per example inside an
// ExampleNoiseKeys scope (x's leading dimension must be the batch), else one
// over the whole tensor.
NoiseStreams streams_for(const Tensor& x, uint64_t seed, const char* op) {
  NoiseStreams streams;
  const std::vector<uint64_t>* keys = ExampleNoiseKeys::active();
  if (keys == nullptr) {
    streams.keys = {dropout_stream::stream_key(seed)};
    return streams;
  }
  ATTN_CHECK(x.dim() >= 1 && x.size(0) == static_cast<int64_t>(keys->size()), op,
             "noise keyed on examples needs the batch (", keys->size(),
             " examples) as the leading dimension, got a tensor of shape ", shape_str(x.shape()));
  for (uint64_t key : *keys) streams.keys.push_back(dropout_stream::row_stream_key(seed, key));
  return streams;
}

}  // namespace

Tensor dropout(const Tensor& x, double drop_prob, Generator& gen, bool training) {
  ATTN_CHECK(drop_prob >= 0 && drop_prob < 1, "dropout", "drop probability must be in [0, 1), got ", drop_prob,
             " for input of shape ", shape_str(x.shape()));
  ATTN_CHECK(is_floating(x.dtype()), "dropout", "expects float32 or float64, got ", dtype_name(x.dtype()),
             " for input of shape ", shape_str(x.shape()));
  if (!training || drop_prob == 0) return x;

  const uint64_t seed = gen.derive_seed();
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  Tensor mask = empty(x.shape(), DType::U8, x.device());
  kDropout(x.device(), contiguous(x.detach()), drop_prob, streams_for(x, seed, "dropout"), out, mask);
  if (!any_requires_grad({x})) return out;

  const double scale = 1.0 / (1.0 - drop_prob);
  record(out, "dropout", {x}, {mask}, [mask, scale](const Tensor& g, const std::vector<bool>&) {
    // Kept elements pass the gradient scaled as in the forward; dropped ones get 0.
    Tensor grad_x = empty(g.shape(), g.dtype(), g.device());
    kDropoutBackward(g.device(), contiguous(g), mask, scale, grad_x);
    return std::vector<Tensor>{grad_x};
  });
  return out;
}

Tensor bernoulli(const Tensor& probs, Generator& gen) {
  ATTN_CHECK(is_floating(probs.dtype()), "bernoulli", "expects float32 or float64 probabilities, got ",
             dtype_name(probs.dtype()), " of shape ", shape_str(probs.shape()));
  Tensor out = empty(probs.shape(), probs.dtype(), probs.device());
  if (probs.numel() == 0) return out;
  const int64_t invalid = count_invalid_probabilities(probs);
  ATTN_CHECK(invalid == 0, "bernoulli", invalid, " of the ", probs.numel(), " probabilities in shape ",
             shape_str(probs.shape()), " lie outside [0, 1]");
  kBernoulli(probs.device(), contiguous(probs.detach()), streams_for(probs, gen.derive_seed(), "bernoulli"), out);
  return out;
}

}  // namespace attn
