#include "attn/train/data/srl_input.h"

#include <cstdlib>

#include "attn/engine/error.h"
#include "attn/train/data/tokenizer.h"
#include "attn/util/text.h"

namespace attn {

Example srl_input(const std::string& line, const std::string& where) {
  const size_t tab = line.rfind('\t');
  ATTN_CHECK(tab != std::string::npos, "srl input", where,
             ": an srl input is the words, a tab and the predicate's word number");
  Example e;
  for (const std::string& w : text::split_whitespace(line.substr(0, tab))) e.tokens.push_back(lowercase_token(w));
  const std::string k = line.substr(tab + 1);
  char* end = nullptr;
  const long long at = std::strtoll(k.c_str(), &end, 10);
  ATTN_CHECK(!k.empty() && end && *end == '\0' && at >= 1 && at <= static_cast<long long>(e.tokens.size()),
             "srl input", where, ": the predicate's word number must be an integer in [1, ", e.tokens.size(),
             "], got '", k, "'");
  e.predicate = at - 1;
  return e;
}

}  // namespace attn
