// Where a tensor's storage lives. Kernel tables have one slot per device.
#pragma once
#include <cstdint>

namespace attn {

enum class Device : uint8_t { CPU = 0, CUDA = 1 };
constexpr int kDeviceCount = 2;

inline const char* device_name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }

// True when this build contains the CUDA backend (not whether a GPU is present).
bool built_with_cuda();

}  // namespace attn
