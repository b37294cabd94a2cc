#include "attn/train/cli/thread_wait_policy.h"

#include <cstdlib>

#include "attn/train/cli/environment_at_start.h"

namespace attn {

bool prefer_passive_wait_policy() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return false;
  return setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
}

std::string wait_policy_at_start() {
  const std::string found = environment_at_start({"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"});
  return found.empty() ? "libgomp's default (spin, then sleep)" : found;
}

}  // namespace attn
