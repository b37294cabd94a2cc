#include "attn/ops/reduce/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce_kernels.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

using RowsFn = void (*)(ReduceOp, const Tensor&, int64_t, int64_t, const Tensor&, const Tensor&);
using ColumnsFn = void (*)(const Tensor&, int64_t, int64_t, int64_t, const Tensor&);
using MaxBackwardFn = void (*)(const Tensor&, const Tensor&, int64_t, int64_t, const Tensor&);
const DeviceKernels<RowsFn> kRows{"reduce_rows", reduce_rows_cpu, ATTN_CUDA_KERNEL(reduce_rows_cuda)};
const DeviceKernels<ColumnsFn> kColumns{"sum_columns", sum_columns_cpu, ATTN_CUDA_KERNEL(sum_columns_cuda)};
const DeviceKernels<MaxBackwardFn> kMaxBackward{"max_backward", max_backward_cpu, ATTN_CUDA_KERNEL(max_backward_cuda)};

// Which axes a reduction covers, and the shapes on either side of it.
struct ReducePlan {
  std::vector<bool> reduced;  // per input axis
  Shape kept_shape;           // output shape with keepdim
  Shape out_shape;            // output shape as requested
  int64_t outer = 1;          // product of kept sizes
  int64_t n = 1;              // product of reduced sizes
};

ReducePlan plan_reduction(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim, const char* op) {
  ReducePlan p;
  int64_t rank = x.dim();
  p.reduced.assign(rank, axes.empty());
  for (int64_t a : axes) {
    int64_t k = normalize_axis(a, rank, op);
    ATTN_CHECK(!p.reduced[k] || axes.empty(), op, "axis ", a, " listed twice for shape ", shape_str(x.shape()));
    p.reduced[k] = true;
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (p.reduced[i]) {
      p.n *= x.shape()[i];
      p.kept_shape.push_back(1);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.outer *= x.shape()[i];
      p.kept_shape.push_back(x.shape()[i]);
      p.out_shape.push_back(x.shape()[i]);
    }
  }
  return p;
}

// x with kept axes first and reduced axes last, contiguous: the rows layout.
Tensor to_rows_layout(const Tensor& x, const ReducePlan& p, std::vector<int64_t>* order_out) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (!p.reduced[i]) order.push_back(i);
  for (int64_t i = 0; i < x.dim(); ++i)
    if (p.reduced[i]) order.push_back(i);
  if (order_out) *order_out = order;
  NoGrad no_grad;
  return contiguous(permute(x.detach(), order));
}

// x's axes, ignoring size-1 ones, merged into alternating blocks of kept and
// reduced axes: [B, h, n, d] summed over {0, 2} is kept/reduced blocks
// (B: reduced) (h: kept) (n: reduced) (d: kept).
struct AxisBlock {
  int64_t size;
  bool reduced;
};

std::vector<AxisBlock> axis_blocks(const Tensor& x, const ReducePlan& p) {
  std::vector<AxisBlock> blocks;
  for (size_t i = 0; i < p.reduced.size(); ++i) {
    const int64_t size = x.shape()[i];
    if (size == 1) continue;
    if (!blocks.empty() && blocks.back().reduced == p.reduced[i]) {
      blocks.back().size *= size;
    } else {
      blocks.push_back({size, p.reduced[i]});
    }
  }
  return blocks;
}

// Sums the contiguous x's reduced block k of `blocks` into out (contiguous,
// the other blocks' elements): rows for a trailing block, columns for a
// leading or middle one, such as source2token's sum over tokens of [B, n, d].
void sum_block(const Tensor& x, const std::vector<AxisBlock>& blocks, size_t k, const Tensor& out) {
  int64_t before = 1, after = 1;
  for (size_t i = 0; i < k; ++i) before *= blocks[i].size;
  for (size_t i = k + 1; i < blocks.size(); ++i) after *= blocks[i].size;
  if (after == 1) {
    kRows(x.device(), ReduceOp::Sum, x, before, blocks[k].size, out, Tensor());
  } else {
    kColumns(x.device(), x, before, blocks[k].size, after, out);
  }
}

// Sum without recording, with no permuted copy of a contiguous x: one pass
// per reduced block, the last first, each over the previous pass's
// (contiguous, smaller) result. The bias gradient of a per-head linear map,
// [B, h, n, d] summed over {0, 2}, is two passes instead of a transposing
// copy and one. Intermediates are in x's dtype: one rounding per extra pass.
Tensor sum_values(const Tensor& x, const ReducePlan& p) {
  Tensor out = empty(p.out_shape, x.dtype(), x.device());
  if (!x.is_contiguous()) {
    kRows(x.device(), ReduceOp::Sum, to_rows_layout(x, p, nullptr), p.outer, p.n, out, Tensor());
    return out;
  }
  std::vector<AxisBlock> blocks = axis_blocks(x, p);
  if (blocks.empty()) blocks.push_back({1, true});  // a single element
  Tensor current = x;
  for (;;) {
    size_t k = blocks.size();
    int reduced_blocks = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].reduced) {
        k = i;
        ++reduced_blocks;
      }
    }
    if (k == blocks.size()) {  // nothing left to reduce (an all size-1 reduction)
      kRows(x.device(), ReduceOp::Sum, current, p.outer, 1, out, Tensor());
      return out;
    }
    if (reduced_blocks == 1) {
      sum_block(current, blocks, k, out);
      return out;
    }
    Tensor next = empty({current.numel() / blocks[k].size}, x.dtype(), x.device());
    sum_block(current, blocks, k, next);
    // Drop block k; the kept blocks on either side of it become one.
    if (k + 1 < blocks.size() && k > 0) {
      blocks[k - 1].size *= blocks[k + 1].size;
      blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(k), blocks.begin() + static_cast<std::ptrdiff_t>(k) + 2);
    } else {
      blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(k));
    }
    current = next;
  }
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  ATTN_CHECK(is_floating(x.dtype()), "sum", "expects a floating tensor, got ", dtype_name(x.dtype()));
  ReducePlan p = plan_reduction(x, axes, keepdim, "sum");
  Tensor out = sum_values(x, p);
  Shape in_shape = x.shape(), kept = p.kept_shape;
  record(out, "sum", {x}, {}, [in_shape, kept](const Tensor& g, const std::vector<bool>&) {
    return std::vector<Tensor>{expand(reshape(g, kept), in_shape)};
  });
  return out;
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  ReducePlan p = plan_reduction(x, axes, keepdim, "mean");
  ATTN_CHECK(p.n > 0, "mean", "mean over zero elements of shape ", shape_str(x.shape()));
  return mul_scalar(sum(x, axes, keepdim), 1.0 / static_cast<double>(p.n));
}

Tensor max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  ATTN_CHECK(is_floating(x.dtype()), "max", "expects a floating tensor, got ", dtype_name(x.dtype()));
  ReducePlan p = plan_reduction(x, axes, keepdim, "max");
  ATTN_CHECK(p.n > 0, "max", "max over zero elements of shape ", shape_str(x.shape()));
  std::vector<int64_t> order;
  Tensor rows = to_rows_layout(x, p, &order);
  Tensor out = empty(p.out_shape, x.dtype(), x.device());
  Tensor idx = empty({p.outer}, DType::I64, x.device());
  kRows(x.device(), ReduceOp::Max, rows, p.outer, p.n, out, idx);
  if (!any_requires_grad({x})) return out;
  Shape permuted = rows.shape();
  int64_t outer = p.outer, n = p.n;
  record(out, "max", {x}, {idx}, [permuted, idx, outer, n, order](const Tensor& g, const std::vector<bool>&) {
    Tensor gi = empty(permuted, g.dtype(), g.device());
    kMaxBackward(g.device(), contiguous(g), idx, outer, n, gi);
    std::vector<int64_t> inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
    return std::vector<Tensor>{permute(gi, inverse)};
  });
  return out;
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  Tensor shift;
  {
    // The shift cancels exactly, so it carries no gradient; an all -inf group
    // is shifted by 0 to keep exp(-inf - -inf) = NaN out.
    NoGrad no_grad;
    Tensor m = max(x.detach(), axes, true);
    Tensor ninf = full({}, -std::numeric_limits<double>::infinity(), x.dtype(), x.device());
    shift = masked_fill(m, eq(m, ninf), 0.0);
  }
  Tensor out = add(log(sum(exp(sub(x, shift)), axes, true)), shift);
  if (keepdim) return out;
  return reshape(out, plan_reduction(x, axes, false, "logsumexp").out_shape);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  ATTN_CHECK(x.dim() >= static_cast<int64_t>(shape.size()), "sum_to", "cannot sum ", shape_str(x.shape()), " to ",
             shape_str(shape));
  std::vector<int64_t> axes;
  size_t lead = x.shape().size() - shape.size();
  for (size_t i = 0; i < x.shape().size(); ++i) {
    if (i < lead) {
      axes.push_back(static_cast<int64_t>(i));
    } else if (shape[i - lead] == 1 && x.shape()[i] != 1) {
      axes.push_back(static_cast<int64_t>(i));
    } else {
      ATTN_CHECK(shape[i - lead] == x.shape()[i], "sum_to", "cannot sum ", shape_str(x.shape()), " to ",
                 shape_str(shape));
    }
  }
  if (axes.empty()) return reshape(x, shape);
  return reshape(sum(x, axes, true), shape);
}

Tensor squared_norm(const Tensor& x) {
  ATTN_CHECK(is_floating(x.dtype()), "squared_norm", "expects a floating tensor, got ", dtype_name(x.dtype()));
  // Rows of 2^16 elements: enough of them for every thread in a large
  // gradient (a 50000 x 128 embedding is 97 rows), each long enough that its
  // partial sum costs nothing to add.
  constexpr int64_t kSquaredNormRow = int64_t{1} << 16;
  NoGrad no_grad;
  const int64_t n = x.numel(), rows = n / kSquaredNormRow, tail = n % kSquaredNormRow;
  const Tensor flat = reshape(contiguous(x.detach()), {n});
  Tensor parts = empty({rows + (tail > 0 ? 1 : 0)}, DType::F64, x.device());
  if (rows > 0)
    kRows(x.device(), ReduceOp::SumOfSquares, narrow(flat, 0, 0, rows * kSquaredNormRow), rows, kSquaredNormRow,
          narrow(parts, 0, 0, rows), Tensor());
  if (tail > 0)
    kRows(x.device(), ReduceOp::SumOfSquares, narrow(flat, 0, rows * kSquaredNormRow, tail), 1, tail,
          narrow(parts, 0, rows, 1), Tensor());
  return sum(parts);
}

Tensor argmax(const Tensor& x, int64_t axis, bool keepdim) {
  ATTN_CHECK(is_floating(x.dtype()), "argmax", "expects a floating tensor, got ", dtype_name(x.dtype()));
  ReducePlan p = plan_reduction(x, {axis}, keepdim, "argmax");
  Tensor rows = to_rows_layout(x, p, nullptr);
  Tensor values = empty({p.outer}, x.dtype(), x.device());
  Tensor idx = empty({p.outer}, DType::I64, x.device());
  kRows(x.device(), ReduceOp::Max, rows, p.outer, p.n, values, idx);
  return reshape(idx, p.out_shape);
}

}  // namespace attn
