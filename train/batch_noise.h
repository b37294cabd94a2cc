// The noise a batch's forward pass draws, in training and in evaluation: the
// noise generator reseeded from a seed and the batch's position (the step in
// training, the batch's index in an evaluation), and the batch's examples'
// indices in their data set as their noise keys (ops/dropout/
// dropout_example_keys.h). The draws then depend on neither the batches
// before nor how the batch is cut among data-parallel processes, and re-running
// a step draws the same noise again.
#pragma once
#include <cstdint>

#include "attn/engine/random.h"
#include "attn/ops/dropout/dropout_example_keys.h"
#include "attn/train/data/batching.h"

namespace attn {

class BatchNoise {
 public:
  // Reseeds `noise` (when not null) and keys the noise on `batch`'s examples
  // until this scope ends.
  BatchNoise(Generator* noise, uint64_t seed, int64_t position, const Batch& batch);

 private:
  ExampleNoiseKeys keys_;
};

}  // namespace attn
