#include "attn/ops/softmax.h"

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/copy.h"
#include "attn/ops/softmax_kernels.h"
#include "attn/ops/view.h"

namespace attn {

namespace {

using ForwardFn = void (*)(bool, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using BackwardKernelFn = void (*)(bool, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{"softmax", softmax_forward_cpu, ATTN_CUDA_KERNEL(softmax_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"softmax_backward", softmax_backward_cpu,
                                                ATTN_CUDA_KERNEL(softmax_backward_cuda)};

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

Tensor softmax_impl(bool log, const Tensor& x, int64_t axis, const Tensor& mask) {
  const char* name = log ? "log_softmax" : "softmax";
  ATTN_CHECK(x.defined(), name, "input is undefined");
  ATTN_CHECK(is_floating(x.dtype()), name, "expects float32 or float64, got ", dtype_name(x.dtype()), " ",
             shape_str(x.shape()));
  ATTN_CHECK(x.dim() >= 1, name, "needs a tensor with at least one axis, got shape ", shape_str(x.shape()));
  const int64_t ax = normalize_axis(axis, x.dim(), name);
  const RowsLayout layout = plan_rows(x.dim(), ax);

  Tensor mask_rows;
  if (mask.defined()) {
    ATTN_CHECK(mask.dtype() == DType::U8, name, "mask must be uint8 (nonzero = valid), got ",
               dtype_name(mask.dtype()), " ", shape_str(mask.shape()));
    ATTN_CHECK(mask.device() == x.device(), name, "mask on ", device_name(mask.device()), ", input on ",
               device_name(x.device()));
    ATTN_CHECK(broadcast_shapes(x.shape(), mask.shape(), name) == x.shape(), name, "mask of shape ",
               shape_str(mask.shape()), " does not broadcast to input shape ", shape_str(x.shape()));
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
  record(out, name, {x}, [log, layout, y, saved_mask, row_empty](const Tensor& g, const std::vector<bool>&) {
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
