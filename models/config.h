// Model configuration: a small text format of `key = value` lines ('#' starts
// a comment), overridable from the command line. Unknown keys are an error at
// the point a model finishes reading its config, so a typo never goes unnoticed.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace attn {

class Config {
 public:
  Config() = default;
  // Parses text; a malformed line throws naming `source` and the line number.
  static Config parse(const std::string& text, const std::string& source = "<config>");
  static Config load(const std::string& path);

  void set(const std::string& key, const std::string& value);
  bool has(const std::string& key) const;

  // Typed reads with defaults; a value of the wrong type throws naming the key.
  // A model's builders read through their key table instead
  // (models/config_schema.h), which holds each default and range once.
  std::string get(const std::string& key, const std::string& fallback) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::vector<int64_t> get_ints(const std::string& key, const std::vector<int64_t>& fallback) const;

  // Throws naming every key that was set but never read.
  void check_all_used(const std::string& what) const;
  std::string to_text() const;  // every entry, sorted, as `key = value` lines
  const std::map<std::string, std::string>& entries() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
  mutable std::set<std::string> used_;
};

}  // namespace attn
