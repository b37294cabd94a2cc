#include "attn/util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "attn/util/error.h"

namespace attn {

void check_output_file(const std::string& what, const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) throw Error(what + ": the output path is empty");
  struct stat out;
  const bool exists = ::stat(path.c_str(), &out) == 0;
  if (exists && !S_ISREG(out.st_mode))
    throw Error(what + ": '" + path + "' exists and is not a regular file (a folder, device or pipe); give a file path");
  if (!exists) return;
  for (const std::string& input : inputs) {
    struct stat in;
    if (!input.empty() && ::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw Error(what + ": the output '" + path + "' is the input '" + input +
                  "'; writing it would destroy what is being read");
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  // Renaming over a device node or a folder would replace it (as root, even
  // /dev/full): only a regular file, or a new name, is written.
  check_output_file("write_file", path, {});
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ATTN_CHECK(fd >= 0, "write_file", "cannot create '", tmp, "': ", std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t w = ::write(fd, contents.data() + done, contents.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      ATTN_CHECK(false, "write_file", "writing '", tmp, "' failed: ", std::strerror(err));
    }
    done += static_cast<size_t>(w);
  }
  bool synced = ::fsync(fd) == 0;
  bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    ::unlink(tmp.c_str());
    ATTN_CHECK(false, "write_file", "flushing '", tmp, "' failed: ", std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    ATTN_CHECK(false, "write_file", "renaming '", tmp, "' to '", path, "' failed: ", std::strerror(err));
  }
}

void append_line(const std::string& path, const std::string& line) {
  FILE* f = std::fopen(path.c_str(), "a");
  ATTN_CHECK(f != nullptr, "append_line", "cannot open '", path, "': ", std::strerror(errno));
  std::fputs(line.c_str(), f);
  std::fputc('\n', f);
  std::fflush(f);
  std::fclose(f);
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_directories(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty() || path_exists(partial)) continue;
    ATTN_CHECK(::mkdir(partial.c_str(), 0755) == 0 || errno == EEXIST, "make_directories", "cannot create '", partial,
               "': ", std::strerror(errno));
  }
}

}  // namespace attn
