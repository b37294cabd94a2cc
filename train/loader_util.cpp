#include "train/loader_util.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sys/stat.h>

#include "engine/error.h"

namespace attn {
namespace loader_util {

void fail_at(const std::string& loader, const std::string& file, size_t line, const std::string& what) {
  throw Error(loader + ": " + file + ":" + std::to_string(line) + ": " + what);
}

std::vector<std::string> read_lines(const std::string& loader, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(loader + ": cannot open " + file);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  if (in.bad()) throw Error(loader + ": read error in " + file);
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
      return x < y;
    });
  }
  return out;
}

std::map<std::string, int64_t> label_index(const std::vector<std::string>& names) {
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < names.size(); ++i) index.emplace(names[i], static_cast<int64_t>(i));
  return index;
}

}  // namespace loader_util
}  // namespace attn
