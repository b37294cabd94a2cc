#include "attn/util/cli_args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <utility>

#include "attn/util/text.h"

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

std::string ArgParser::closest_name(const std::string& name) const { return text::nearest_word(name, order_); }

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
    if (it == entries_.end()) {
      const std::string guess = closest_name(name);
      throw UsageError("attn " + command_ + ": unknown flag '--" + name + "'" +
                       (guess.empty() ? "" : " (did you mean '--" + guess + "'?)"));
    }
    if (it->second.is_flag) {
      if (inline_value) throw UsageError("attn " + command_ + ": flag '--" + name + "' takes no value");
      values_[name] = "1";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError("attn " + command_ + ": option '--" + name + "' needs a value");
      value = args[++i];
      // `--run --overwrite`: the next word is one of this command's flags,
      // not a value (a folder named --overwrite is never what was meant).
      if (value.rfind("--", 0) == 0) {
        const std::string next = value.substr(2, value.find('=') == std::string::npos ? std::string::npos
                                                                                        : value.find('=') - 2);
        if (entries_.count(next) || next == "help")
          throw UsageError("attn " + command_ + ": option '--" + name + "' needs a value, got the flag '" + value +
                           "'");
      }
    }
    // An empty value is refused rather than read as "not given": `--data ""`
    // would otherwise quietly train on the default data.
    if (value.empty()) throw UsageError("attn " + command_ + ": option '--" + name + "' needs a non-empty value");
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

std::string ArgParser::get_choice(const std::string& name, const std::vector<std::string>& choices) const {
  const std::string value = get(name);
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return value;
  throw UsageError("attn " + command_ + ": unknown --" + name + " " + text::unknown_word_hint(value, choices));
}

ArgParser& ArgParser::example(const std::string& command_line, const std::string& what) {
  examples_.emplace_back(command_line, what);
  return *this;
}

bool ArgParser::is_set(const std::string& name) const { return values_.count(name) > 0; }

std::pair<std::string, std::string> ArgParser::metavar_and_help(const Entry& e) {
  // "PATH: the run folder" names the value PATH; otherwise the default says
  // whether it is a whole number or a number.
  const size_t colon = e.help.find(": ");
  if (colon != std::string::npos && colon > 0 && colon <= 6 &&
      std::all_of(e.help.begin(), e.help.begin() + static_cast<std::ptrdiff_t>(colon),
                  [](char c) { return c >= 'A' && c <= 'Z'; }))
    return {e.help.substr(0, colon), e.help.substr(colon + 2)};
  const std::string& d = e.default_value;
  char* end = nullptr;
  if (!d.empty()) {
    std::strtoll(d.c_str(), &end, 10);
    if (*end == '\0') return {"INT", e.help};
    std::strtod(d.c_str(), &end);
    if (*end == '\0') return {"FLOAT", e.help};
  }
  return {"VALUE", e.help};
}

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "usage: attn " << command_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
  for (const std::string& name : order_) {
    const Entry& e = entries_.at(name);
    const auto [metavar, help] = metavar_and_help(e);
    std::string left = "  --" + name + (e.is_flag ? "" : " " + metavar);
    os << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << help;
    if (!e.is_flag && !e.default_value.empty()) os << " (default: " << e.default_value << ")";
    os << "\n";
  }
  os << "  --help                    show this help\n";
  if (!examples_.empty()) {
    os << "\nexamples:\n";
    for (const auto& [line, what] : examples_) os << "  " << line << "\n      " << what << "\n";
  }
  if (!epilog_.empty()) os << "\n" << epilog_;
  return os.str();
}

}  // namespace attn
