// The one list of encoders: name -> builder. A new mechanism adds one line.
#include <functional>
#include <map>

#include "engine/error.h"
#include "models/biblosan.h"
#include "models/bow.h"
#include "models/disan.h"
#include "models/encoder.h"
#include "models/masks.h"
#include "models/mtsa.h"
#include "models/multiscale.h"
#include "models/resan.h"
#include "models/transformer.h"

namespace attn {

namespace {
using Builder = std::unique_ptr<Encoder> (*)(const Config&, const EncoderContext&);

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> table = {
      {"biblosan", build_biblosan_encoder},
      {"bow", build_bow_encoder},
      {"disan", build_disan_encoder},
      {"mstrans", build_mstrans_encoder},
      {"mtsa", build_mtsa_encoder},
      {"resan", build_resan_encoder},
      {"transformer", build_transformer_encoder},
  };
  return table;
}
}  // namespace

std::vector<std::string> encoder_names() {
  std::vector<std::string> names;
  for (const auto& entry : builders()) names.push_back(entry.first);
  return names;
}

EncoderOutput Encoder::encode(const Tensor& x, const Tensor& mask) {
  // Shapes that do not match are left to the mechanism's own checks, which
  // name the encoder.
  const bool matches = x.defined() && mask.defined() && x.dim() == 3 && mask.dtype() == DType::U8 &&
                       mask.dim() == 2 && mask.size(0) == x.size(0) && mask.size(1) == x.size(1) &&
                       mask.device() == x.device();
  return encode_tokens(matches ? zero_padded(x, mask) : x, mask);
}

std::unique_ptr<Encoder> build_encoder(const Config& config, const EncoderContext& ctx) {
  ATTN_CHECK(ctx.init && ctx.noise, "build_encoder", "the context needs both generators");
  ATTN_CHECK(ctx.input_dim > 0, "build_encoder", "input dimension must be positive, got ", ctx.input_dim);
  std::string name = config.get("encoder", "mtsa");
  auto it = builders().find(name);
  if (it == builders().end()) {
    std::string known;
    for (const auto& [k, v] : builders()) known += (known.empty() ? "" : ", ") + k;
    ATTN_CHECK(false, "build_encoder", "unknown encoder '", name, "' (known: ", known, ")");
  }
  return it->second(config, ctx);
}

}  // namespace attn
