// Inverted dropout and Bernoulli sampling. Randomness comes from an explicit
// Generator: each call draws one seed from it and the kernel expands that
// seed into the random bits, so a run is reproducible from its seed and the
// result depends on neither the thread count nor the device. Inside an
// ExampleNoiseKeys scope each example's row has a stream of its own
// (ops/dropout/dropout_example_keys.h).
#pragma once
#include "attn/engine/random.h"
#include "attn/engine/tensor.h"

namespace attn {

// Training: zeroes each element with probability drop_prob and scales the
// kept ones by 1 / (1 - drop_prob), so the expected value is unchanged and
// evaluation needs no rescaling. Returns x itself when !training or
// drop_prob == 0. drop_prob must lie in [0, 1).
Tensor dropout(const Tensor& x, double drop_prob, Generator& gen, bool training = true);

// 0/1 samples (probs' dtype and shape) with P(1) = probs; every probability
// must lie in [0, 1]. Sampling has no gradient: never recorded.
Tensor bernoulli(const Tensor& probs, Generator& gen);

}  // namespace attn
