#include "attn/train/run/run_lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"

namespace attn {

namespace {

// The pid the holder wrote into the lock file, or "" when it has none yet.
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string pid = n > 0 ? std::string(text, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

void write_pid(int fd) {
  const std::string text = std::to_string(static_cast<long>(::getpid())) + "\n";
  // Best effort: the pid only makes a refusal clearer; the flock is the lock.
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, text.data(), text.size(), 0);
}

bool holds_only_the_lock(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  bool only = true;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != ".." && name != ".lock") only = false;
  }
  ::closedir(d);
  return only;
}

}  // namespace

RunFolderLock::RunFolderLock(const std::string& dir) : dir_(dir) {
  created_dir_ = !path_exists(dir);
  make_directories(dir);
  const std::string path = path_in(dir);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ATTN_CHECK(fd_ >= 0, "train", "cannot open the lock file '", path, "': ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = holder_of(fd_);
    ::close(fd_);
    fd_ = -1;
    ATTN_CHECK(error != EWOULDBLOCK, "train", "the run folder '", dir, "' is in use by another attn train (process ",
               holder.empty() ? std::string("unknown") : holder,
               "); wait for it to end or stop it, or choose another --run");
    ATTN_CHECK(false, "train", "cannot lock '", path, "': ", std::strerror(error));
  }
  write_pid(fd_);
}

RunFolderLock::~RunFolderLock() {
  if (fd_ < 0) return;
  if (created_dir_ && holds_only_the_lock(dir_)) {  // still locked: no other writer can be in it
    ::unlink(path_in(dir_).c_str());
    ::rmdir(dir_.c_str());
  }
  ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace attn
