// Environment variables as the libraries read them while they loaded: from
// the environment the process image started with (/proc/self/environ), not
// from later setenv calls.
#pragma once
#include <string>
#include <vector>

namespace attn {

// "NAME=value" for each of `names` set at start, space-separated, in the
// order of the environment block; "" when none was set.
std::string environment_at_start(const std::vector<std::string>& names);

}  // namespace attn
