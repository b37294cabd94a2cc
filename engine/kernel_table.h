// Dispatch is a table, not scattered ifs: each op family declares one
// DeviceKernels per kernel, with a slot per device. An empty slot throws
// NotImplemented naming the op and the device; adding the CUDA backend fills
// the CUDA slots and changes no call site.
#pragma once
#include "engine/device.h"
#include "engine/error.h"

namespace attn {

template <class Fn>
struct DeviceKernels {
  const char* op;
  Fn cpu = nullptr;
  Fn cuda = nullptr;

  Fn get(Device device) const {
    Fn f = device == Device::CPU ? cpu : cuda;
    if (!f) throw NotImplemented(op, device);
    return f;
  }
  bool has(Device device) const { return (device == Device::CPU ? cpu : cuda) != nullptr; }
};

}  // namespace attn

// Names a CUDA kernel in a table, or leaves the slot empty in a CPU-only build.
#ifdef ATTN_WITH_CUDA
#define ATTN_CUDA_KERNEL(fn) fn
#else
#define ATTN_CUDA_KERNEL(fn) nullptr
#endif
