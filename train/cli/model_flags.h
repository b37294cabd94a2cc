// The `attn train` options that set model config keys, made from the config
// tables: one option for every key a table marks as a flag (ConfigKey::flag),
// and the list of every table's keys that ends `attn train --help`.
#pragma once
#include <string>
#include <vector>

namespace attn {

struct ModelFlag {
  std::string flag;  // the option without "--": "embedding-dim"
  std::string key;   // the config key: "embedding_dim"
  std::string help;  // the key's doc, the tables that declare it, its type, range and defaults
};

// The encoders' flags first (in registry order), then the task model's.
std::vector<ModelFlag> model_flags();

// The task model's keys, then each encoder's: name, type, allowed values,
// default and doc, one line each.
std::string model_config_keys_help();

}  // namespace attn
