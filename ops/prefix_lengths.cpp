#include "attn/ops/prefix_lengths.h"

#include "attn/engine/copy.h"
#include "attn/engine/error.h"

namespace attn {

std::vector<int64_t> prefix_lengths(const Tensor& mask, int64_t B, int64_t n, const char* op) {
  std::vector<int64_t> lengths(B, n);
  if (!mask.defined()) return lengths;
  const Tensor m = contiguous(mask.to(Device::CPU));
  const uint8_t* p = m.data<uint8_t>();
  for (int64_t b = 0; b < B; ++b) {
    int64_t len = 0;
    while (len < n && p[b * n + len]) ++len;
    for (int64_t t = len; t < n; ++t)
      ATTN_CHECK(!p[b * n + t], op, "mask row ", b, " is not a prefix mask (token ", t,
                 " is valid after padding at ", len, "): the op needs each sentence's valid tokens first");
    lengths[b] = len;
  }
  return lengths;
}

}  // namespace attn
