// Ctrl-C handling for long runs: the first SIGINT/SIGTERM only sets a flag
// that the training loop polls between steps (it then saves a resumable
// checkpoint and exits cleanly); a second one exits at once.
#pragma once

namespace attn {

void install_interrupt_handler();
bool interrupt_requested();
void clear_interrupt();  // for tests

}  // namespace attn
