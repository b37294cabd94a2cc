#include "attn/train/batch_noise.h"

#include <vector>

namespace attn {

BatchNoise::BatchNoise(Generator* noise, uint64_t seed, int64_t position, const Batch& batch)
    : keys_(std::vector<uint64_t>(batch.indices.begin(), batch.indices.end())) {
  // splitmix64 inside Generator::seed makes neighbouring positions' streams
  // unrelated.
  if (noise) noise->seed(seed ^ (static_cast<uint64_t>(position) + 1) * 0x9E3779B97F4A7C15ULL);
}

}  // namespace attn
