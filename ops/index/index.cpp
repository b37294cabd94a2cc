#include "attn/ops/index/index.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/index/index_kernels.h"
#include "attn/ops/join/join.h"

namespace attn {

namespace {

using InRangeFn = bool (*)(const Tensor&, int64_t, int64_t*);
using SelectFn = void (*)(const Tensor&, int64_t, int64_t, int64_t, const Tensor&, const Tensor&);
using IndexAddFn = void (*)(const Tensor&, const Tensor&, int64_t, int64_t, int64_t, const Tensor&);
using EmbeddingFn = void (*)(const Tensor&, const Tensor&, const Tensor&);
using GatherFn = void (*)(const Tensor&, int64_t, const Tensor&, const Tensor&);
using OneHotFn = void (*)(const Tensor&, const Tensor&);
const DeviceKernels<InRangeFn> kInRange{"index_in_range", index_in_range_cpu, ATTN_CUDA_KERNEL(index_in_range_cuda)};
const DeviceKernels<SelectFn> kSelect{"index_select", index_select_cpu, ATTN_CUDA_KERNEL(index_select_cuda)};
const DeviceKernels<IndexAddFn> kIndexAdd{"index_add", index_add_cpu, ATTN_CUDA_KERNEL(index_add_cuda)};
const DeviceKernels<EmbeddingFn> kEmbedding{"embedding", embedding_forward_cpu,
                                            ATTN_CUDA_KERNEL(embedding_forward_cuda)};
const DeviceKernels<EmbeddingFn> kEmbeddingBackward{"embedding_backward", embedding_backward_cpu,
                                                    ATTN_CUDA_KERNEL(embedding_backward_cuda)};
const DeviceKernels<GatherFn> kGather{"gather", gather_cpu, ATTN_CUDA_KERNEL(gather_cuda)};
const DeviceKernels<GatherFn> kScatterAdd{"scatter_add", scatter_add_cpu, ATTN_CUDA_KERNEL(scatter_add_cuda)};
const DeviceKernels<OneHotFn> kOneHot{"one_hot", one_hot_cpu, ATTN_CUDA_KERNEL(one_hot_cuda)};

// The index as a contiguous int64 tensor without history, on `device`.
Tensor checked_index(const Tensor& index, Device device, const char* op, const char* what) {
  ATTN_CHECK(index.defined(), op, what, " is undefined");
  ATTN_CHECK(index.dtype() == DType::I64, op, what, " must be int64, got ", dtype_name(index.dtype()));
  ATTN_CHECK(index.device() == device, op, what, " is on ", device_name(index.device()), " but the input is on ",
             device_name(device));
  return contiguous(index.detach());
}

// Sets *bad to the first value outside [0, limit) and returns true when there is one.
bool out_of_range(const Tensor& index, int64_t limit, int64_t* bad) {
  return !kInRange(index.device(), index, limit, bad);
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

// A 1-D index into axis `axis` of `shape`, range-checked, and the
// [outer, n, inner] view of that shape the select and add kernels take.
struct AxisIndex {
  Tensor idx;
  int64_t axis, outer, n, inner;
};

AxisIndex checked_axis_index(const char* op, const Shape& shape, Device device, int64_t axis, const Tensor& index,
                             const char* operand) {
  const int64_t a = normalize_axis(axis, static_cast<int64_t>(shape.size()), op);
  Tensor idx = checked_index(index, device, op, "index");
  ATTN_CHECK(idx.dim() == 1, op, "index must be 1-D, got shape ", shape_str(idx.shape()));
  int64_t bad = 0;
  ATTN_CHECK(!out_of_range(idx, shape[a], &bad), op, "index ", bad, " is out of range for axis ", a, " of size ",
             shape[a], " (", operand, " shape ", shape_str(shape), ")");
  return {idx, a, product(shape, 0, static_cast<size_t>(a)), shape[a],
          product(shape, static_cast<size_t>(a) + 1, shape.size())};
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  const AxisIndex ax = checked_axis_index("index_select", x.shape(), x.device(), axis, index, "input");
  const Shape in_shape = x.shape();
  Shape out_shape = in_shape;
  out_shape[ax.axis] = ax.idx.numel();
  Tensor out = empty(out_shape, x.dtype(), x.device());
  kSelect(x.device(), contiguous(x.detach()), ax.outer, ax.n, ax.inner, ax.idx, out);

  record(out, "index_select", {x}, {ax.idx}, [in_shape, ax](const Tensor& g, const std::vector<bool>&) {
    Tensor grad_in = zeros(in_shape, g.dtype(), g.device());
    kIndexAdd(g.device(), contiguous(g), ax.idx, ax.outer, ax.n, ax.inner, grad_in);
    return std::vector<Tensor>{grad_in};
  });
  return out;
}

Tensor index_add(const Tensor& base, int64_t axis, const Tensor& index, const Tensor& src) {
  const AxisIndex ax = checked_axis_index("index_add", base.shape(), base.device(), axis, index, "base");
  ATTN_CHECK(is_floating(base.dtype()) && src.dtype() == base.dtype() && src.device() == base.device(), "index_add",
             "base and src must share a floating dtype and a device, got ", dtype_name(base.dtype()), " on ",
             device_name(base.device()), " and ", dtype_name(src.dtype()), " on ", device_name(src.device()));
  Shape src_shape = base.shape();
  src_shape[ax.axis] = ax.idx.numel();
  ATTN_CHECK(src.shape() == src_shape, "index_add", "src must have shape ", shape_str(src_shape), " (base ",
             shape_str(base.shape()), " with ", ax.idx.numel(), " entries along axis ", ax.axis, "), got ",
             shape_str(src.shape()));
  Tensor out = empty(base.shape(), base.dtype(), base.device());
  copy_into(out, base.detach());
  kIndexAdd(base.device(), contiguous(src.detach()), ax.idx, ax.outer, ax.n, ax.inner, out);

  record(out, "index_add", {base, src}, {ax.idx}, [src_shape, ax](const Tensor& g, const std::vector<bool>& needs) {
    Tensor grad_src;
    if (needs[1]) {
      grad_src = empty(src_shape, g.dtype(), g.device());
      kSelect(g.device(), contiguous(g), ax.outer, ax.n, ax.inner, ax.idx, grad_src);
    }
    return std::vector<Tensor>{needs[0] ? g : Tensor(), grad_src};
  });
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  ATTN_CHECK(weight.dim() == 2, "embedding", "weight must be 2-D [rows, dim], got shape ", shape_str(weight.shape()));
  ATTN_CHECK(is_floating(weight.dtype()), "embedding", "weight must be float32 or float64, got ",
             dtype_name(weight.dtype()));
  Tensor idx = checked_index(ids, weight.device(), "embedding", "ids");
  const int64_t rows = weight.shape()[0];
  int64_t bad = 0;
  ATTN_CHECK(!out_of_range(idx, rows, &bad), "embedding", "id ", bad, " is out of range for ", rows,
             " rows (weight shape ", shape_str(weight.shape()), ")");

  Shape out_shape = idx.shape();
  out_shape.push_back(weight.shape()[1]);
  Tensor out = empty(out_shape, weight.dtype(), weight.device());
  kEmbedding(weight.device(), contiguous(weight.detach()), idx, out);

  const Shape weight_shape = weight.shape();
  record(out, "embedding", {weight}, {idx}, [idx, weight_shape](const Tensor& g, const std::vector<bool>&) {
    Tensor grad_weight = zeros(weight_shape, g.dtype(), g.device());
    kEmbeddingBackward(g.device(), contiguous(g), idx, grad_weight);
    return std::vector<Tensor>{grad_weight};
  });
  return out;
}

Tensor gather(const Tensor& x, int64_t axis, const Tensor& index) {
  const int64_t a = normalize_axis(axis, x.dim(), "gather");
  Tensor idx = checked_index(index, x.device(), "gather", "index");
  bool fits = idx.dim() == x.dim();
  for (int64_t d = 0; fits && d < x.dim(); ++d) fits = d == a || idx.shape()[d] <= x.shape()[d];
  ATTN_CHECK(fits, "gather", "index of shape ", shape_str(idx.shape()), " does not fit input of shape ",
             shape_str(x.shape()), " (same rank, sizes no larger off axis ", a, ")");
  int64_t bad = 0;
  ATTN_CHECK(!out_of_range(idx, x.shape()[a], &bad), "gather", "index ", bad, " is out of range for axis ", a,
             " of size ", x.shape()[a], " (input shape ", shape_str(x.shape()), ")");

  Tensor out = empty(idx.shape(), x.dtype(), x.device());
  kGather(x.device(), x, a, idx, out);

  const Shape in_shape = x.shape();
  record(out, "gather", {x}, {idx}, [a, idx, in_shape](const Tensor& g, const std::vector<bool>&) {
    return std::vector<Tensor>{scatter_add(zeros(in_shape, g.dtype(), g.device()), a, idx, g)};
  });
  return out;
}

Tensor scatter_add(const Tensor& base, int64_t axis, const Tensor& index, const Tensor& src) {
  const int64_t a = normalize_axis(axis, base.dim(), "scatter_add");
  ATTN_CHECK(is_floating(base.dtype()), "scatter_add", "expects float32 or float64, got ", dtype_name(base.dtype()));
  ATTN_CHECK(src.dtype() == base.dtype(), "scatter_add", "src is ", dtype_name(src.dtype()), " but base is ",
             dtype_name(base.dtype()));
  ATTN_CHECK(src.device() == base.device(), "scatter_add", "src is on ", device_name(src.device()), " but base is on ",
             device_name(base.device()));
  Tensor idx = checked_index(index, base.device(), "scatter_add", "index");
  bool fits = idx.dim() == base.dim() && src.dim() == base.dim();
  for (int64_t d = 0; fits && d < base.dim(); ++d)
    fits = idx.shape()[d] <= src.shape()[d] && (d == a || idx.shape()[d] <= base.shape()[d]);
  ATTN_CHECK(fits, "scatter_add", "index of shape ", shape_str(idx.shape()), " does not fit base of shape ",
             shape_str(base.shape()), " and src of shape ", shape_str(src.shape()),
             " (same rank, sizes no larger than src, nor than base off axis ", a, ")");
  int64_t bad = 0;
  ATTN_CHECK(!out_of_range(idx, base.shape()[a], &bad), "scatter_add", "index ", bad, " is out of range for axis ", a,
             " of size ", base.shape()[a], " (base shape ", shape_str(base.shape()), ")");

  Tensor out = empty(base.shape(), base.dtype(), base.device());
  copy_into(out, base);
  kScatterAdd(base.device(), out, a, idx, src);

  const Shape src_shape = src.shape();
  record(out, "scatter_add", {base, src}, {idx}, [a, idx, src_shape](const Tensor& g, const std::vector<bool>& needs) {
    std::vector<Tensor> grads(2);
    if (needs[0]) grads[0] = g;
    if (needs[1]) {
      // src elements the index does not reach get no gradient: pad with zeros.
      Tensor gs = gather(g, a, idx);
      for (int64_t d = 0; d < gs.dim(); ++d)
        if (gs.shape()[d] < src_shape[d]) gs = pad(gs, d, 0, src_shape[d] - gs.shape()[d]);
      grads[1] = gs;
    }
    return grads;
  });
  return out;
}

Tensor one_hot(const Tensor& index, int64_t num_classes, DType dtype) {
  ATTN_CHECK(num_classes > 0, "one_hot", "num_classes must be positive, got ", num_classes);
  ATTN_CHECK(index.defined(), "one_hot", "index is undefined");
  Tensor idx = checked_index(index, index.device(), "one_hot", "index");
  int64_t bad = 0;
  ATTN_CHECK(!out_of_range(idx, num_classes, &bad), "one_hot", "index ", bad, " is out of range for ", num_classes,
             " classes");
  Shape out_shape = idx.shape();
  out_shape.push_back(num_classes);
  Tensor out = zeros(out_shape, dtype, idx.device());
  kOneHot(idx.device(), idx, out);
  return out;
}

}  // namespace attn
