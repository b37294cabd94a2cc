// The `attn` program's default OpenMP wait policy: passive (idle threads
// sleep at once instead of spinning), because on a shared machine spinning
// threads steal the cores a step's other threads are waiting for
// (docs/engine.md, "Idle threads"). libgomp reads OMP_WAIT_POLICY and
// GOMP_SPINCOUNT once, while it is loaded, before main runs; so the default
// is applied by executing the program again with OMP_WAIT_POLICY set
// (train/cli/main.cpp, with the other variables the libraries read at load).
#pragma once
#include <string>

namespace attn {

// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set: sets
// OMP_WAIT_POLICY=passive for a re-execution to load, and returns true.
// Returns false when the user chose a policy.
bool prefer_passive_wait_policy();

// The wait-policy variables as libgomp read them: from the environment the
// process image started with (/proc/self/environ), not from later setenv
// calls. "OMP_WAIT_POLICY=passive", "GOMP_SPINCOUNT=1000", both, or
// "libgomp's default (spin, then sleep)" when neither was set.
std::string wait_policy_at_start();

}  // namespace attn
