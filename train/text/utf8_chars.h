// Cutting UTF-8 text into code points, as Python's str sees it: BPE learns
// merges over characters (not bytes), and sacreBLEU splits on Python's
// whitespace, which includes non-ASCII spaces.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace text {

// The code points of `s`, each as its UTF-8 bytes. A byte that does not start
// a well-formed sequence is a unit of its own, so no byte is ever lost and
// joining the result gives `s` back.
std::vector<std::string> utf8_chars(const std::string& s);

// The length in bytes of the code point starting at s[i] (1 for a stray byte).
size_t utf8_char_length(const std::string& s, size_t i);

// Whether the code point at s[i] (utf8_char_length bytes) is whitespace by
// Python's str.isspace(): ASCII \t \n \v \f \r and space, U+001C..U+001F,
// U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_python_space_at(const std::string& s, size_t i);

// `s` split on runs of Python whitespace (Python's str.split() with no argument).
std::vector<std::string> split_python_whitespace(const std::string& s);

}  // namespace text
}  // namespace attn
