// CPU kernels of the index family. Forward ops copy whole contiguous rows
// where the layout allows; scatters are parallelised only over work items
// that own disjoint parts of the output, so they need no atomics and every
// element sums its contributions in the same order on every run.
#include "attn/ops/index/index_kernels.h"

#include <algorithm>
#include <array>

#include "attn/engine/cpu_loops.h"

namespace attn {

namespace {

// Columns per scatter task: enough for a vectorised inner loop, small enough
// that a single embedding table row still splits across threads.
constexpr int64_t kColumnBlock = 64;

// out[o, j, :] = x[o, idx[j], :] for o < outer, j < k.
template <class T>
void copy_rows(const T* x, int64_t outer, int64_t n, int64_t inner, const int64_t* idx, int64_t k, T* out) {
  const int64_t rows = outer * k;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1));
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / k, j = r % k;
      std::copy_n(x + (o * n + idx[j]) * inner, inner, out + r * inner);
    }
  });
}

// dst[o, idx[j], :] += src[o, j, :]. A task is one (o, column block): tasks
// write disjoint elements, and each sums over j in ascending order.
template <class T>
void add_rows(const T* src, int64_t outer, int64_t k, int64_t inner, const int64_t* idx, int64_t n, T* dst) {
  if (inner == 0 || k == 0) return;
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (k * std::min(inner, kColumnBlock)));
  parallel_for(outer * blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / blocks;
      const int64_t c0 = (t % blocks) * kColumnBlock, c1 = std::min(inner, c0 + kColumnBlock);
      for (int64_t j = 0; j < k; ++j) {
        T* d = dst + (o * n + idx[j]) * inner;
        const T* s = src + (o * k + j) * inner;
        for (int64_t c = c0; c < c1; ++c) d[c] += s[c];
      }
    }
  });
}

// Calls line(offsets) once per line of `shape` along `axis`, where offsets[k]
// is operand k's element offset of the line's first element (axis coordinate
// 0). Lines are split across threads; each line is handled by one thread.
template <size_t N, class Line>
void for_each_line(const Shape& shape, int64_t axis, const std::array<std::vector<int64_t>, N>& strides,
                   const Line& line) {
  Shape outer_shape;
  std::array<std::vector<int64_t>, N> outer_strides;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) == axis) continue;
    outer_shape.push_back(shape[d]);
    for (size_t k = 0; k < N; ++k) outer_strides[k].push_back(strides[k][d]);
  }
  const int64_t lines = numel_of(outer_shape);
  const int64_t length = shape[axis];
  if (lines == 0 || length == 0) return;
  const int64_t rank = static_cast<int64_t>(outer_shape.size());
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / length);
  parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
    std::array<int64_t, N> base{};
    int64_t rest = begin;
    for (int64_t d = rank - 1; d >= 0; --d) {
      coord[d] = rest % outer_shape[d];
      rest /= outer_shape[d];
      for (size_t k = 0; k < N; ++k) base[k] += coord[d] * outer_strides[k][d];
    }
    for (int64_t l = begin; l < end; ++l) {
      line(base);
      for (int64_t d = rank - 1; d >= 0; --d) {  // odometer increment
        for (size_t k = 0; k < N; ++k) base[k] += outer_strides[k][d];
        if (++coord[d] < outer_shape[d]) break;
        for (size_t k = 0; k < N; ++k) base[k] -= outer_strides[k][d] * outer_shape[d];
        coord[d] = 0;
      }
    }
  });
}

}  // namespace

bool index_in_range_cpu(const Tensor& index, int64_t limit, int64_t* bad) {
  const int64_t* idx = index.data<int64_t>();
  const int64_t n = index.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= limit) {
      *bad = idx[i];
      return false;
    }
  }
  return true;
}

void index_select_cpu(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& index,
                      const Tensor& out) {
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_rows(x.data<T>(), outer, n, inner, index.data<int64_t>(), index.numel(), out.data<T>());
  });
}

void index_add_cpu(const Tensor& grad, const Tensor& index, int64_t outer, int64_t n, int64_t inner,
                   const Tensor& grad_in) {
  dispatch_floating(grad.dtype(), "index_select_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_rows(grad.data<T>(), outer, index.numel(), inner, index.data<int64_t>(), n, grad_in.data<T>());
  });
}

void embedding_forward_cpu(const Tensor& weight, const Tensor& ids, const Tensor& out) {
  dispatch_floating(weight.dtype(), "embedding", [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_rows(weight.data<T>(), 1, weight.shape()[0], weight.shape()[1], ids.data<int64_t>(), ids.numel(),
              out.data<T>());
  });
}

void embedding_backward_cpu(const Tensor& grad, const Tensor& ids, const Tensor& grad_weight) {
  dispatch_floating(grad.dtype(), "embedding_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_rows(grad.data<T>(), 1, ids.numel(), grad_weight.shape()[1], ids.data<int64_t>(), grad_weight.shape()[0],
             grad_weight.data<T>());
  });
}

void gather_cpu(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& out) {
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xs = x.data<T>();
    const int64_t* idx = index.data<int64_t>();
    T* o = out.data<T>();
    const int64_t length = index.shape()[axis];
    const int64_t x_step = x.strides()[axis], i_step = index.strides()[axis], o_step = out.strides()[axis];
    for_each_line<3>(index.shape(), axis, {out.strides(), index.strides(), x.strides()},
                     [&](const std::array<int64_t, 3>& off) {
                       T* dst = o + off[0];
                       const int64_t* id = idx + off[1];
                       const T* src = xs + off[2];
                       for (int64_t j = 0; j < length; ++j) dst[j * o_step] = src[id[j * i_step] * x_step];
                     });
  });
}

void scatter_add_cpu(const Tensor& out, int64_t axis, const Tensor& index, const Tensor& src) {
  dispatch_floating(out.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const int64_t* idx = index.data<int64_t>();
    const T* s = src.data<T>();
    const int64_t length = index.shape()[axis];
    const int64_t o_step = out.strides()[axis], i_step = index.strides()[axis], s_step = src.strides()[axis];
    // Lines differ off axis, so two lines never touch the same output element.
    for_each_line<3>(index.shape(), axis, {out.strides(), index.strides(), src.strides()},
                     [&](const std::array<int64_t, 3>& off) {
                       T* dst = o + off[0];
                       const int64_t* id = idx + off[1];
                       const T* from = s + off[2];
                       for (int64_t j = 0; j < length; ++j) dst[id[j * i_step] * o_step] += from[j * s_step];
                     });
  });
}

void one_hot_cpu(const Tensor& index, const Tensor& out) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t* idx = index.data<int64_t>();
    T* o = out.data<T>();
    const int64_t classes = out.shape().back();
    const int64_t n = index.numel();
    for (int64_t i = 0; i < n; ++i) o[i * classes + idx[i]] = T(1);
  });
}

}  // namespace attn
