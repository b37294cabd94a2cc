#include "attn/train/cli/environment_at_start.h"

#include <fstream>
#include <iterator>

namespace attn {

std::string environment_at_start(const std::vector<std::string>& names) {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  const std::string block((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string found;
  for (size_t start = 0; start < block.size();) {
    size_t end = block.find('\0', start);
    if (end == std::string::npos) end = block.size();
    const std::string entry = block.substr(start, end - start);
    for (const std::string& name : names)
      if (entry.rfind(name + "=", 0) == 0) found += (found.empty() ? "" : " ") + entry;
    start = end + 1;
  }
  return found;
}

}  // namespace attn
