#include "nn/glove.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "engine/error.h"

namespace attn {

GloveVectors load_glove(const std::string& path, const std::unordered_set<std::string>* wanted) {
  std::ifstream in(path);
  ATTN_CHECK(in.good(), "load_glove", "cannot open '", path, "'");
  GloveVectors out;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    size_t space = line.find(' ');
    ATTN_CHECK(space != std::string::npos && space > 0, "load_glove", path, ":", line_no,
               ": expected a word followed by numbers");
    std::string word = line.substr(0, space);
    std::vector<float> values;
    const char* p = line.c_str() + space;
    while (*p) {
      while (*p == ' ') ++p;
      if (!*p) break;
      char* end = nullptr;
      errno = 0;
      float v = std::strtof(p, &end);
      ATTN_CHECK(end != p && (*end == ' ' || *end == '\0') && errno == 0, "load_glove", path, ":", line_no,
                 ": field ", values.size() + 1, " of '", word, "' is not a number");
      values.push_back(v);
      p = end;
    }
    if (out.dim == 0) out.dim = static_cast<int64_t>(values.size());
    ATTN_CHECK(static_cast<int64_t>(values.size()) == out.dim && out.dim > 0, "load_glove", path, ":", line_no,
               ": vector of '", word, "' has ", values.size(), " values, expected ", out.dim);
    if (!wanted || wanted->count(word)) out.vectors.emplace(std::move(word), std::move(values));
  }
  ATTN_CHECK(out.dim > 0, "load_glove", "'", path, "' holds no vectors");
  return out;
}

}  // namespace attn
