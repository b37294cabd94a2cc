// Errors are exceptions that name the op, the shapes involved and the source
// location of the failed check. The library never aborts on user error.
// (engine/error.h adds the error of a missing device kernel.)
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message), user_message_(message) {}
  // what() ends with " (file.cpp:line)" for developers and tests; the attn
  // program shows users the message without it (ATTN_DEBUG=1 shows it).
  Error(const std::string& message, const std::string& location)
      : std::runtime_error(message + " (" + location + ")"), user_message_(message) {}
  const std::string& user_message() const { return user_message_; }

 private:
  std::string user_message_;
};

std::string shape_str(const std::vector<int64_t>& shape);

namespace detail {
inline void append(std::ostringstream&) {}
template <class T, class... Rest>
void append(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append(os, rest...);
}
[[noreturn]] void throw_error(const char* op, const std::string& message, const char* file, int line);
}  // namespace detail

}  // namespace attn

// ATTN_CHECK(cond, "op", "message parts", ...): throws attn::Error
// "op: message (file:line)" when cond is false.
#define ATTN_CHECK(cond, op, ...)                                               \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::ostringstream attn_msg_;                                             \
      ::attn::detail::append(attn_msg_, __VA_ARGS__);                           \
      ::attn::detail::throw_error((op), attn_msg_.str(), __FILE__, __LINE__);   \
    }                                                                           \
  } while (0)
