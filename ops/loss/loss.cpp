#include "attn/ops/loss/loss.h"

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/loss/loss_kernels.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

using CrossEntropyForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, int64_t, const Tensor&,
                                       const Tensor&, const Tensor&, const Tensor&);
using CrossEntropyBackwardFn = void (*)(const Tensor&, const Tensor&, int64_t, const Tensor&, const Tensor&,
                                        const Tensor&, const Tensor&, double, const Tensor&);
const DeviceKernels<CrossEntropyForwardFn> kCrossEntropyForward{
    "cross_entropy", cross_entropy_forward_cpu, ATTN_CUDA_KERNEL(cross_entropy_forward_cuda)};
const DeviceKernels<CrossEntropyBackwardFn> kCrossEntropyBackward{
    "cross_entropy_backward", cross_entropy_backward_cpu, ATTN_CUDA_KERNEL(cross_entropy_backward_cuda)};

// Every target must name a class or be ignore_index. Checked on the host before
// any kernel runs, so a bad label is an error, never an out-of-bounds read.
void check_targets(const Tensor& target, int64_t classes, int64_t ignore_index) {
  Tensor host;
  {
    NoGrad no_grad;
    host = contiguous(to_device(target.detach(), Device::CPU));
  }
  const int64_t* pt = host.data<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    const int64_t t = pt[i];
    ATTN_CHECK(t == ignore_index || (t >= 0 && t < classes), "cross_entropy", "target value ", t, " at index ", i,
               " is out of range [0, ", classes, ") for C = ", classes, " classes (ignore_index is ", ignore_index,
               ")");
  }
}

void check_same_shape_floats(const char* op, const Tensor& a, const char* a_name, const Tensor& b,
                             const char* b_name) {
  ATTN_CHECK(a.defined() && b.defined(), op, "an input is undefined");
  ATTN_CHECK(is_floating(a.dtype()) && a.dtype() == b.dtype(), op, "expects two float tensors of one dtype, got ",
             a_name, " ", dtype_name(a.dtype()), " and ", b_name, " ", dtype_name(b.dtype()));
  ATTN_CHECK(a.shape() == b.shape(), op, a_name, " shape ", shape_str(a.shape()), " does not match ", b_name,
             " shape ", shape_str(b.shape()), " (shapes must match exactly)");
  ATTN_CHECK(a.device() == b.device(), op, a_name, " on ", device_name(a.device()), ", ", b_name, " on ",
             device_name(b.device()));
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options) {
  const char* op = "cross_entropy";
  ATTN_CHECK(logits.defined() && target.defined(), op, "logits or target is undefined");
  ATTN_CHECK(is_floating(logits.dtype()), op, "logits must be float32 or float64, got ", dtype_name(logits.dtype()),
             " ", shape_str(logits.shape()));
  ATTN_CHECK(logits.dim() >= 1, op, "logits need a class axis, got shape ", shape_str(logits.shape()));
  ATTN_CHECK(target.dtype() == DType::I64, op, "target must be int64 class indices, got ", dtype_name(target.dtype()),
             " ", shape_str(target.shape()));
  const Shape batch_shape(logits.shape().begin(), logits.shape().end() - 1);
  ATTN_CHECK(target.shape() == batch_shape, op, "target shape ", shape_str(target.shape()),
             " must be logits shape ", shape_str(logits.shape()), " without its last axis, i.e. ",
             shape_str(batch_shape));
  ATTN_CHECK(target.device() == logits.device(), op, "target on ", device_name(target.device()), ", logits on ",
             device_name(logits.device()));
  const int64_t classes = logits.shape().back();
  ATTN_CHECK(classes > 0, op, "logits of shape ", shape_str(logits.shape()), " have no classes");
  const int64_t n = logits.numel() / classes;

  Tensor weights;
  if (options.class_weights.defined()) {
    const Tensor& w = options.class_weights;
    ATTN_CHECK(is_floating(w.dtype()), op, "class_weights must be float, got ", dtype_name(w.dtype()));
    ATTN_CHECK(w.shape() == Shape{classes}, op, "class_weights of shape ", shape_str(w.shape()), " for C = ",
               classes, " classes (expected ", shape_str({classes}), ")");
    ATTN_CHECK(w.device() == logits.device(), op, "class_weights on ", device_name(w.device()), ", logits on ",
               device_name(logits.device()));
    NoGrad no_grad;
    weights = contiguous(cast(w.detach(), logits.dtype()));
  }
  check_targets(target, classes, options.ignore_index);

  Tensor x, t;
  {
    NoGrad no_grad;
    x = contiguous(reshape(logits.detach(), {n, classes}));
    t = contiguous(reshape(target.detach(), {n}));
  }
  const DType dtype = logits.dtype();
  const Device device = logits.device();
  Tensor loss = empty({n}, dtype, device);
  Tensor row_max = empty({n}, dtype, device);
  Tensor row_log_sum = empty({n}, dtype, device);
  Tensor example_weight = empty({n}, dtype, device);
  kCrossEntropyForward(device, x, t, weights, options.ignore_index, loss, row_max, row_log_sum, example_weight);

  Tensor out;
  double scale = 1.0;
  {
    NoGrad no_grad;
    switch (options.reduction) {
      case Reduction::None: out = reshape(loss, batch_shape); break;
      case Reduction::Sum: out = sum(loss); break;
      case Reduction::Mean: {
        // Weighted mean; an all-ignored batch has nothing to average: 0, not 0/0.
        const double denominator = n > 0 ? sum(example_weight).item() : 0.0;
        scale = denominator != 0.0 ? 1.0 / denominator : 0.0;
        out = mul_scalar(sum(loss), scale);
        break;
      }
    }
  }
  if (!any_requires_grad({logits})) return out;
  const Shape logits_shape = logits.shape();
  const int64_t ignore_index = options.ignore_index;
  record(out, op, {logits}, {x, t, row_max, row_log_sum, example_weight},
         [x, t, row_max, row_log_sum, example_weight, n, classes, ignore_index, scale, logits_shape](const Tensor& g, const std::vector<bool>&) {
    Tensor g_flat = reshape(contiguous(g), {g.numel()});
    Tensor gi = empty({n, classes}, g.dtype(), g.device());
    kCrossEntropyBackward(g.device(), x, t, ignore_index, row_max, row_log_sum, example_weight, g_flat, scale,
                                          gi);
    return std::vector<Tensor>{reshape(gi, logits_shape)};
  });
  return out;
}

Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction reduction) {
  check_same_shape_floats("mse_loss", pred, "pred", target, "target");
  Tensor d = sub(pred, target);
  Tensor sq = mul(d, d);
  switch (reduction) {
    case Reduction::Mean:
      ATTN_CHECK(sq.numel() > 0, "mse_loss", "mean over zero elements of shape ", shape_str(sq.shape()));
      return mean(sq);
    case Reduction::Sum: return sum(sq);
    case Reduction::None: return sq;
  }
  return sq;
}

Tensor kl_div(const Tensor& log_pred, const Tensor& target, Reduction reduction) {
  check_same_shape_floats("kl_div", log_pred, "log_pred", target, "target");
  // The target is data: detached, so no gradient flows into it.
  Tensor t = target.detach();
  Tensor zero = zeros({}, t.dtype(), t.device());
  Tensor one = ones({}, t.dtype(), t.device());
  Tensor positive = gt(t, zero);
  // log(1) = 0 stands in where t <= 0; `where` then discards those entries (and
  // their gradient) entirely, so log_pred = -inf there cannot leak a NaN.
  Tensor log_t = log(where(positive, t, one));
  Tensor terms = where(positive, mul(t, sub(log_t, log_pred)), zero);
  switch (reduction) {
    case Reduction::Mean: {
      const int64_t batch = terms.dim() > 0 ? terms.shape()[0] : 1;
      ATTN_CHECK(batch > 0, "kl_div", "batchmean over an empty batch, shape ", shape_str(terms.shape()));
      return mul_scalar(sum(terms), 1.0 / static_cast<double>(batch));
    }
    case Reduction::Sum: return sum(terms);
    case Reduction::None: return terms;
  }
  return terms;
}

}  // namespace attn
