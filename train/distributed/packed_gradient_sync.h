// A data-parallel gradient sum made on the tensors' own device: the gradients
// are packed into one contiguous buffer per dtype, the buffers are summed over
// the processes by all-reduces (BufferSum: NCCL's in a CUDA run,
// nccl_gradient_sync.h), and unpacked. Only the loss and one flag per
// parameter are read back to the host.
//
// The packing is SummedGradientSync's, so the two give the same gradients up
// to the order of the additions:
//  - the float64 buffer holds [loss, one flag per parameter (1: this process
//    has a gradient), the float64 gradients]; the float32 buffer holds the
//    float32 gradients. Gradients are already divided by the whole batch's
//    count, so their sum is the batch's mean gradient.
//  - a parameter without a gradient contributes zeros; one that no process
//    has a gradient for keeps none, as in one process.
//  - the sparse table (set_sparse_rows) contributes only the listed rows; the
//    other rows of its summed gradient are zero, as they are on every process.
// Each buffer is summed in its own dtype: float32 gradients are added in
// float32 here, where SummedGradientSync adds them in float64 and rounds once.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/train/distributed/data_parallel_sync.h"

namespace attn {

// An all-reduce over the processes of a run, on buffers in device memory.
class BufferSum {
 public:
  virtual ~BufferSum() = default;
  // Replaces every buffer (1-D, contiguous, float32 or float64, all on one
  // device) by its elementwise sum over the processes. Every process passes
  // the same number of buffers, with the same dtypes and lengths, in the
  // same order.
  virtual void sum(const std::vector<Tensor>& buffers, const char* what) = 0;
  virtual int processes() const = 0;
  virtual std::string describe() const = 0;
};

class PackedGradientSync : public DataParallelSync {
 public:
  explicit PackedGradientSync(std::unique_ptr<BufferSum> sum);

  double synchronise(const std::vector<Tensor>& params, double loss) override;
  std::string describe() const override { return sum_->describe(); }

 private:
  std::unique_ptr<BufferSum> sum_;
};

}  // namespace attn
