#include "attn/train/cli/thread_wait_policy.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace attn {

void use_passive_wait_policy_by_default(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  // Set before the exec, so the new image sees it and does not exec again.
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
}

std::string wait_policy_at_start() {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  const std::string block((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string found;
  for (size_t start = 0; start < block.size();) {
    size_t end = block.find('\0', start);
    if (end == std::string::npos) end = block.size();
    const std::string entry = block.substr(start, end - start);
    if (entry.rfind("OMP_WAIT_POLICY=", 0) == 0 || entry.rfind("GOMP_SPINCOUNT=", 0) == 0)
      found += (found.empty() ? "" : " ") + entry;
    start = end + 1;
  }
  return found.empty() ? "libgomp's default (spin, then sleep)" : found;
}

}  // namespace attn
