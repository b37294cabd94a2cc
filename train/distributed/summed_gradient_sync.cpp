#include "attn/train/distributed/summed_gradient_sync.h"

#include <chrono>

#include "attn/engine/copy.h"
#include "attn/util/error.h"

namespace attn {

namespace {

// Appends a gradient's exchanged values (host copies) to `out`.
template <class T>
void append_gradient(const Tensor& grad, const std::vector<int64_t>* rows, std::vector<T>& out) {
  const Tensor g = contiguous(grad.to(Device::CPU));
  const T* data = g.data<T>();
  if (!rows) {
    out.insert(out.end(), data, data + g.numel());
    return;
  }
  const int64_t width = g.numel() / g.size(0);
  for (int64_t row : *rows) out.insert(out.end(), data + row * width, data + (row + 1) * width);
}

// The summed values back into a gradient of `param`'s shape, dtype and
// device (zero outside the rows).
template <class T>
Tensor gradient_from(const Tensor& param, const std::vector<int64_t>* rows, const T* values) {
  Tensor g = zeros(param.shape(), param.dtype(), Device::CPU);
  T* data = g.data<T>();
  const int64_t count = exchanged_count(param, rows);
  if (!rows) {
    std::copy(values, values + count, data);
  } else {
    const int64_t width = param.numel() / param.size(0);
    for (size_t r = 0; r < rows->size(); ++r)
      std::copy(values + static_cast<int64_t>(r) * width, values + static_cast<int64_t>(r + 1) * width,
                data + (*rows)[r] * width);
  }
  return g.to(param.device());
}

}  // namespace

std::string SummedGradientSync::describe() const {
  return "MPI, in rank order in float64 (through host memory)";
}

double SummedGradientSync::synchronise(const std::vector<Tensor>& params, double loss) {
  const auto start = std::chrono::steady_clock::now();
  // wide: [loss, one flag per parameter (1: this process has a gradient),
  // the float64 gradients]; narrow: the float32 gradients, sent as float32
  // (exact) and summed in float64 (Communicator::sum_in_rank_order).
  std::vector<double> wide{loss};
  std::vector<float> narrow;
  std::vector<const std::vector<int64_t>*> rows(params.size(), nullptr);
  int64_t dense_wide = 1 + static_cast<int64_t>(params.size()), dense_narrow = 0;
  for (const Tensor& p : params) wide.push_back(p.grad().defined() ? 1.0 : 0.0);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    rows[i] = rows_of(p);
    const Tensor g = p.grad();
    const bool is_double = p.dtype() == DType::F64;
    (is_double ? dense_wide : dense_narrow) += p.numel();
    const auto count = static_cast<size_t>(exchanged_count(p, rows[i]));
    if (is_double) {
      if (g.defined()) append_gradient(g, rows[i], wide);
      else wide.resize(wide.size() + count, 0.0);
    } else {
      ATTN_CHECK(p.dtype() == DType::F32, "gradient sync", "parameters are float32 or float64, got ",
                 dtype_name(p.dtype()));
      if (g.defined()) append_gradient(g, rows[i], narrow);
      else narrow.resize(narrow.size() + count, 0.0f);
    }
  }
  communicator_.sum_in_rank_order(wide, "gradient sum");
  // Every process has the same parameters, so all skip or all enter.
  if (!narrow.empty()) communicator_.sum_in_rank_order(narrow, "gradient sum");
  const int processes = communicator_.size();
  bytes_sent_ = bytes_sent_to_sum(static_cast<int64_t>(wide.size()), processes, 8) +
                bytes_sent_to_sum(static_cast<int64_t>(narrow.size()), processes, 4);
  dense_bytes_ = bytes_sent_to_sum(dense_wide, processes, 8) + bytes_sent_to_sum(dense_narrow, processes, 4);

  size_t at_wide = 1 + params.size(), at_narrow = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const bool any_gradient = wide[1 + i] > 0;
    const auto count = static_cast<size_t>(exchanged_count(p, rows[i]));
    // A parameter no process reached keeps no gradient, as in one process.
    if (p.dtype() == DType::F64) {
      if (any_gradient) p.set_grad(gradient_from(p, rows[i], wide.data() + at_wide));
      at_wide += count;
    } else {
      if (any_gradient) p.set_grad(gradient_from(p, rows[i], narrow.data() + at_narrow));
      at_narrow += count;
    }
  }
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return wide[0];
}

}  // namespace attn
