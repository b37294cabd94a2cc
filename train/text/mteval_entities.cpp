#include "attn/train/text/mteval_entities.h"

#include "attn/util/text.h"

namespace attn {

std::string unescape_mteval_entities(const std::string& line) {
  if (line.find('&') == std::string::npos) return line;
  std::string out = text::replace_all(line, "&quot;", "\"");
  out = text::replace_all(out, "&amp;", "&");
  out = text::replace_all(out, "&lt;", "<");
  return text::replace_all(out, "&gt;", ">");
}

}  // namespace attn
