// The gradient synchronisation of a data-parallel run: every process's
// gradients (already divided by the whole batch's count, so they add up to
// the batch's mean gradient) are summed over the processes in rank order
// (Communicator::sum_in_rank_order), in float64, with the loss riding along.
// float32 gradients travel as float32 (exact) and are rounded to float32
// once, after the float64 sum, as in one process.
//
// The embedding table is the one large parameter a step touches only a few
// rows of: its gradient is zero outside the words of the batch on every
// process, so only the rows of the whole batch's distinct word ids are sent
// (set_sparse_rows); the result is the same as the dense sum's.
//
// Gradients on a GPU are staged through host memory here; a CUDA run built
// with NCCL sums them on the GPUs instead (nccl_gradient_sync.h).
#pragma once
#include <string>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/train/distributed/communicator.h"
#include "attn/train/distributed/data_parallel_sync.h"

namespace attn {

class SummedGradientSync final : public DataParallelSync {
 public:
  explicit SummedGradientSync(Communicator& communicator) : communicator_(communicator) {}

  double synchronise(const std::vector<Tensor>& params, double loss) override;
  std::string describe() const override;

 private:
  Communicator& communicator_;
};

}  // namespace attn
