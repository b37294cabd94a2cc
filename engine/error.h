// The engine's errors: every attn::Error (util/error.h, with ATTN_CHECK) and
// the one that needs to know about devices.
#pragma once
#include <string>

#include "attn/engine/device.h"
#include "attn/util/error.h"

namespace attn {

// Thrown when an op has no kernel for the requested device.
class NotImplemented : public Error {
 public:
  NotImplemented(const std::string& op, Device device);
};

}  // namespace attn
