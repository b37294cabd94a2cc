#include "ops/registry.h"

namespace attn {

void register_index_samples(OpRegistry&) {}

}  // namespace attn
