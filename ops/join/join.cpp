#include "attn/ops/join/join.h"

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/engine/copy.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

// A view of `out` (a fresh tensor without history) along axis; not recorded.
Tensor window(const Tensor& out, int64_t axis, int64_t start, int64_t length) {
  Shape shape = out.shape();
  shape[axis] = length;
  return make_view(out, shape, out.strides(), out.offset() + start * out.strides()[axis]);
}

}  // namespace

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  ATTN_CHECK(!xs.empty(), "concat", "needs at least one tensor");
  const Tensor& first = xs[0];
  ATTN_CHECK(first.dim() > 0, "concat", "cannot concatenate 0-d tensors");
  const int64_t a = normalize_axis(axis, first.dim(), "concat");
  Shape shape = first.shape();
  shape[a] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    ATTN_CHECK(x.dtype() == first.dtype(), "concat", "input ", i, " is ", dtype_name(x.dtype()), " but input 0 is ",
               dtype_name(first.dtype()));
    ATTN_CHECK(x.device() == first.device(), "concat", "input ", i, " is on ", device_name(x.device()),
               " but input 0 is on ", device_name(first.device()));
    bool match = x.dim() == first.dim();
    for (int64_t d = 0; match && d < x.dim(); ++d) match = d == a || x.shape()[d] == first.shape()[d];
    ATTN_CHECK(match, "concat", "input ", i, " has shape ", shape_str(x.shape()), " but input 0 has shape ",
               shape_str(first.shape()), "; sizes must match on every axis except axis ", a);
    shape[a] += x.shape()[a];
  }

  Tensor out = empty(shape, first.dtype(), first.device());
  std::vector<int64_t> starts;
  int64_t start = 0;
  for (const Tensor& x : xs) {
    starts.push_back(start);
    copy_into(window(out, a, start, x.shape()[a]), x);
    start += x.shape()[a];
  }

  std::vector<int64_t> lengths;
  for (const Tensor& x : xs) lengths.push_back(x.shape()[a]);
  record(out, "concat", xs, {}, [a, starts, lengths](const Tensor& g, const std::vector<bool>& needs) {
    std::vector<Tensor> grads(starts.size());
    for (size_t i = 0; i < starts.size(); ++i)
      if (needs[i]) grads[i] = narrow(g, a, starts[i], lengths[i]);
    return grads;
  });
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  ATTN_CHECK(!xs.empty(), "stack", "needs at least one tensor");
  const int64_t a = normalize_axis(axis, xs[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  expanded.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    ATTN_CHECK(xs[i].shape() == xs[0].shape(), "stack", "input ", i, " has shape ", shape_str(xs[i].shape()),
               " but input 0 has shape ", shape_str(xs[0].shape()), "; all shapes must be equal");
    expanded.push_back(unsqueeze(xs[i], a));
  }
  return concat(expanded, a);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  ATTN_CHECK(x.dim() > 0, "split", "cannot split a 0-d tensor");
  const int64_t a = normalize_axis(axis, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    ATTN_CHECK(s >= 0, "split", "negative size in ", shape_str(sizes));
    total += s;
  }
  ATTN_CHECK(total == x.shape()[a], "split", "sizes ", shape_str(sizes), " sum to ", total, " but axis ", a,
             " of shape ", shape_str(x.shape()), " has size ", x.shape()[a]);
  std::vector<Tensor> parts;
  parts.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(narrow(x, a, start, s));
    start += s;
  }
  return parts;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t parts, int64_t axis) {
  ATTN_CHECK(x.dim() > 0, "chunk", "cannot chunk a 0-d tensor");
  const int64_t a = normalize_axis(axis, x.dim(), "chunk");
  ATTN_CHECK(parts > 0, "chunk", "number of parts must be positive, got ", parts);
  ATTN_CHECK(x.shape()[a] % parts == 0, "chunk", "axis ", a, " of shape ", shape_str(x.shape()), " (size ",
             x.shape()[a], ") does not divide into ", parts, " equal parts");
  return split(x, std::vector<int64_t>(static_cast<size_t>(parts), x.shape()[a] / parts), a);
}

Tensor pad(const Tensor& x, int64_t axis, int64_t before, int64_t after, double value) {
  ATTN_CHECK(x.dim() > 0, "pad", "cannot pad a 0-d tensor");
  const int64_t a = normalize_axis(axis, x.dim(), "pad");
  ATTN_CHECK(before >= 0 && after >= 0, "pad", "padding must be non-negative, got before ", before, ", after ",
             after);
  Shape shape = x.shape();
  const int64_t length = shape[a];
  shape[a] += before + after;
  Tensor out = full(shape, value, x.dtype(), x.device());
  copy_into(window(out, a, before, length), x);
  record(out, "pad", {x}, {}, [a, before, length](const Tensor& g, const std::vector<bool>&) {
    return std::vector<Tensor>{narrow(g, a, before, length)};
  });
  return out;
}

}  // namespace attn
