#include "attn/train/interrupt.h"

#include <csignal>
#include <unistd.h>

namespace attn {

namespace {
volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int signo) {
  if (g_interrupted) _exit(128 + signo);  // second signal: stop now
  g_interrupted = 1;
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() { return g_interrupted != 0; }
void clear_interrupt() { g_interrupted = 0; }

}  // namespace attn
