// What the training loop needs from a data-parallel gradient sum beyond
// GradientSync: the embedding rows of this step (only those are exchanged),
// the bytes and seconds of the last exchange for the training log, and a
// name for the log's start line. Two implementations: SummedGradientSync
// (MPI, in rank order, through host memory) and PackedGradientSync (one
// all-reduce per dtype on the tensors' device; NCCL's in a CUDA run).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/train/optim/gradient_sync.h"

namespace attn {

class DataParallelSync : public GradientSync {
 public:
  // The parameter whose gradient is reduced by rows, and the rows of this
  // step (sorted, distinct: every process computes the same list from the
  // whole batch); an undefined `table` reduces every gradient densely.
  void set_sparse_rows(const Tensor& table, const std::vector<int64_t>& rows);

  // Bytes this process sent in the last synchronise (about 2 (N-1)/N of the
  // reduced values, 4 bytes each for float32, 8 for float64), and what a
  // dense reduction would have sent.
  int64_t bytes_sent_last_step() const { return bytes_sent_; }
  int64_t dense_bytes_last_step() const { return dense_bytes_; }
  // Seconds the last synchronise took: packing, the exchange (including
  // waiting for slower processes) and unpacking.
  double seconds_last_step() const { return seconds_; }
  // How the sums are made, for the training log ("MPI, ...", "NCCL 2.27.7, ...").
  virtual std::string describe() const = 0;

 protected:
  // The rows to exchange for `param`: the sparse rows when it is the sparse
  // table, null (every element) otherwise.
  const std::vector<int64_t>* rows_of(const Tensor& param) const {
    return sparse_table_.defined() && param.impl() == sparse_table_.impl() ? &sparse_rows_ : nullptr;
  }

  Tensor sparse_table_;
  std::vector<int64_t> sparse_rows_;
  int64_t bytes_sent_ = 0, dense_bytes_ = 0;
  double seconds_ = 0;
};

// The values of a parameter's gradient that are exchanged: the rows listed,
// or every element when `rows` is null.
int64_t exchanged_count(const Tensor& param, const std::vector<int64_t>* rows);

// What one process sends to sum `values` values of `bytes_per_value` bytes
// over `processes` processes (a ring all-reduce: 2 (N-1)/N of the values).
int64_t bytes_sent_to_sum(int64_t values, int processes, int64_t bytes_per_value);

}  // namespace attn
