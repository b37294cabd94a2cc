#include "attn/train/data/formats/loader_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sys/stat.h>

#include "attn/engine/error.h"

namespace attn {
namespace loader_util {

const char* const kAllowSimilarLabelsHint =
    "fix the data, or pass --allow-similar-labels to keep every label as a class of its own";

namespace {

bool parse_integer(const std::string& s, long long& value) {
  if (s.empty()) return false;
  char* end = nullptr;
  value = std::strtoll(s.c_str(), &end, 10);
  return end == s.c_str() + s.size();
}

// A decimal number written with digits, sign, point and exponent only (so
// "inf" and "nan" stay words).
bool parse_decimal(const std::string& s, double& value) {
  if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(value);
}

// What two labels have in common when they differ only by whitespace or the
// way a number is written: " 1", "01", "1.0" and "+1" all give "#1".
std::string similarity_key(const std::string& label) {
  std::string bare;
  for (char c : label)
    if (!std::isspace(static_cast<unsigned char>(c))) bare += c;
  double v = 0;
  if (!parse_decimal(bare, v)) return bare;
  char buf[40];
  std::snprintf(buf, sizeof(buf), "#%.17g", v == 0 ? 0.0 : v);  // -0 is 0
  return buf;
}

bool is_header_word(std::string label) {
  static const std::set<std::string> kWords = {
      "label", "labels", "class", "classes", "category", "target", "y",     "gold",  "gold_label", "sentiment",
      "polarity", "rating", "score", "tag", "tags",  "ner",    "chunk", "text",  "sentence",   "token",
      "word",  "id"};
  for (char& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return kWords.count(label) > 0;
}

}  // namespace

std::vector<std::string> sorted_labels(const std::vector<std::string>& names) {
  std::set<std::string> unique(names.begin(), names.end());
  std::vector<std::string> out(unique.begin(), unique.end());
  bool numeric = true;
  long long v;
  for (const std::string& s : out) numeric = numeric && parse_integer(s, v);
  if (numeric) {
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      long long x = 0, y = 0;
      parse_integer(a, x);
      parse_integer(b, y);
      return x != y ? x < y : a < b;  // "01" beside "1" (allowed by a flag): byte order
    });
  }
  return out;
}

std::map<std::string, int64_t> label_index(const std::vector<std::string>& names) {
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < names.size(); ++i) index.emplace(names[i], static_cast<int64_t>(i));
  return index;
}

void LabelTally::add(const std::string& label, const std::string& file, size_t line, bool first_record) {
  auto [it, fresh] = seen_.try_emplace(label);
  if (fresh) it->second = Seen{file, line, seen_.size(), 0, first_record};
  ++it->second.count;
}

void LabelTally::check(const std::string& loader, bool allow_similar) const {
  if (allow_similar) return;
  // Near-duplicates, grouped by what they have in common; of all such pairs
  // the one completed earliest in the data is reported.
  using Entry = const std::pair<const std::string, Seen>*;
  std::map<std::string, std::vector<Entry>> groups;
  for (const auto& entry : seen_) groups[similarity_key(entry.first)].push_back(&entry);
  Entry first = nullptr, second = nullptr;
  for (auto& [key, group] : groups) {
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end(), [](Entry a, Entry b) { return a->second.order < b->second.order; });
    if (!second || group[1]->second.order < second->second.order) first = group[0], second = group[1];
  }
  auto where = [](Entry e) { return e->second.file + ":" + std::to_string(e->second.line); };
  if (second)
    fail_at(loader, second->second.file, second->second.line,
            "label " + quote(second->first) + " (" + where(second) + ") and label " + quote(first->first) + " (" +
                where(first) + ") differ only by whitespace or the way a number is written, so they would be two " +
                "classes; " + kAllowSimilarLabelsHint);

  // Header rows: seen once, on a file's first line, and named like a column.
  // (The rule "a non-number among numbers" needs a few numbers to go by.)
  size_t others = 0;
  bool all_numbers = true;
  double v = 0;
  for (const auto& [label, s] : seen_) {
    if (s.count == 1 && s.first_record) continue;
    ++others;
    all_numbers = all_numbers && parse_decimal(label, v);
  }
  all_numbers = all_numbers && others >= 2;
  for (const auto& [label, s] : seen_) {
    if (s.count != 1 || !s.first_record || seen_.size() < 2) continue;
    bool word = is_header_word(label);
    if (word || (all_numbers && !parse_decimal(label, v)))
      fail_at(loader, s.file, s.line,
              "this looks like a header row: label " + quote(label) + " appears nowhere else and " +
                  (word ? "is a usual column name" : "is not a number like every other label") +
                  ", but the format has no header; remove the line, or pass --allow-similar-labels to keep it as a "
                  "class");
  }
}

std::vector<std::string> LabelTally::names() const {
  std::vector<std::string> all;
  for (const auto& entry : seen_) all.push_back(entry.first);
  return sorted_labels(all);
}

}  // namespace loader_util
}  // namespace attn
