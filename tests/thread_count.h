// ThreadCount: sets the OpenMP thread count for a test's scope and restores
// the previous one when the scope ends, whatever the test set meanwhile.
#pragma once
#include <omp.h>

namespace attn {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadCount() { omp_set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

}  // namespace attn
