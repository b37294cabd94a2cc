// Small helpers shared by the test files.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "attn/engine/error.h"
#include "attn/nn/module.h"

namespace attn {
namespace testing_support {

// The message of the attn::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A module's parameters by name.
inline std::map<std::string, Tensor> params_of(const Module& m) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, p] : m.named_parameters()) out[name] = p;
  return out;
}

}  // namespace testing_support
}  // namespace attn
