#include "attn/train/progress.h"

#include <unistd.h>

#include <cstdio>

namespace attn {

ProgressBar::ProgressBar(std::string label, int64_t total_steps)
    : label_(std::move(label)), total_(total_steps), tty_(isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(int64_t step, double loss, int64_t examples_seen) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(examples_seen) / elapsed : 0;
  double eta = step > 0 ? elapsed * static_cast<double>(total_ - step) / static_cast<double>(step) : 0;
  int64_t percent = total_ > 0 ? 100 * step / total_ : 100;
  if (!tty_ && percent / 5 == last_printed_percent_ / 5 && step != total_) return;
  last_printed_percent_ = percent;
  const int width = 24;
  int filled = static_cast<int>(width * percent / 100);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(width - filled), '.');
  std::fprintf(stderr, "%s%s [%s] %lld/%lld loss %.4f  %.0f ex/s  ETA %.0fs%s", tty_ ? "\r" : "", label_.c_str(),
               bar.c_str(), static_cast<long long>(step), static_cast<long long>(total_), loss, rate, eta,
               tty_ ? "  " : "\n");
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (tty_) std::fprintf(stderr, "\n");
}

}  // namespace attn
