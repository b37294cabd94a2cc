#include "attn/util/error.h"

#include <cstring>

namespace attn {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace detail {
[[noreturn]] void throw_error(const char* op, const std::string& message, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  throw Error(std::string(op) + ": " + message, std::string(base ? base + 1 : file) + ":" + std::to_string(line));
}
}  // namespace detail

}  // namespace attn
