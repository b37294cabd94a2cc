#include "attn/train/distributed/packed_gradient_sync.h"

#include <chrono>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/ops/index/index.h"
#include "attn/ops/view/view.h"
#include "attn/util/error.h"

namespace attn {

namespace {

// The part of `buffer` from `offset` that holds a parameter's exchanged
// values, shaped as the parameter, or as [rows, width] for listed rows.
Tensor part_of(const Tensor& buffer, int64_t offset, const Tensor& param, const std::vector<int64_t>* rows) {
  const Tensor flat = narrow(buffer, 0, offset, exchanged_count(param, rows));
  if (!rows) return reshape(flat, param.shape());
  return reshape(flat, {static_cast<int64_t>(rows->size()), param.numel() / param.size(0)});
}

}  // namespace

PackedGradientSync::PackedGradientSync(std::unique_ptr<BufferSum> sum) : sum_(std::move(sum)) {
  ATTN_CHECK(sum_ != nullptr, "gradient sync", "no all-reduce given");
}

double PackedGradientSync::synchronise(const std::vector<Tensor>& params, double loss) {
  const auto start = std::chrono::steady_clock::now();
  const NoGrad no_grad;  // packing and unpacking are bookkeeping, not part of any graph
  const Device device = params.empty() ? Device::CPU : params.front().device();
  const auto count = static_cast<int64_t>(params.size());

  // Where each parameter's values go: the float64 buffer after the loss and
  // the flags, or the float32 buffer.
  std::vector<int64_t> offset(params.size());
  int64_t wide = 1 + count, narrow_count = 0, dense_wide = 1 + count, dense_narrow = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    ATTN_CHECK(p.device() == device, "gradient sync", "every parameter must be on one device: parameter ", i,
               " is on ", device_name(p.device()), ", the first on ", device_name(device));
    ATTN_CHECK(p.dtype() == DType::F32 || p.dtype() == DType::F64, "gradient sync",
               "parameters are float32 or float64, got ", dtype_name(p.dtype()));
    const int64_t values = exchanged_count(p, rows_of(p));
    if (p.dtype() == DType::F64) {
      offset[i] = wide;
      wide += values;
      dense_wide += p.numel();
    } else {
      offset[i] = narrow_count;
      narrow_count += values;
      dense_narrow += p.numel();
    }
  }
  const Tensor wide_buffer = empty({wide}, DType::F64, device);
  // Every process has the same parameters, so all have a float32 buffer or none.
  const Tensor narrow_buffer = narrow_count > 0 ? empty({narrow_count}, DType::F32, device) : Tensor();
  Tensor row_index;  // the sparse rows, on the device
  if (sparse_table_.defined() && !sparse_rows_.empty())
    row_index = from_indices(sparse_rows_, {static_cast<int64_t>(sparse_rows_.size())}).to(device);

  std::vector<double> header{loss};
  for (const Tensor& p : params) header.push_back(p.grad().defined() ? 1.0 : 0.0);
  copy_into(narrow(wide_buffer, 0, 0, 1 + count), from_vector(header, {1 + count}, DType::F64).to(device));
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const std::vector<int64_t>* rows = rows_of(p);
    if (exchanged_count(p, rows) == 0) continue;
    const Tensor part = part_of(p.dtype() == DType::F64 ? wide_buffer : narrow_buffer, offset[i], p, rows);
    const Tensor g = p.grad();
    if (!g.defined()) {
      fill_(part, 0.0);
      continue;
    }
    ATTN_CHECK(g.shape() == p.shape() && g.device() == device, "gradient sync", "parameter ", i,
               "'s gradient does not match it in shape or device");
    copy_into(part, rows ? index_select(g, 0, row_index) : g);
  }

  std::vector<Tensor> buffers{wide_buffer};
  if (narrow_buffer.defined()) buffers.push_back(narrow_buffer);
  sum_->sum(buffers, "gradient sum");

  const std::vector<double> summed = narrow(wide_buffer, 0, 0, 1 + count).to(Device::CPU).to_vector();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    if (summed[1 + i] <= 0) continue;  // no process reached it: it keeps no gradient
    const std::vector<int64_t>* rows = rows_of(p);
    if (!rows) {
      p.set_grad(clone(part_of(p.dtype() == DType::F64 ? wide_buffer : narrow_buffer, offset[i], p, nullptr)));
    } else if (rows->empty()) {
      p.set_grad(zeros(p.shape(), p.dtype(), device));
    } else {
      const Tensor part = part_of(p.dtype() == DType::F64 ? wide_buffer : narrow_buffer, offset[i], p, rows);
      p.set_grad(index_add(zeros(p.shape(), p.dtype(), device), 0, row_index, part));
    }
  }

  const int processes = sum_->processes();
  bytes_sent_ = bytes_sent_to_sum(wide, processes, 8) + bytes_sent_to_sum(narrow_count, processes, 4);
  dense_bytes_ = bytes_sent_to_sum(dense_wide, processes, 8) + bytes_sent_to_sum(dense_narrow, processes, 4);
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summed[0];
}

}  // namespace attn
