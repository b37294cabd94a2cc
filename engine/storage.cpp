#include "attn/engine/storage.h"

#include "attn/engine/allocator.h"

namespace attn {

Storage::Storage(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  data_ = allocator_for(device).allocate(bytes);
}

Storage::~Storage() { allocator_for(device_).deallocate(data_, bytes_); }

}  // namespace attn
