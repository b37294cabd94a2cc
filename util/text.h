// Text helpers every layer may use: reading text files line by line with
// any line end, quoting user data in error messages, splitting, paths.
#pragma once
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace attn {
namespace text {

// Throws attn::Error "<loader>: <file>:<line>: <what>".
[[noreturn]] void fail_at(const std::string& loader, const std::string& file, size_t line, const std::string& what);

// How every error quotes a piece of user data: in single quotes, control
// bytes escaped (\t, \r, \xNN) so " 1" and "1\t" stay visible, and cut after
// kQuoteLimit bytes (at a UTF-8 boundary) with the full size, so a 10 MB
// column never ends up inside a message: 'xxxx...' (10485760 bytes).
constexpr size_t kQuoteLimit = 40;
std::string quote(const std::string& text);

// Reads a text file one line at a time. "\n", "\r\n" and a lone "\r" all end
// a line (Python's universal newlines: files saved with classic Mac line ends
// read as they look), and a UTF-8 byte-order mark at the start of the file is
// dropped so it cannot stick to the first label or word. Streams, so it suits
// multi-gigabyte files (GloVe).
class LineReader {
 public:
  // Throws "<loader>: cannot open <file>".
  LineReader(const std::string& loader, const std::string& file);
  // Reads an open stream (a string's text, stdin); `name` is what errors call it.
  LineReader(const std::string& loader, const std::string& name, std::unique_ptr<std::istream> in);
  // The next line without its line end; false at the end of the file.
  bool next(std::string& line);
  // 1-based number of the line next() returned last.
  size_t line_number() const { return line_no_; }

 private:
  std::string loader_, file_;
  std::unique_ptr<std::istream> in_;
  std::string chunk_;  // text up to the next '\n', may hold several '\r'-ended lines
  size_t pos_ = 0;     // start of the next line in chunk_
  bool in_chunk_ = false;
  size_t line_no_ = 0;
};

// All lines of a text file, read with LineReader.
std::vector<std::string> read_lines(const std::string& loader, const std::string& file);
// `text` cut into lines by LineReader, as read_lines cuts a file.
std::vector<std::string> split_lines(const std::string& text);
// The candidate nearest to `word` by edit distance, for "did you mean": ""
// when none is within a few typos (at most max(2, |word| / 3) edits).
std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates);
// How an error names a word that is none of `known`: "'word' (did you mean
// 'nearest'?); known: a, b, c" (without the guess when none is near).
std::string unknown_word_hint(const std::string& word, const std::vector<std::string>& known);

// A regular file (or a link to one) is at `path`: not a folder, device or pipe.
bool is_regular_file(const std::string& path);
std::string join_path(const std::string& dir, const std::string& name);
// Last component of a path, ignoring trailing slashes ("data/trec/" -> "trec").
std::string base_name(const std::string& path);

// Splits on every tab (no quoting).
std::vector<std::string> split_tabs(const std::string& line);
// Splits on runs of spaces and tabs.
std::vector<std::string> split_whitespace(const std::string& line);
bool is_blank(const std::string& line);

// s without leading and trailing characters of `whitespace`.
std::string trim(const std::string& s, const char* whitespace = " \t");
// s with every occurrence of `from` (non-empty) replaced by `to`, left to
// right, without rescanning what was put in (Python's str.replace).
std::string replace_all(const std::string& s, const std::string& from, const std::string& to);

// Appends the UTF-8 encoding of a Unicode code point (nothing beyond U+10FFFF).
void append_utf8(std::string& out, uint32_t code_point);

}  // namespace text
}  // namespace attn
