// A small command-line parser shared by every `attn` subcommand: named
// options with defaults, boolean flags, generated --help, and a clear error
// for an unknown flag or a malformed value.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// Bad command-line usage; the program prints it with a hint and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  // --name VALUE (or --name=VALUE), with a default shown in --help.
  ArgParser& option(const std::string& name, const std::string& default_value, const std::string& help);
  // --name, false unless given.
  ArgParser& flag(const std::string& name, const std::string& help);
  // Text --help prints after the options.
  ArgParser& epilog(const std::string& text);
  // A command line --help shows under "examples:", with what it does.
  ArgParser& example(const std::string& command_line, const std::string& what);

  // Throws UsageError on an unknown flag (naming the closest known one), a
  // missing or empty value, or a value that is one of the command's flags
  // (`--run --overwrite`). Returns false when --help was asked for (help()
  // holds the text).
  bool parse(const std::vector<std::string>& args);

  std::string get(const std::string& name) const;
  // A whole number; one outside int64 is an error, never a saturation.
  int64_t get_int(const std::string& name) const;
  // ... and within [min, max].
  int64_t get_int(const std::string& name, int64_t min, int64_t max = INT64_MAX) const;
  // An unsigned 64-bit integer (a seed): no sign, nothing beyond 2^64 - 1.
  uint64_t get_uint64(const std::string& name) const;
  // A finite number (nan and inf are errors).
  double get_double(const std::string& name) const;
  // ... and within [min, max].
  double get_double(const std::string& name, double min, double max = std::numeric_limits<double>::max()) const;
  // The value, which must be one of `choices` (a UsageError naming them and
  // the nearest one otherwise).
  std::string get_choice(const std::string& name, const std::vector<std::string>& choices) const;
  bool is_set(const std::string& name) const;  // flag given, or option given explicitly
  // Replaces an option's default (a preset's value) without marking it set:
  // a value given on the command line still wins. Unknown names throw.
  void set_default(const std::string& name, const std::string& value);
  bool has_option(const std::string& name) const { return entries_.count(name) > 0; }
  std::string help() const;
  const std::string& command() const { return command_; }

 private:
  struct Entry {
    std::string default_value;
    std::string help;
    bool is_flag = false;
  };
  // The value's name in --help (PATH, INT, FLOAT or VALUE) and the help text:
  // a help text may start with its own name ("PATH: ..."); otherwise the
  // default's form decides.
  static std::pair<std::string, std::string> metavar_and_help(const Entry& e);
  // The declared name nearest to `name` by edit distance, or "" if none is near.
  std::string closest_name(const std::string& name) const;
  std::string command_, summary_, epilog_;
  std::vector<std::pair<std::string, std::string>> examples_;  // command line, what it does
  std::vector<std::string> order_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> values_;
};

}  // namespace attn
