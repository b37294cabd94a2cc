// Helpers shared by the dataset loaders (not part of the public API): the
// checks on label sets, and the text-file helpers of util/text.h under
// the names the loaders use.
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "attn/util/text.h"

namespace attn {
namespace loader_util {

using text::base_name;
using text::fail_at;
using text::is_regular_file;
using text::is_blank;
using text::join_path;
using text::kQuoteLimit;
using text::LineReader;
using text::quote;
using text::read_lines;
using text::split_tabs;
using text::split_whitespace;

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
