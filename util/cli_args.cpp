#include "attn/util/cli_args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace attn {

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

ArgParser& ArgParser::option(const std::string& name, const std::string& default_value, const std::string& help) {
  order_.push_back(name);
  entries_[name] = {default_value, help, false};
  return *this;
}

ArgParser& ArgParser::flag(const std::string& name, const std::string& help) {
  order_.push_back(name);
  entries_[name] = {"", help, true};
  return *this;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--help" || a == "-h") return false;
    if (a.rfind("--", 0) != 0) throw UsageError("attn " + command_ + ": unexpected argument '" + a + "'");
    std::string name = a.substr(2), value;
    bool inline_value = false;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    auto it = entries_.find(name);
    if (it == entries_.end()) throw UsageError("attn " + command_ + ": unknown flag '--" + name + "'");
    if (it->second.is_flag) {
      if (inline_value) throw UsageError("attn " + command_ + ": flag '--" + name + "' takes no value");
      values_[name] = "1";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError("attn " + command_ + ": option '--" + name + "' needs a value");
      value = args[++i];
    }
    values_[name] = value;
  }
  return true;
}

void ArgParser::set_default(const std::string& name, const std::string& value) {
  auto e = entries_.find(name);
  if (e == entries_.end()) throw std::logic_error("ArgParser: option '" + name + "' was never declared");
  if (e->second.is_flag && value != "0" && value != "1")
    throw std::logic_error("ArgParser: flag '" + name + "' takes 0 or 1, got '" + value + "'");
  if (e->second.is_flag) {
    if (value == "1" && !values_.count(name)) values_[name] = "1";
    return;
  }
  e->second.default_value = value;
}

std::string ArgParser::get(const std::string& name) const {
  auto v = values_.find(name);
  if (v != values_.end()) return v->second;
  auto e = entries_.find(name);
  if (e == entries_.end()) throw std::logic_error("ArgParser: option '" + name + "' was never declared");
  return e->second.default_value;
}

int64_t ArgParser::get_int(const std::string& name) const {
  std::string s = get(name);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0])))
    throw UsageError("attn " + command_ + ": option '--" + name + "' expects an integer, got '" + s + "'");
  if (errno == ERANGE)
    throw UsageError("attn " + command_ + ": option '--" + name + "' = " + s + " is out of range (at most " +
                     std::to_string(INT64_MAX) + ")");
  return v;
}

int64_t ArgParser::get_int(const std::string& name, int64_t min, int64_t max) const {
  const int64_t v = get_int(name);
  if (v < min || v > max)
    throw UsageError("attn " + command_ + ": option '--" + name + "' must be " +
                     (max == INT64_MAX ? "at least " + std::to_string(min)
                                       : "between " + std::to_string(min) + " and " + std::to_string(max)) +
                     ", got " + get(name));
  return v;
}

uint64_t ArgParser::get_uint64(const std::string& name) const {
  std::string s = get(name);
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(s[0])))
    throw UsageError("attn " + command_ + ": option '--" + name + "' expects a non-negative integer, got '" + s + "'");
  if (errno == ERANGE)
    throw UsageError("attn " + command_ + ": option '--" + name + "' = " + s + " does not fit in 64 bits (at most " +
                     std::to_string(UINT64_MAX) + ")");
  return v;
}

double ArgParser::get_double(const std::string& name) const {
  std::string s = get(name);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0])))
    throw UsageError("attn " + command_ + ": option '--" + name + "' expects a number, got '" + s + "'");
  if (!std::isfinite(v))
    throw UsageError("attn " + command_ + ": option '--" + name + "' must be a finite number, got '" + s + "'");
  return v;
}

double ArgParser::get_double(const std::string& name, double min, double max) const {
  const double v = get_double(name);
  if (v < min || v > max) {
    std::ostringstream range;
    if (max == std::numeric_limits<double>::max()) range << "at least " << min;
    else range << "between " << min << " and " << max;
    throw UsageError("attn " + command_ + ": option '--" + name + "' must be " + range.str() + ", got " + get(name));
  }
  return v;
}

ArgParser& ArgParser::epilog(const std::string& text) {
  epilog_ = text;
  return *this;
}

bool ArgParser::is_set(const std::string& name) const { return values_.count(name) > 0; }

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "usage: attn " << command_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
  for (const std::string& name : order_) {
    const Entry& e = entries_.at(name);
    std::string left = "  --" + name + (e.is_flag ? "" : " VALUE");
    os << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << e.help;
    if (!e.is_flag && !e.default_value.empty()) os << " (default: " << e.default_value << ")";
    os << "\n";
  }
  os << "  --help                    show this help\n";
  if (!epilog_.empty()) os << "\n" << epilog_;
  return os.str();
}

}  // namespace attn
