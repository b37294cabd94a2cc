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
#pragma once
#include <cstdint>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/train/distributed/communicator.h"
#include "attn/train/optim/gradient_sync.h"

namespace attn {

class SummedGradientSync final : public GradientSync {
 public:
  explicit SummedGradientSync(Communicator& communicator) : communicator_(communicator) {}

  double synchronise(const std::vector<Tensor>& params, double loss) override;

  // The parameter whose gradient is reduced by rows, and the rows of this
  // step (sorted, distinct); an undefined `table` reduces every gradient densely.
  void set_sparse_rows(const Tensor& table, const std::vector<int64_t>& rows);

  // Bytes this process sent in the last synchronise (about 2 (N-1)/N of the
  // reduced values, 4 bytes each for float32, 8 for float64), and what a
  // dense reduction would have sent.
  int64_t bytes_sent_last_step() const { return bytes_sent_; }
  int64_t dense_bytes_last_step() const { return dense_bytes_; }
  // Seconds the last synchronise took: packing, the exchange (including
  // waiting for slower processes) and unpacking.
  double seconds_last_step() const { return seconds_; }

 private:
  Communicator& communicator_;
  Tensor sparse_table_;
  std::vector<int64_t> sparse_rows_;
  int64_t bytes_sent_ = 0, dense_bytes_ = 0;
  double seconds_ = 0;
};

// What one process sends to sum `values` values of `bytes_per_value` bytes
// over `processes` processes.
int64_t bytes_sent_to_sum(int64_t values, int processes, int64_t bytes_per_value);

}  // namespace attn
