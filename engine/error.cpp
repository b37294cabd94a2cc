#include "attn/engine/error.h"

namespace attn {

NotImplemented::NotImplemented(const std::string& op, Device device)
    : Error(op + ": no kernel for device " + device_name(device) +
            (device == Device::CUDA && !built_with_cuda() ? " (this build has no CUDA backend)" : "")) {}

}  // namespace attn
