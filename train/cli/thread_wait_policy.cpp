#include "attn/train/cli/thread_wait_policy.h"

#include <unistd.h>

#include <cstdlib>

#include "attn/train/cli/environment_at_start.h"

namespace attn {

void use_passive_wait_policy_by_default(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  // Set before the exec, so the new image sees it and does not exec again.
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
}

std::string wait_policy_at_start() {
  const std::string found = environment_at_start({"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"});
  return found.empty() ? "libgomp's default (spin, then sleep)" : found;
}

}  // namespace attn
