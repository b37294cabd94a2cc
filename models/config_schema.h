// The declaration of a model config's keys. Each encoder (beside its builder)
// and the task model declare every key they read as one row of a table: name,
// type, default, allowed values and one line of doc. Builders read their
// values through the table, so a default is written once; the same rows check
// a model.cfg (models/model_config_check.h), make `attn train`'s model flags
// and its list of keys, and are compared with the tables of docs/models.md by
// tests/test_config_schema.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/models/config.h"
#include "attn/nn/activation.h"

namespace attn {

enum class ConfigType { Int, Float, Bool, Choice, Text, IntList };
const char* config_type_name(ConfigType type);  // "int", "float", "bool", "choice", "text", "int list"

struct ConfigKey {
  std::string name;
  ConfigType type = ConfigType::Text;
  // The value a config without the key gets, as model.cfg would hold it.
  // Empty for a key whose default follows from other keys (the builder passes
  // it; default_doc says how) or that has none (then it is optional or
  // required by another key's value, as default_doc says).
  std::string default_value;
  std::string default_doc;
  // Int, Float and every entry of an IntList lie in [min, max], or in
  // (min, max] when min_exclusive. Doubles hold every bound used exactly.
  double min = 0, max = 0;
  bool min_exclusive = false;
  std::vector<std::string> choices;  // Choice: the accepted values
  // Text: what a value looks like, and a check that throws attn::Error for a
  // malformed one (may be null).
  std::string format;
  void (*check)(const std::string& value) = nullptr;
  std::string doc;  // one line
  // Also an `attn train` option: --name with '-' for '_'.
  bool flag = false;

  bool has_default() const { return !default_value.empty(); }
  std::string flag_name() const;
  std::string allowed() const;        // "1..65536", "(0, 1]", "relu, elu", ...
  std::string shown_default() const;  // default_value, else default_doc
  // Marks the key as an `attn train` option.
  ConfigKey as_flag() const;
  // The default follows from other keys, as `how` says; the builder passes it.
  ConfigKey derived_default(const std::string& how) const;
};

// The rows, each built with its type's range in one call.
ConfigKey int_key(const std::string& name, int64_t default_value, int64_t min, int64_t max, const std::string& doc);
// An integer without a fixed default (see ConfigKey::default_doc).
ConfigKey int_key_without_default(const std::string& name, const std::string& default_doc, int64_t min, int64_t max,
                                  const std::string& doc);
ConfigKey int_list_key(const std::string& name, const std::string& default_doc, int64_t min, int64_t max,
                       const std::string& doc);
// A float in [min, max].
ConfigKey float_key(const std::string& name, double default_value, double min, double max, const std::string& doc);
// A float in (min, max].
ConfigKey float_key_above(const std::string& name, double default_value, double min, double max,
                          const std::string& doc);
ConfigKey float_key_without_default(const std::string& name, const std::string& default_doc, double min, double max,
                                    bool min_exclusive, const std::string& doc);
// A keep probability: (0, 1].
ConfigKey probability_key(const std::string& name, double default_value, const std::string& doc);
ConfigKey bool_key(const std::string& name, bool default_value, const std::string& doc);
ConfigKey choice_key(const std::string& name, const std::string& default_value, std::vector<std::string> choices,
                     const std::string& doc);
ConfigKey text_key(const std::string& name, const std::string& default_value, const std::string& format,
                   void (*check)(const std::string&), const std::string& doc);
// An activation chosen by name (nn/activation.h).
ConfigKey activation_key(const std::string& name, Activation default_value, const std::string& doc);

// The bounds shared by many tables, so "a width" means the same everywhere
// and no product of sizes can overflow int64 later.
namespace config_limits {
constexpr int64_t kWidth = 65536;     // hidden sizes, embedding size
constexpr int64_t kHeads = 1024;
constexpr int64_t kLayers = 1000;
constexpr int64_t kLength = 1 << 20;  // token counts: window radii, block lengths, batch sizes
constexpr double kScale = 1e6;        // scale constants such as c in c tanh(x / c)
}  // namespace config_limits

// The value as the key's type, checked: each throws attn::Error naming the
// key, `owner` (the table), the value and what is allowed.
int64_t parse_config_int(const ConfigKey& key, const std::string& value, const std::string& owner);
double parse_config_float(const ConfigKey& key, const std::string& value, const std::string& owner);
bool parse_config_bool(const ConfigKey& key, const std::string& value, const std::string& owner);
std::vector<int64_t> parse_config_ints(const ConfigKey& key, const std::string& value, const std::string& owner);
// Any type: throws when `value` is not one the key accepts.
void check_config_value(const ConfigKey& key, const std::string& value, const std::string& owner);

// One table: an encoder's keys, or the task model's.
class ConfigSchema {
 public:
  // Throws std::logic_error for a name given twice or a default the row
  // itself refuses: the table is code, so that is a programming error.
  ConfigSchema(std::string owner, std::vector<ConfigKey> keys);

  const std::string& owner() const { return owner_; }
  const std::vector<ConfigKey>& keys() const { return keys_; }
  const ConfigKey* find(const std::string& name) const;

  // Reads the key (so Config::check_all_used counts it as used), checked
  // against its row; absent, the row's default. A key without a default
  // that is absent throws attn::Error naming it.
  int64_t get_int(const Config& config, const std::string& name) const;
  double get_float(const Config& config, const std::string& name) const;
  bool get_bool(const Config& config, const std::string& name) const;
  std::string get_string(const Config& config, const std::string& name) const;  // Choice and Text
  std::vector<int64_t> get_ints(const Config& config, const std::string& name) const;
  // The same for a key whose default follows from other keys: `derived` is it.
  int64_t get_int(const Config& config, const std::string& name, int64_t derived) const;
  std::string get_string(const Config& config, const std::string& name, const std::string& derived) const;

  // The row's default as its type: what a config without the key gets (the
  // C++ options structs start from these too).
  int64_t default_int(const std::string& name) const { return get_int(Config(), name); }
  double default_float(const std::string& name) const { return get_float(Config(), name); }
  bool default_bool(const std::string& name) const { return get_bool(Config(), name); }
  std::string default_string(const std::string& name) const { return get_string(Config(), name); }

 private:
  const ConfigKey& row(const std::string& name, ConfigType type) const;
  // The text to parse: the config's value, or the row's default.
  std::string value_of(const Config& config, const ConfigKey& key) const;

  std::string owner_;
  std::vector<ConfigKey> keys_;
};

}  // namespace attn
