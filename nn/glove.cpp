#include "attn/nn/glove.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attn/engine/error.h"
#include "attn/util/text.h"

namespace attn {

namespace {

using text::quote;

// Parses one value. Read as a double and then rounded to float, so a
// subnormal float such as 1e-40 is kept (strtof flags it with ERANGE) and
// anything smaller rounds to zero; strtod's own ERANGE only matters when the
// value overflows, and that is caught as non-finite or out of range below.
bool parse_value(const char* p, const char*& end, double& value) {
  char* e = nullptr;
  value = std::strtod(p, &e);
  end = e;
  return e != p && (*e == ' ' || *e == '\0');
}

std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

GloveVectors load_glove(const std::string& path, const std::unordered_set<std::string>* wanted) {
  text::LineReader reader("load_glove", path);  // CR, LF and CRLF line ends; BOM dropped
  GloveVectors out;
  int64_t header_dim = 0;  // from a word2vec "COUNT DIM" first line, if any
  std::string line;
  while (reader.next(line)) {
    const size_t line_no = reader.line_number();
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
      const char* end = nullptr;
      double v = 0;
      ATTN_CHECK(parse_value(p, end, v), "load_glove", path, ":", line_no, ": field ", values.size() + 1, " of ",
                 quote(word), " is not a number");
      ATTN_CHECK(std::isfinite(v), "load_glove", path, ":", line_no, ": field ", values.size() + 1, " of ",
                 quote(word), " is ", quote(std::string(p, end)), ": embedding values must be finite");
      ATTN_CHECK(std::fabs(v) <= kGloveMaxMagnitude, "load_glove", path, ":", line_no, ": field ", values.size() + 1,
                 " of ", quote(word), " is ", format_value(v), ", beyond +-", format_value(kGloveMaxMagnitude),
                 ": values this large overflow float32 in the model's products and make the loss NaN");
      values.push_back(static_cast<float>(v));
      p = end;
    }
    // word2vec's text format starts with "COUNT DIM": taken as a header, not
    // as a one-value vector of the word "COUNT".
    const bool digits_only = word.find_first_not_of("0123456789") == std::string::npos;
    if (out.dim == 0 && header_dim == 0 && digits_only && values.size() == 1 && values[0] >= 1 &&
        values[0] == std::floor(values[0])) {
      header_dim = static_cast<int64_t>(values[0]);
      continue;
    }
    if (out.dim == 0) out.dim = static_cast<int64_t>(values.size());
    ATTN_CHECK(header_dim == 0 || out.dim == header_dim, "load_glove", path, ":", line_no, ": the word2vec header says ",
               header_dim, " values per vector, but ", quote(word), " has ", values.size());
    ATTN_CHECK(static_cast<int64_t>(values.size()) == out.dim && out.dim > 0, "load_glove", path, ":", line_no,
               ": vector of ", quote(word), " has ", values.size(), " values, expected ", out.dim);
    if (!wanted || wanted->count(word)) out.vectors.emplace(std::move(word), std::move(values));
  }
  ATTN_CHECK(out.dim > 0, "load_glove", "'", path, "' holds no vectors");
  return out;
}

}  // namespace attn
