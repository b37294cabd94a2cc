#include "attn/models/config.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/util/text.h"

namespace attn {

namespace {
// Lines may end in \r (files saved on Windows).
std::string trim(const std::string& s) { return text::trim(s, " \t\r"); }
}  // namespace

Config Config::parse(const std::string& text, const std::string& source) {
  Config c;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    ATTN_CHECK(eq != std::string::npos, "config", source, ":", line_no, ": expected 'key = value', got '", line, "'");
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    ATTN_CHECK(!key.empty(), "config", source, ":", line_no, ": empty key");
    ATTN_CHECK(!c.has(key), "config", source, ":", line_no, ": key '", key, "' set twice");
    c.set(key, value);
  }
  return c;
}

Config Config::load(const std::string& path) {
  // An ifstream opens a folder and reads nothing from it: that would be a
  // config of defaults, not the file the user meant.
  struct stat st;
  ATTN_CHECK(::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode), "config", "'", path,
             "' is a folder; give a file");
  std::ifstream in(path);
  ATTN_CHECK(in.good(), "config", "cannot open '", path, "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

void Config::set(const std::string& key, const std::string& value) { values_[key] = value; }
bool Config::has(const std::string& key) const { return values_.count(key) > 0; }

std::string Config::get(const std::string& key, const std::string& fallback) const {
  used_.insert(key);
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

int64_t Config::get_int(const std::string& key, int64_t fallback) const {
  used_.insert(key);
  if (!has(key)) return fallback;
  std::string s = get(key, "");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  // Out of int64 is an error, never the saturated value strtoll returns.
  ATTN_CHECK(!s.empty() && *end == '\0' && errno != ERANGE, "config", "key '", key, "' expects an integer, got '", s,
             "'");
  return v;
}

double Config::get_double(const std::string& key, double fallback) const {
  used_.insert(key);
  if (!has(key)) return fallback;
  std::string s = get(key, "");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  ATTN_CHECK(!s.empty() && *end == '\0', "config", "key '", key, "' expects a number, got '", s, "'");
  return v;
}

bool Config::get_bool(const std::string& key, bool fallback) const {
  used_.insert(key);
  if (!has(key)) return fallback;
  std::string s = get(key, "");
  if (s == "true" || s == "1" || s == "yes") return true;
  if (s == "false" || s == "0" || s == "no") return false;
  ATTN_CHECK(false, "config", "key '", key, "' expects true or false, got '", s, "'");
  return fallback;
}

std::vector<int64_t> Config::get_ints(const std::string& key, const std::vector<int64_t>& fallback) const {
  used_.insert(key);
  if (!has(key)) return fallback;
  std::string s = get(key, "");
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    ATTN_CHECK(!item.empty() && *end == '\0' && errno != ERANGE, "config", "key '", key,
               "' expects integers separated by commas, got '", s, "'");
    out.push_back(v);
  }
  return out;
}

void Config::check_all_used(const std::string& what) const {
  std::string unknown;
  for (const auto& [k, v] : values_)
    if (!used_.count(k)) unknown += (unknown.empty() ? "" : ", ") + k;
  ATTN_CHECK(unknown.empty(), "config", what, " does not know the key(s): ", unknown);
}

std::string Config::to_text() const {
  std::string out;
  for (const auto& [k, v] : values_) out += k + " = " + v + "\n";
  return out;
}

}  // namespace attn
