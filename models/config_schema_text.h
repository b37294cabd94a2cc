// The config tables as text: the key list of `attn train --help` and the
// rows docs/models.md holds (tests/test_config_schema.cpp compares them).
#pragma once
#include <string>
#include <vector>

#include "attn/models/config_schema.h"

namespace attn {

// One line per key, each starting with `indent`:
// "hidden  int 1..65536 (default 300): encoder width ..."
std::string config_keys_help(const ConfigSchema& table, const std::string& indent);

// A Markdown table's header and one row per key, each without its last cell
// (what the docs say of the key, in their own words):
// "| key | type | default | allowed |", "| `hidden` | int | 300 | 1..65536 |".
std::string config_keys_markdown_header();
std::vector<std::string> config_keys_markdown_rows(const ConfigSchema& table);

}  // namespace attn
