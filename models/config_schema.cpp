#include "attn/models/config_schema.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "attn/engine/error.h"
#include "attn/util/text.h"

namespace attn {

namespace {

// The shortest decimal text that reads back as exactly `v`, so a default
// shown in help and docs is the one the builder uses.
std::string shortest_text(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string bound_text(double v) {
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<int64_t>(v));
  return shortest_text(v);
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

[[noreturn]] void refuse(const ConfigKey& key, const std::string& value, const std::string& owner,
                         const std::string& expected) {
  throw Error("config: key '" + key.name + "' of " + owner + " " + expected + ", got " + text::quote(value));
}

bool in_range(const ConfigKey& key, double v) {
  return (key.min_exclusive ? v > key.min : v >= key.min) && v <= key.max;
}

// A whole number that fits int64: no saturation, no trailing text.
bool read_int(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

int64_t checked_int(const ConfigKey& key, const std::string& value, const std::string& owner,
                    const std::string& what) {
  int64_t v = 0;
  if (!read_int(value, &v)) refuse(key, value, owner, "expects " + what);
  if (!in_range(key, static_cast<double>(v))) refuse(key, value, owner, "must lie in " + key.allowed());
  return v;
}

std::string trimmed(const std::string& s) { return text::trim(s, " \t\r"); }

ConfigKey row(const std::string& name, ConfigType type, const std::string& doc) {
  ConfigKey k;
  k.name = name;
  k.type = type;
  k.doc = doc;
  return k;
}

}  // namespace

const char* config_type_name(ConfigType type) {
  switch (type) {
    case ConfigType::Int: return "int";
    case ConfigType::Float: return "float";
    case ConfigType::Bool: return "bool";
    case ConfigType::Choice: return "choice";
    case ConfigType::Text: return "text";
    case ConfigType::IntList: return "int list";
  }
  return "?";
}

std::string ConfigKey::flag_name() const {
  std::string f = name;
  for (char& c : f)
    if (c == '_') c = '-';
  return f;
}

std::string ConfigKey::allowed() const {
  switch (type) {
    case ConfigType::Int:
      return bound_text(min) + ".." + bound_text(max);
    case ConfigType::IntList:
      return "comma-separated integers in " + bound_text(min) + ".." + bound_text(max);
    case ConfigType::Float:
      return (min_exclusive ? "(" : "[") + bound_text(min) + ", " + bound_text(max) + "]";
    case ConfigType::Bool:
      return "true, false";
    case ConfigType::Choice:
      return joined(choices, ", ");
    case ConfigType::Text:
      return format;
  }
  return "";
}

std::string ConfigKey::shown_default() const { return has_default() ? default_value : default_doc; }

ConfigKey ConfigKey::as_flag() const {
  ConfigKey k = *this;
  k.flag = true;
  return k;
}

ConfigKey ConfigKey::derived_default(const std::string& how) const {
  ConfigKey k = *this;
  k.default_value.clear();
  k.default_doc = how;
  return k;
}

ConfigKey int_key(const std::string& name, int64_t default_value, int64_t min, int64_t max, const std::string& doc) {
  ConfigKey k = int_key_without_default(name, "", min, max, doc);
  k.default_value = std::to_string(default_value);
  return k;
}

ConfigKey int_key_without_default(const std::string& name, const std::string& default_doc, int64_t min, int64_t max,
                                  const std::string& doc) {
  ConfigKey k = row(name, ConfigType::Int, doc);
  k.default_doc = default_doc;
  k.min = static_cast<double>(min);
  k.max = static_cast<double>(max);
  return k;
}

ConfigKey int_list_key(const std::string& name, const std::string& default_doc, int64_t min, int64_t max,
                       const std::string& doc) {
  ConfigKey k = int_key_without_default(name, default_doc, min, max, doc);
  k.type = ConfigType::IntList;
  return k;
}

ConfigKey float_key_without_default(const std::string& name, const std::string& default_doc, double min, double max,
                                    bool min_exclusive, const std::string& doc) {
  ConfigKey k = row(name, ConfigType::Float, doc);
  k.default_doc = default_doc;
  k.min = min;
  k.max = max;
  k.min_exclusive = min_exclusive;
  return k;
}

ConfigKey float_key(const std::string& name, double default_value, double min, double max, const std::string& doc) {
  ConfigKey k = float_key_without_default(name, "", min, max, false, doc);
  k.default_value = shortest_text(default_value);
  return k;
}

ConfigKey float_key_above(const std::string& name, double default_value, double min, double max,
                          const std::string& doc) {
  ConfigKey k = float_key_without_default(name, "", min, max, true, doc);
  k.default_value = shortest_text(default_value);
  return k;
}

ConfigKey probability_key(const std::string& name, double default_value, const std::string& doc) {
  return float_key_above(name, default_value, 0.0, 1.0, doc);
}

ConfigKey bool_key(const std::string& name, bool default_value, const std::string& doc) {
  ConfigKey k = row(name, ConfigType::Bool, doc);
  k.default_value = default_value ? "true" : "false";
  return k;
}

ConfigKey choice_key(const std::string& name, const std::string& default_value, std::vector<std::string> choices,
                     const std::string& doc) {
  ConfigKey k = row(name, ConfigType::Choice, doc);
  k.default_value = default_value;
  k.choices = std::move(choices);
  return k;
}

ConfigKey text_key(const std::string& name, const std::string& default_value, const std::string& format,
                   void (*check)(const std::string&), const std::string& doc) {
  ConfigKey k = row(name, ConfigType::Text, doc);
  k.default_value = default_value;
  k.format = format;
  k.check = check;
  return k;
}

ConfigKey activation_key(const std::string& name, Activation default_value, const std::string& doc) {
  std::vector<std::string> names;
  for (Activation a : {Activation::Relu, Activation::Elu, Activation::Tanh, Activation::Sigmoid, Activation::None})
    names.push_back(activation_name(a));
  return choice_key(name, activation_name(default_value), names, doc);
}

int64_t parse_config_int(const ConfigKey& key, const std::string& value, const std::string& owner) {
  return checked_int(key, value, owner, "an integer");
}

double parse_config_float(const ConfigKey& key, const std::string& value, const std::string& owner) {
  if (value.empty()) refuse(key, value, owner, "expects a number");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) refuse(key, value, owner, "expects a finite number");
  if (!in_range(key, v)) refuse(key, value, owner, "must lie in " + key.allowed());
  return v;
}

bool parse_config_bool(const ConfigKey& key, const std::string& value, const std::string& owner) {
  if (value == "true" || value == "1" || value == "yes") return true;
  if (value == "false" || value == "0" || value == "no") return false;
  refuse(key, value, owner, "expects true or false");
}

std::vector<int64_t> parse_config_ints(const ConfigKey& key, const std::string& value, const std::string& owner) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    const size_t length = comma == std::string::npos ? std::string::npos : comma - start;
    const std::string item = trimmed(value.substr(start, length));
    int64_t v = 0;
    if (!read_int(item, &v)) refuse(key, value, owner, "expects integers separated by commas");
    if (!in_range(key, static_cast<double>(v)))
      refuse(key, value, owner, "must hold integers in " + bound_text(key.min) + ".." + bound_text(key.max));
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void check_config_value(const ConfigKey& key, const std::string& value, const std::string& owner) {
  switch (key.type) {
    case ConfigType::Int: parse_config_int(key, value, owner); return;
    case ConfigType::Float: parse_config_float(key, value, owner); return;
    case ConfigType::Bool: parse_config_bool(key, value, owner); return;
    case ConfigType::IntList: parse_config_ints(key, value, owner); return;
    case ConfigType::Choice:
      for (const std::string& c : key.choices)
        if (value == c) return;
      refuse(key, value, owner, "must be one of " + key.allowed());
    case ConfigType::Text:
      if (!key.check) return;
      try {
        key.check(value);
      } catch (const Error& e) {
        refuse(key, value, owner, std::string("expects ") + key.format + " (" + e.what() + ")");
      }
      return;
  }
}

ConfigSchema::ConfigSchema(std::string owner, std::vector<ConfigKey> keys)
    : owner_(std::move(owner)), keys_(std::move(keys)) {
  std::set<std::string> names;
  for (const ConfigKey& k : keys_) {
    if (!names.insert(k.name).second)
      throw std::logic_error("config table of " + owner_ + ": key '" + k.name + "' declared twice");
    if (k.has_default()) {
      try {
        check_config_value(k, k.default_value, owner_);
      } catch (const Error& e) {
        throw std::logic_error("config table of " + owner_ + ": the default of '" + k.name + "' is refused: " +
                               e.what());
      }
    }
  }
}

const ConfigKey* ConfigSchema::find(const std::string& name) const {
  for (const ConfigKey& k : keys_)
    if (k.name == name) return &k;
  return nullptr;
}

const ConfigKey& ConfigSchema::row(const std::string& name, ConfigType type) const {
  const ConfigKey* k = find(name);
  // Reading a key the table lacks, or as another type, is a mistake in the
  // builder, not in the user's config.
  if (!k) throw std::logic_error("config table of " + owner_ + " has no key '" + name + "'");
  if (k->type != type && !(type == ConfigType::Text && k->type == ConfigType::Choice))
    throw std::logic_error("config table of " + owner_ + ": key '" + name + "' is " + config_type_name(k->type) +
                           ", read as " + config_type_name(type));
  return *k;
}

std::string ConfigSchema::value_of(const Config& config, const ConfigKey& key) const {
  if (config.has(key.name)) return config.get(key.name, "");
  if (!key.has_default())
    throw Error("config: " + owner_ + " needs key '" + key.name + "' (" + key.default_doc + ")");
  config.get(key.name, "");  // counts as read, so check_all_used agrees
  return key.default_value;
}

int64_t ConfigSchema::get_int(const Config& config, const std::string& name) const {
  const ConfigKey& k = row(name, ConfigType::Int);
  return parse_config_int(k, value_of(config, k), owner_);
}

double ConfigSchema::get_float(const Config& config, const std::string& name) const {
  const ConfigKey& k = row(name, ConfigType::Float);
  return parse_config_float(k, value_of(config, k), owner_);
}

bool ConfigSchema::get_bool(const Config& config, const std::string& name) const {
  const ConfigKey& k = row(name, ConfigType::Bool);
  return parse_config_bool(k, value_of(config, k), owner_);
}

std::string ConfigSchema::get_string(const Config& config, const std::string& name) const {
  const ConfigKey& k = row(name, ConfigType::Text);
  const std::string v = value_of(config, k);
  check_config_value(k, v, owner_);
  return v;
}

std::vector<int64_t> ConfigSchema::get_ints(const Config& config, const std::string& name) const {
  const ConfigKey& k = row(name, ConfigType::IntList);
  return parse_config_ints(k, value_of(config, k), owner_);
}

namespace {
void require_derived(const ConfigKey& k, const std::string& owner) {
  if (k.has_default())
    throw std::logic_error("config table of " + owner + ": key '" + k.name +
                           "' has a default; it is read without one");
}
}  // namespace

int64_t ConfigSchema::get_int(const Config& config, const std::string& name, int64_t derived) const {
  const ConfigKey& k = row(name, ConfigType::Int);
  require_derived(k, owner_);
  if (!config.has(name)) {
    config.get(name, "");
    return derived;
  }
  return parse_config_int(k, config.get(name, ""), owner_);
}

std::string ConfigSchema::get_string(const Config& config, const std::string& name,
                                     const std::string& derived) const {
  const ConfigKey& k = row(name, ConfigType::Text);
  require_derived(k, owner_);
  if (!config.has(name)) {
    config.get(name, "");
    return derived;
  }
  const std::string v = config.get(name, "");
  check_config_value(k, v, owner_);
  return v;
}

}  // namespace attn
