// What a whole model config may hold: the task model's keys
// (task_model_config_keys) and those of its encoder (EncoderInfo::config_keys).
// Checked before a model is built, so a typo or a value out of range stops
// the program with the key's name, never a silent default or a huge tensor.
#pragma once
#include <string>
#include <vector>

#include "attn/models/config.h"
#include "attn/models/config_schema.h"

namespace attn {

// The tables a model config with this encoder is read through: the task
// model's, then the encoder's (none for an unknown encoder).
std::vector<const ConfigSchema*> model_config_tables(const std::string& encoder);

// Throws attn::Error for a key no table declares ("<what> does not know the
// key(s): ...", listing the keys that are known) and for a value its row
// refuses (naming the key, the value and what is allowed). Reads nothing:
// Config::check_all_used still sees which keys the model used.
void check_model_config(const Config& config, const std::string& what);

// Checks one value given for `key` against every table of the encoder that
// declares it; throws attn::Error when none does or one refuses the value.
void check_model_config_value(const std::string& encoder, const std::string& key, const std::string& value);

}  // namespace attn
