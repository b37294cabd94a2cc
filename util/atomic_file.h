// Writes a whole file atomically: to a temporary name beside it, flushed and
// fsync'ed, then renamed over the target. A reader (or a resumed run after a
// crash or SIGKILL) sees either the old file or the new one, never a torn one.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Throws naming `what` unless `path` can be written as an output: not empty,
// not an existing folder, device or pipe, and not the same file as any of
// `inputs` (compared by device and inode, so another spelling of the same
// path is caught).
void check_output_file(const std::string& what, const std::string& path, const std::vector<std::string>& inputs);
// Refuses (check_output_file) a path that is not a regular file or new.
void write_file_atomically(const std::string& path, const std::string& contents);
// Appends one line (a '\n' is added) and flushes; used for the metrics log.
void append_line(const std::string& path, const std::string& line);
// Anything is at `path`: a file, a folder or another kind (text::is_regular_file asks for a file).
bool path_exists(const std::string& path);
// A folder (or a link to one) is at `path`.
bool is_directory(const std::string& path);
// Creates a directory and its parents; throws naming the path on failure.
void make_directories(const std::string& path);

}  // namespace attn
