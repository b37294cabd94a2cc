// Helpers shared by the dataset loaders (not part of the public API): file
// reading with line numbers, and errors that name the file and line.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {
namespace loader_util {

// Throws attn::Error "<loader>: <file>:<line>: <what>".
[[noreturn]] void fail_at(const std::string& loader, const std::string& file, size_t line, const std::string& what);

// All lines of a text file, without trailing '\r'. Throws "<loader>: cannot
// open <file>" when it cannot be read.
std::vector<std::string> read_lines(const std::string& loader, const std::string& file);

bool file_exists(const std::string& path);
std::string join_path(const std::string& dir, const std::string& name);
// Last component of a path, ignoring trailing slashes ("data/trec/" -> "trec").
std::string base_name(const std::string& path);

// Splits on every tab (no quoting).
std::vector<std::string> split_tabs(const std::string& line);
// Splits on runs of spaces and tabs.
std::vector<std::string> split_whitespace(const std::string& line);
bool is_blank(const std::string& line);

// Sorted label names: numeric order when all are integers, else byte order.
std::vector<std::string> sorted_labels(const std::vector<std::string>& names);
std::map<std::string, int64_t> label_index(const std::vector<std::string>& names);

}  // namespace loader_util
}  // namespace attn
