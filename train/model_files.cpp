#include "attn/train/model_files.h"

#include "attn/engine/error.h"
#include "attn/models/model_config_check.h"
#include "attn/models/task_model.h"
#include "attn/nn/safetensors.h"
#include "attn/train/finite_check.h"

namespace attn {

int64_t input_dim_of(const Config& config) { return task_model_config_keys().get_int(config, kInputDimKey); }

std::unique_ptr<Encoder> build_encoder_from_config(const Config& config, const std::string& source, int64_t input_dim,
                                                   DType dtype, Generator& init, Generator& noise) {
  check_model_config(config, "the model config '" + source + "'");
  EncoderContext ctx;
  ctx.input_dim = input_dim;
  ctx.dtype = dtype;
  ctx.init = &init;
  ctx.noise = &noise;
  std::unique_ptr<Encoder> encoder = build_encoder(config, ctx);
  config.check_all_used("the model config '" + source + "'");
  return encoder;
}

void save_model_state(const std::string& path, const Module& m, const std::string& encoder_name) {
  std::map<std::string, std::string> metadata;
  if (!encoder_name.empty()) metadata["encoder"] = encoder_name;
  const auto state = m.named_state();
  require_finite(state, "weights: saving '" + path + "'");
  save_safetensors(path, state, metadata);
}

void load_model_state(const std::string& path, Module& m, const std::string& encoder_name) {
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor> tensors = load_safetensors(path, &metadata);
  auto saved = metadata.find("encoder");
  ATTN_CHECK(encoder_name.empty() || saved == metadata.end() || saved->second == encoder_name, "weights", path,
             ": saved for encoder '", saved->second, "' but the model config builds '", encoder_name, "'");
  require_finite(tensors, "weights '" + path + "'");
  try {
    load_into_module(m, tensors, true);
  } catch (const Error& e) {
    throw Error("weights " + path + ": " + e.user_message());
  }
}

}  // namespace attn
