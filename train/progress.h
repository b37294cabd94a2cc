// A one-line progress bar on stderr: step, loss, examples/s and ETA,
// redrawn in place on a terminal and printed every ~5% otherwise.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace attn {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total_steps);
  void update(int64_t step, double loss, int64_t examples_seen);
  void finish();

 private:
  std::string label_;
  int64_t total_;
  bool tty_;
  int64_t last_printed_percent_ = -1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace attn
