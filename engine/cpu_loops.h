// The CPU backend's one iteration primitive: walk a shape in row-major order
// over N operands that each have their own strides (0 for broadcast axes).
// Adjacent axes that are contiguous for every operand are merged first, so a
// contiguous or simply broadcast tensor becomes one long inner run that the
// compiler can vectorise. Large work is split across threads by outer rows.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "attn/engine/dtype.h"
#include "attn/engine/error.h"
#include "attn/engine/parallel.h"
#include "attn/engine/shape.h"

namespace attn {

template <size_t N>
struct StridedLayout {
  Shape shape;                                   // after merging axes
  std::array<std::vector<int64_t>, N> strides;   // per operand, same rank as shape
};

template <size_t N>
StridedLayout<N> merge_axes(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides) {
  StridedLayout<N> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !out.shape.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = out.strides[k].back() == strides[k][d] * shape[d];
    if (merge) {
      out.shape.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) out.strides[k].back() = strides[k][d];
    } else {
      out.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) out.strides[k].push_back(strides[k][d]);
    }
  }
  if (out.shape.empty()) {
    out.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) out.strides[k].push_back(0);
  }
  return out;
}

// inner(offsets, n, steps): process n elements; operand k starts at element
// offsets[k] (relative to its data pointer) and advances by steps[k]. inner
// must treat each element on its own (elementwise kernels): a long run may be
// cut into pieces that run on different threads.
template <size_t N, class Inner>
void strided_loop(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides, const Inner& inner) {
  if (numel_of(shape) == 0) return;
  StridedLayout<N> L = merge_axes<N>(shape, strides);
  const int64_t rank = static_cast<int64_t>(L.shape.size());
  const int64_t inner_n = L.shape.back();
  std::array<int64_t, N> steps;
  for (size_t k = 0; k < N; ++k) steps[k] = L.strides[k].back();
  const int64_t outer = numel_of(L.shape) / inner_n;
  // A contiguous tensor merges into one run (outer = 1); cutting long runs
  // into pieces of at least kParallelGrain elements lets threads share it.
  const int64_t pieces = std::max<int64_t>(1, inner_n / kParallelGrain);
  const int64_t piece_len = (inner_n + pieces - 1) / pieces;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / piece_len);

  parallel_for(outer * pieces, grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(rank > 1 ? rank - 1 : 1, 0);
    std::array<int64_t, N> base{};
    int64_t row = begin / pieces;
    int64_t rest = row;
    for (int64_t d = rank - 2; d >= 0; --d) {
      index[d] = rest % L.shape[d];
      rest /= L.shape[d];
      for (size_t k = 0; k < N; ++k) base[k] += index[d] * L.strides[k][d];
    }
    for (int64_t unit = begin; unit < end; ++unit) {
      if (unit / pieces != row) {  // next row: odometer increment
        ++row;
        for (int64_t d = rank - 2; d >= 0; --d) {
          for (size_t k = 0; k < N; ++k) base[k] += L.strides[k][d];
          if (++index[d] < L.shape[d]) break;
          for (size_t k = 0; k < N; ++k) base[k] -= L.strides[k][d] * L.shape[d];
          index[d] = 0;
        }
      }
      const int64_t first = (unit % pieces) * piece_len;
      const int64_t n = std::min(piece_len, inner_n - first);
      if (n <= 0) continue;
      std::array<int64_t, N> offsets;
      for (size_t k = 0; k < N; ++k) offsets[k] = base[k] + first * steps[k];
      inner(offsets, n, steps);
    }
  });
}

// Calls f(T-typed tag) for a floating dtype; throws naming `op` otherwise.
template <class F>
auto dispatch_floating(DType dtype, const char* op, const F& f) {
  switch (dtype) {
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    default: break;
  }
  ATTN_CHECK(false, op, "expects float32 or float64, got ", dtype_name(dtype));
  return f(TypeTag<float>{});
}

template <class F>
auto dispatch_all(DType dtype, const F& f) {
  switch (dtype) {
    case DType::F32: return f(TypeTag<float>{});
    case DType::F64: return f(TypeTag<double>{});
    case DType::U8: return f(TypeTag<uint8_t>{});
    case DType::I64: return f(TypeTag<int64_t>{});
  }
  return f(TypeTag<float>{});
}

}  // namespace attn
