// Writes a whole file atomically: to a temporary name beside it, flushed and
// fsync'ed, then renamed over the target. A reader (or a resumed run after a
// crash or SIGKILL) sees either the old file or the new one, never a torn one.
#pragma once
#include <string>

namespace attn {

void write_file_atomically(const std::string& path, const std::string& contents);
// Appends one line (a '\n' is added) and flushes; used for the metrics log.
void append_line(const std::string& path, const std::string& line);
bool file_exists(const std::string& path);
// Creates a directory and its parents; throws naming the path on failure.
void make_directories(const std::string& path);

}  // namespace attn
