#include "attn/ops/softmax/softmax.h"

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/copy.h"
#include "attn/ops/softmax/softmax_kernels.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

using ForwardFn = void (*)(bool, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using BackwardKernelFn = void (*)(bool, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{"softmax", softmax_forward_cpu, ATTN_CUDA_KERNEL(softmax_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"softmax_backward", softmax_backward_cpu,
                                                ATTN_CUDA_KERNEL(softmax_backward_cuda)};
using ColumnsForwardFn = void (*)(const Tensor&, const Tensor&, int64_t, int64_t, int64_t, const Tensor&);
using ColumnsBackwardFn = void (*)(const Tensor&, const Tensor&, int64_t, int64_t, int64_t, const Tensor&);
const DeviceKernels<ColumnsForwardFn> kColumnsForward{"softmax", softmax_columns_forward_cpu,
                                                      ATTN_CUDA_KERNEL(softmax_columns_forward_cuda)};
const DeviceKernels<ColumnsBackwardFn> kColumnsBackward{"softmax_backward", softmax_columns_backward_cpu,
                                                        ATTN_CUDA_KERNEL(softmax_columns_backward_cuda)};

// The kernels want the softmax axis last and every operand contiguous.
struct RowsLayout {
  bool identity = true;         // axis already last: no permutation
  std::vector<int64_t> order;   // x axes -> rows layout
  std::vector<int64_t> inverse; // rows layout -> x axes
};

RowsLayout plan_rows(int64_t rank, int64_t axis) {
  RowsLayout p;
  p.identity = axis == rank - 1;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) p.order.push_back(i);
  p.order.push_back(axis);
  p.inverse.assign(rank, 0);
  for (int64_t i = 0; i < rank; ++i) p.inverse[p.order[i]] = i;
  return p;
}

// Data-only (no history) copy of t in the rows layout.
Tensor to_rows(const Tensor& t, const RowsLayout& p) {
  NoGrad no_grad;
  return contiguous(p.identity ? t.detach() : permute(t.detach(), p.order));
}

void check_mask(const char* name, const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(mask.dtype() == DType::U8, name, "mask must be uint8 (nonzero = valid), got ", dtype_name(mask.dtype()),
             " ", shape_str(mask.shape()));
  ATTN_CHECK(mask.device() == x.device(), name, "mask on ", device_name(mask.device()), ", input on ",
             device_name(x.device()));
  ATTN_CHECK(broadcast_shapes(x.shape(), mask.shape(), name) == x.shape(), name, "mask of shape ",
             shape_str(mask.shape()), " does not broadcast to input shape ", shape_str(x.shape()));
}

// softmax (not log_softmax) over an axis that is not last: x is read as
// [outer, n, inner] in place of a permuted copy, and the output keeps x's
// layout, so the ops after it see a contiguous tensor. A mask broadcast over
// the axes after `axis` (source2token's [B, n, 1]) is passed as [outer, n].
Tensor softmax_columns(const Tensor& x, int64_t ax, const Tensor& mask) {
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < ax; ++i) outer *= shape[i];
  for (int64_t i = ax + 1; i < x.dim(); ++i) inner *= shape[i];
  const int64_t n = shape[ax];
  Tensor xc, mask_c;
  {
    NoGrad no_grad;
    xc = contiguous(x.detach());
    if (mask.defined()) {
      check_mask("softmax", x, mask);
      Shape per_row = shape;
      for (int64_t i = ax + 1; i < x.dim(); ++i) per_row[i] = 1;
      const bool broadcast_over_inner = broadcast_shapes(per_row, mask.shape(), "softmax") == per_row;
      mask_c = contiguous(expand(mask, broadcast_over_inner ? per_row : shape));
    }
  }
  Tensor out = empty(shape, x.dtype(), x.device());
  kColumnsForward(x.device(), xc, mask_c, outer, n, inner, out);
  if (!any_requires_grad({x})) return out;
  Tensor y = out.detach();
  record(out, "softmax", {x}, {y}, [y, outer, n, inner](const Tensor& g, const std::vector<bool>&) {
    Tensor gc = contiguous(g);
    Tensor gi = empty(y.shape(), y.dtype(), y.device());
    kColumnsBackward(y.device(), y, gc, outer, n, inner, gi);
    return std::vector<Tensor>{gi};
  });
  return out;
}

Tensor softmax_impl(bool log, const Tensor& x, int64_t axis, const Tensor& mask) {
  const char* name = log ? "log_softmax" : "softmax";
  ATTN_CHECK(x.defined(), name, "input is undefined");
  ATTN_CHECK(is_floating(x.dtype()), name, "expects float32 or float64, got ", dtype_name(x.dtype()), " ",
             shape_str(x.shape()));
  ATTN_CHECK(x.dim() >= 1, name, "needs a tensor with at least one axis, got shape ", shape_str(x.shape()));
  const int64_t ax = normalize_axis(axis, x.dim(), name);
  if (!log && ax != x.dim() - 1) return softmax_columns(x, ax, mask);
  const RowsLayout layout = plan_rows(x.dim(), ax);

  Tensor mask_rows;
  if (mask.defined()) {
    check_mask(name, x, mask);
    NoGrad no_grad;
    mask_rows = to_rows(expand(mask, x.shape()), layout);
  }

  Tensor x_rows = to_rows(x, layout);
  Tensor out_rows = empty(x_rows.shape(), x.dtype(), x.device());
  // Only log_softmax's backward needs to know which rows were empty: softmax
  // leaves zeros there, which already zero its gradient.
  Tensor row_empty;
  const int64_t n = x.shape()[ax];
  if (log) row_empty = empty({n > 0 ? x.numel() / n : 0}, DType::U8, x.device());
  kForward(x.device(), log, x_rows, mask_rows, out_rows, row_empty);

  Tensor out;
  {
    NoGrad no_grad;
    out = layout.identity ? out_rows : permute(out_rows, layout.inverse);
  }
  if (!any_requires_grad({x})) return out;
  Tensor y = out_rows.detach();
  Tensor saved_mask = log ? mask_rows : Tensor();
  record(out, name, {x}, {y, saved_mask, row_empty}, [log, layout, y, saved_mask, row_empty](const Tensor& g, const std::vector<bool>&) {
    Tensor g_rows = contiguous(layout.identity ? g : permute(g, layout.order));
    Tensor gi = empty(y.shape(), y.dtype(), y.device());
    kBackward(y.device(), log, y, g_rows, saved_mask, row_empty, gi);
    return std::vector<Tensor>{layout.identity ? gi : permute(gi, layout.inverse)};
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis, const Tensor& mask) { return softmax_impl(false, x, axis, mask); }

Tensor log_softmax(const Tensor& x, int64_t axis, const Tensor& mask) { return softmax_impl(true, x, axis, mask); }

}  // namespace attn
