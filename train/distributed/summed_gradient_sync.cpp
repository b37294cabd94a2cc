#include "attn/train/distributed/summed_gradient_sync.h"

#include <chrono>

#include "attn/engine/copy.h"
#include "attn/util/error.h"

namespace attn {

namespace {

// A parameter's gradient as float64 values on the host: the rows listed, or
// every element when `rows` is null.
void append_gradient(const Tensor& grad, const std::vector<int64_t>* rows, std::vector<double>& out) {
  const Tensor g = contiguous(grad.to(Device::CPU));
  const int64_t width = rows ? g.numel() / g.size(0) : g.numel();
  const auto append = [&](const auto* data) {
    if (!rows) {
      out.insert(out.end(), data, data + g.numel());
      return;
    }
    for (int64_t row : *rows) out.insert(out.end(), data + row * width, data + (row + 1) * width);
  };
  if (g.dtype() == DType::F64) append(g.data<double>());
  else append(g.data<float>());
}

// The summed values back into a gradient of `param`'s shape, dtype and device.
Tensor gradient_from(const Tensor& param, const std::vector<int64_t>* rows, const double* values) {
  Tensor g = zeros(param.shape(), param.dtype(), Device::CPU);
  const int64_t count = rows ? static_cast<int64_t>(rows->size()) * (param.numel() / param.size(0)) : param.numel();
  const int64_t width = rows ? param.numel() / param.size(0) : count;
  const auto fill = [&](auto* data) {
    using T = std::remove_pointer_t<decltype(data)>;
    if (!rows) {
      for (int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(values[i]);
      return;
    }
    for (size_t r = 0; r < rows->size(); ++r)
      for (int64_t j = 0; j < width; ++j)
        data[(*rows)[r] * width + j] = static_cast<T>(values[static_cast<int64_t>(r) * width + j]);
  };
  if (g.dtype() == DType::F64) fill(g.data<double>());
  else fill(g.data<float>());
  return g.to(param.device());
}

}  // namespace

int64_t bytes_sent_to_sum(int64_t values, int processes) {
  if (processes <= 1) return 0;
  // Phase 1 sends every chunk but one's own; phase 2 sends the own chunk to
  // every other process: 2 (N-1)/N of the values.
  return 2 * (processes - 1) * values / processes * static_cast<int64_t>(sizeof(double));
}

void SummedGradientSync::set_sparse_rows(const Tensor& table, const std::vector<int64_t>& rows) {
  ATTN_CHECK(!table.defined() || table.dim() == 2, "gradient sync", "the sparse table must be a matrix, got ",
             table.dim(), " dimensions");
  for (size_t i = 0; i < rows.size(); ++i)
    ATTN_CHECK(rows[i] >= 0 && rows[i] < table.size(0) && (i == 0 || rows[i] > rows[i - 1]), "gradient sync",
               "sparse row ", rows[i], " is out of range 0..", table.size(0) - 1, " or not sorted and distinct");
  sparse_table_ = table;
  sparse_rows_ = rows;
}

double SummedGradientSync::synchronise(const std::vector<Tensor>& params, double loss) {
  const auto start = std::chrono::steady_clock::now();
  // [loss, then per parameter: 1 when this process has a gradient, the values].
  std::vector<double> values{loss};
  std::vector<const std::vector<int64_t>*> rows_of(params.size(), nullptr);
  int64_t dense_values = 1;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    if (sparse_table_.defined() && p.impl() == sparse_table_.impl()) rows_of[i] = &sparse_rows_;
    const Tensor g = p.grad();
    values.push_back(g.defined() ? 1.0 : 0.0);
    dense_values += 1 + p.numel();
    const int64_t count =
        rows_of[i] ? static_cast<int64_t>(sparse_rows_.size()) * (p.numel() / p.size(0)) : p.numel();
    if (g.defined()) append_gradient(g, rows_of[i], values);
    else values.resize(values.size() + static_cast<size_t>(count), 0.0);
  }
  communicator_.sum_in_rank_order(values, "gradient sum");
  bytes_sent_ = bytes_sent_to_sum(static_cast<int64_t>(values.size()), communicator_.size());
  dense_bytes_ = bytes_sent_to_sum(dense_values, communicator_.size());

  size_t at = 1;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const bool any_gradient = values[at++] > 0;
    const int64_t count =
        rows_of[i] ? static_cast<int64_t>(sparse_rows_.size()) * (p.numel() / p.size(0)) : p.numel();
    // A parameter no process reached keeps no gradient, as in one process.
    if (any_gradient) p.set_grad(gradient_from(p, rows_of[i], values.data() + at));
    at += static_cast<size_t>(count);
  }
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return values[0];
}

}  // namespace attn
