// Helpers shared by the dataset loaders (not part of the public API): file
// reading with line numbers, errors that name the file and line, quoting of
// user data in those errors, and the checks on label sets.
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace attn {
namespace loader_util {

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
  // The next line without its line end; false at the end of the file.
  bool next(std::string& line);
  // 1-based number of the line next() returned last.
  size_t line_number() const { return line_no_; }

 private:
  std::string loader_, file_;
  std::ifstream in_;
  std::string chunk_;  // text up to the next '\n', may hold several '\r'-ended lines
  size_t pos_ = 0;     // start of the next line in chunk_
  bool in_chunk_ = false;
  size_t line_no_ = 0;
};

// All lines of a text file, read with LineReader.
std::vector<std::string> read_lines(const std::string& loader, const std::string& file);

bool file_exists(const std::string& path);
std::string join_path(const std::string& dir, const std::string& name);
// Last component of a path, ignoring trailing slashes ("data/trec/" -> "trec").
std::string base_name(const std::string& path);

// Splits on every tab (no quoting).
std::vector<std::string> split_tabs(const std::string& line);
// Splits on runs of spaces and tabs.
std::vector<std::string> split_whitespace(const std::string& line);
bool is_blank(const std::string& line);

// Sorted label names: numeric order when all are integers, else byte order.
std::vector<std::string> sorted_labels(const std::vector<std::string>& names);
std::map<std::string, int64_t> label_index(const std::vector<std::string>& names);

// Every label of a data set with where it was first seen, to catch phantom
// classes before they are trained on.
class LabelTally {
 public:
  // `first_record`: the line is the first non-blank one of its file.
  void add(const std::string& label, const std::string& file, size_t line, bool first_record);
  // Throws "<loader>: FILE:LINE: ..." unless allow_similar, when
  // - two labels are the same up to whitespace or the way a number is written
  //   ("1", " 1", "01", "1.0"): almost always one class typed two ways;
  // - a label seen only once, on the first line of a file, looks like a
  //   column name: a usual header word ("label", "class", "tag", ...), or a
  //   non-number among labels that are all numbers. The formats have no header.
  void check(const std::string& loader, bool allow_similar) const;
  // The distinct labels, in sorted_labels order.
  std::vector<std::string> names() const;

 private:
  struct Seen {
    std::string file;
    size_t line = 0;
    size_t order = 0;  // when it was first seen, across files
    size_t count = 0;
    bool first_record = false;
  };
  std::map<std::string, Seen> seen_;
};

// The hint every label error ends with.
extern const char* const kAllowSimilarLabelsHint;

}  // namespace loader_util
}  // namespace attn
