// A block of device memory shared by a tensor and all of its views.
#pragma once
#include <cstddef>
#include <memory>

#include "attn/engine/device.h"

namespace attn {

class Storage {
 public:
  Storage(size_t bytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
};

}  // namespace attn
