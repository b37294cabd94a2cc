// Shared by the commands that load a model config and its weights: build the
// encoder a config describes, and save or load its state as safetensors.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "attn/models/config.h"
#include "attn/models/encoder.h"

namespace attn {

// The config key holding the encoder's input width: the task model's
// embedding size (models/task_model.h declares it and its default).
constexpr const char* kInputDimKey = "embedding_dim";

// The input width the config gives (its default when absent), checked.
int64_t input_dim_of(const Config& config);

// Checks the config's keys and values (models/model_config_check.h), builds
// the encoder named by its `encoder` key, then reports every key nothing read,
// naming `source` (the config file).
std::unique_ptr<Encoder> build_encoder_from_config(const Config& config, const std::string& source, int64_t input_dim,
                                                   DType dtype, Generator& init, Generator& noise);

// Writes the module's parameters and buffers (Module::named_state) to `path`,
// recording the encoder name in the metadata ("encoder") when given.
void save_model_state(const std::string& path, const Module& m, const std::string& encoder_name = "");

// Loads `path` into the module (strict: every name must match). Errors name
// the file; a file saved for a different encoder says so.
void load_model_state(const std::string& path, Module& m, const std::string& encoder_name = "");

}  // namespace attn
