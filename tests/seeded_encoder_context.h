// An EncoderContext that owns the two generators it points to, so a test
// builds encoders from one declaration: float64 (the gradchecks' type)
// unless told otherwise.
#pragma once
#include <cstdint>

#include "attn/engine/dtype.h"
#include "attn/engine/random.h"
#include "attn/models/encoder.h"

namespace attn {
namespace testing_support {

struct SeededEncoderContext : EncoderContext {
  Generator init_gen, noise_gen;

  SeededEncoderContext(int64_t input_features, uint64_t init_seed, uint64_t noise_seed, DType type = DType::F64)
      : init_gen(init_seed), noise_gen(noise_seed) {
    input_dim = input_features;
    dtype = type;
    init = &init_gen;
    noise = &noise_gen;
  }
  // A copy would point at the original's generators.
  SeededEncoderContext(const SeededEncoderContext&) = delete;
  SeededEncoderContext& operator=(const SeededEncoderContext&) = delete;
};

}  // namespace testing_support
}  // namespace attn
