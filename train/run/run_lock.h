// The lock that makes one `attn train` the only writer of a run folder.
// Two writers would interleave metrics.jsonl or mix two runs' files, so a
// training run holds flock(2) on `<run folder>/.lock` (which holds its pid as
// text, so the refusal can name the other process) from before it writes or
// removes anything in the folder until it ends. The kernel drops the lock
// when the process dies, even by SIGKILL, so a crash never leaves the folder
// locked. Read-only commands (eval, predict, explain, plot) take no lock.
#pragma once
#include <string>

namespace attn {

class RunFolderLock {
 public:
  // Creates the folder when missing and locks it; throws naming the folder
  // and the pid of the process holding it when another writer has it.
  // flock locks belong to an open file description, so a second lock of the
  // same folder conflicts even within one process.
  explicit RunFolderLock(const std::string& dir);
  // Releases the lock; a folder this lock created and nothing else wrote to
  // (the run failed before its first file) is removed, so a failed start
  // leaves no trace.
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

  static std::string path_in(const std::string& dir) { return dir + "/.lock"; }

 private:
  std::string dir_;
  bool created_dir_ = false;
  int fd_ = -1;
};

}  // namespace attn
