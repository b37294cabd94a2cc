#include "attn/ops/view/view.h"

#include <numeric>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {

namespace {
std::vector<Tensor> one(Tensor g) { return {std::move(g)}; }
}  // namespace

Tensor reshape(const Tensor& t, const Shape& shape) {
  Shape target = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      ATTN_CHECK(infer < 0, "reshape", "more than one -1 in ", shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      ATTN_CHECK(target[i] >= 0, "reshape", "negative size in ", shape_str(shape));
      known *= target[i];
    }
  }
  if (infer >= 0) {
    ATTN_CHECK(known > 0 && t.numel() % known == 0, "reshape", "cannot reshape ", shape_str(t.shape()), " to ",
               shape_str(shape));
    target[infer] = t.numel() / known;
  }
  ATTN_CHECK(numel_of(target) == t.numel(), "reshape", "cannot reshape ", shape_str(t.shape()), " (", t.numel(),
             " elements) to ", shape_str(shape));
  Tensor base = contiguous(t);
  Tensor out = make_view(base, target, contiguous_strides(target), base.offset());
  Shape original = t.shape();
  record(out, "reshape", {base}, {}, [original](const Tensor& g, const std::vector<bool>&) {
    return one(reshape(g, original));
  });
  return out;
}

Tensor flatten(const Tensor& t, int64_t start_axis, int64_t end_axis) {
  if (t.dim() == 0) return reshape(t, {1});
  int64_t s = normalize_axis(start_axis, t.dim(), "flatten");
  int64_t e = normalize_axis(end_axis, t.dim(), "flatten");
  ATTN_CHECK(s <= e, "flatten", "start axis ", start_axis, " is after end axis ", end_axis);
  Shape shape(t.shape().begin(), t.shape().begin() + s);
  int64_t merged = 1;
  for (int64_t i = s; i <= e; ++i) merged *= t.shape()[i];
  shape.push_back(merged);
  shape.insert(shape.end(), t.shape().begin() + e + 1, t.shape().end());
  return reshape(t, shape);
}

Tensor permute(const Tensor& t, const std::vector<int64_t>& order) {
  int64_t rank = t.dim();
  ATTN_CHECK(static_cast<int64_t>(order.size()) == rank, "permute", "order of length ", order.size(),
             " for tensor of shape ", shape_str(t.shape()));
  std::vector<int64_t> axes(rank), inverse(rank, -1);
  Shape shape(rank);
  std::vector<int64_t> strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t a = normalize_axis(order[i], rank, "permute");
    ATTN_CHECK(inverse[a] < 0, "permute", "axis ", a, " repeated in order ", shape_str(order));
    inverse[a] = i;
    axes[i] = a;
    shape[i] = t.shape()[a];
    strides[i] = t.strides()[a];
  }
  Tensor out = make_view(t, shape, strides, t.offset());
  record(out, "permute", {t}, {}, [inverse](const Tensor& g, const std::vector<bool>&) { return one(permute(g, inverse)); });
  return out;
}

Tensor transpose(const Tensor& t, int64_t axis0, int64_t axis1) {
  int64_t a = normalize_axis(axis0, t.dim(), "transpose");
  int64_t b = normalize_axis(axis1, t.dim(), "transpose");
  std::vector<int64_t> order(t.dim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[a], order[b]);
  return permute(t, order);
}

Tensor expand(const Tensor& t, const Shape& shape) {
  ATTN_CHECK(shape.size() >= t.shape().size(), "expand", "cannot expand ", shape_str(t.shape()), " to fewer axes ",
             shape_str(shape));
  Shape target = shape;
  size_t lead = shape.size() - t.shape().size();
  for (size_t i = 0; i < t.shape().size(); ++i) {
    if (target[lead + i] == -1) target[lead + i] = t.shape()[i];
    ATTN_CHECK(t.shape()[i] == target[lead + i] || t.shape()[i] == 1, "expand", "cannot expand ",
               shape_str(t.shape()), " to ", shape_str(shape));
  }
  if (target == t.shape()) return t;
  Tensor out = make_view(t, target, broadcast_strides(t, target), t.offset());
  Shape original = t.shape();
  record(out, "expand", {t}, {}, [original](const Tensor& g, const std::vector<bool>&) { return one(sum_to(g, original)); });
  return out;
}

Tensor unsqueeze(const Tensor& t, int64_t axis) {
  int64_t a = normalize_axis(axis, t.dim() + 1, "unsqueeze");
  Shape shape = t.shape();
  std::vector<int64_t> strides = t.strides();
  int64_t stride = a < t.dim() ? t.strides()[a] * t.shape()[a] : 1;
  shape.insert(shape.begin() + a, 1);
  strides.insert(strides.begin() + a, stride);
  Tensor out = make_view(t, shape, strides, t.offset());
  record(out, "unsqueeze", {t}, {}, [a](const Tensor& g, const std::vector<bool>&) { return one(squeeze(g, a)); });
  return out;
}

Tensor squeeze(const Tensor& t, int64_t axis) {
  int64_t a = normalize_axis(axis, t.dim(), "squeeze");
  ATTN_CHECK(t.shape()[a] == 1, "squeeze", "axis ", axis, " of shape ", shape_str(t.shape()), " has size ",
             t.shape()[a], ", not 1");
  Shape shape = t.shape();
  std::vector<int64_t> strides = t.strides();
  shape.erase(shape.begin() + a);
  strides.erase(strides.begin() + a);
  Tensor out = make_view(t, shape, strides, t.offset());
  record(out, "squeeze", {t}, {}, [a](const Tensor& g, const std::vector<bool>&) { return one(unsqueeze(g, a)); });
  return out;
}

Tensor slice(const Tensor& t, int64_t axis, int64_t start, int64_t end, int64_t step) {
  int64_t a = normalize_axis(axis, t.dim(), "slice");
  int64_t n = t.shape()[a];
  ATTN_CHECK(step > 0, "slice", "step must be positive, got ", step);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::max<int64_t>(0, std::min(start, n));
  end = std::max<int64_t>(start, std::min(end, n));
  Shape shape = t.shape();
  std::vector<int64_t> strides = t.strides();
  shape[a] = (end - start + step - 1) / step;
  strides[a] *= step;
  Tensor out = make_view(t, shape, strides, t.offset() + start * t.strides()[a]);
  Shape original = t.shape();
  record(out, "slice", {t}, {}, [original, a, start, end, step](const Tensor& g, const std::vector<bool>&) {
    Tensor full_grad = zeros(original, g.dtype(), g.device());
    copy_into(slice(full_grad, a, start, end, step), g);
    return one(full_grad);
  });
  return out;
}

Tensor narrow(const Tensor& t, int64_t axis, int64_t start, int64_t length) {
  int64_t a = normalize_axis(axis, t.dim(), "narrow");
  ATTN_CHECK(start >= 0 && length >= 0 && start + length <= t.shape()[a], "narrow", "range [", start, ", ",
             start + length, ") is outside axis ", a, " of shape ", shape_str(t.shape()));
  return slice(t, a, start, start + length, 1);
}

}  // namespace attn
