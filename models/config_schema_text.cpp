#include "attn/models/config_schema_text.h"

#include <algorithm>

namespace attn {

std::string config_keys_help(const ConfigSchema& table, const std::string& indent) {
  size_t width = 0;
  for (const ConfigKey& k : table.keys()) width = std::max(width, k.name.size());
  std::string out;
  for (const ConfigKey& k : table.keys()) {
    out += indent + k.name + std::string(width - k.name.size() + 2, ' ') + config_type_name(k.type) + " " +
           k.allowed() + " (default " + k.shown_default() + "): " + k.doc + "\n";
  }
  return out;
}

std::string config_keys_markdown_header() { return "| key | type | default | allowed |"; }

std::vector<std::string> config_keys_markdown_rows(const ConfigSchema& table) {
  std::vector<std::string> rows;
  for (const ConfigKey& k : table.keys())
    rows.push_back("| `" + k.name + "` | " + config_type_name(k.type) + " | " + k.shown_default() + " | " +
                   k.allowed() + " |");
  return rows;
}

}  // namespace attn
