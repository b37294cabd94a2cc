// The interface every sentence encoder implements, so heads, training, the
// benchmark and `attn forward` treat all mechanisms alike.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/random.h"
#include "models/config.h"
#include "nn/module.h"

namespace attn {

struct EncoderOutput {
  Tensor tokens;    // [B, n, token_dim()], exactly zero at padded positions
  Tensor sentence;  // [B, sentence_dim()], the encoder's own readout
};

class Encoder : public Module {
 public:
  // x [B, n, input_dim] (float), mask [B, n] uint8 (1 = valid token). The
  // padded rows of x are selected out (replaced by exact zeros) before the
  // mechanism sees them: whatever they hold, NaN and Inf included, never
  // reaches a valid token, the sentence or a gradient.
  EncoderOutput encode(const Tensor& x, const Tensor& mask);
  // The mechanism itself, on x whose padded rows are exactly zero.
  virtual EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) = 0;
  virtual int64_t token_dim() const = 0;
  virtual int64_t sentence_dim() const = 0;
};

// What a builder needs besides the config: the input width, the dtype, a
// generator for initialisation and one for dropout/sampling noise (kept
// separate so evaluation noise never shifts initialisation).
struct EncoderContext {
  int64_t input_dim = 0;
  DType dtype = DType::F32;
  Generator* init = nullptr;
  Generator* noise = nullptr;
};

// Builds the encoder named by config key `encoder` (mtsa, disan, biblosan,
// mstrans, resan, transformer, bow). Reads the keys it needs; unknown keys are
// reported by the caller's Config::check_all_used.
std::unique_ptr<Encoder> build_encoder(const Config& config, const EncoderContext& ctx);

// The registered encoder names, sorted (the registry is the only list).
std::vector<std::string> encoder_names();

}  // namespace attn
