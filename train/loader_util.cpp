#include "train/loader_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sys/stat.h>

#include "engine/error.h"

namespace attn {
namespace loader_util {

const char* const kAllowSimilarLabelsHint =
    "fix the data, or pass --allow-similar-labels to keep every label as a class of its own";

void fail_at(const std::string& loader, const std::string& file, size_t line, const std::string& what) {
  throw Error(loader + ": " + file + ":" + std::to_string(line) + ": " + what);
}

std::string quote(const std::string& text) {
  size_t cut = std::min(text.size(), kQuoteLimit);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out = "'";
  for (size_t i = 0; i < cut; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut == text.size()) return out + "'";
  return out + "...' (" + std::to_string(text.size()) + " bytes)";
}

LineReader::LineReader(const std::string& loader, const std::string& file)
    : loader_(loader), file_(file), in_(file, std::ios::binary) {
  if (!in_) throw Error(loader + ": cannot open " + file);
}

bool LineReader::next(std::string& line) {
  if (!in_chunk_) {
    if (!std::getline(in_, chunk_)) {
      if (in_.bad()) throw Error(loader_ + ": read error in " + file_);
      return false;
    }
    pos_ = 0;
    in_chunk_ = true;
  }
  size_t cr = chunk_.find('\r', pos_);
  if (cr == std::string::npos) {
    line.assign(chunk_, pos_, std::string::npos);
    in_chunk_ = false;
  } else {
    line.assign(chunk_, pos_, cr - pos_);
    pos_ = cr + 1;
    in_chunk_ = pos_ < chunk_.size();  // a CR at the end of the chunk was a CRLF (or the file's last byte)
  }
  if (++line_no_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  return true;
}

std::vector<std::string> read_lines(const std::string& loader, const std::string& file) {
  LineReader reader(loader, file);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string base_name(const std::string& path) {
  size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path;
  size_t slash = path.rfind('/', end);
  return path.substr(slash == std::string::npos ? 0 : slash + 1, end - (slash == std::string::npos ? 0 : slash + 1) + 1);
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    if (tab == std::string::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

std::vector<std::string> split_whitespace(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string::npos;
}

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
