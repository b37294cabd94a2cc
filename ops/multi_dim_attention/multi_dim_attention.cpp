#include "attn/ops/multi_dim_attention/multi_dim_attention.h"

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/copy.h"
#include "attn/ops/multi_dim_attention/multi_dim_attention_kernels.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "multi_dim_attention";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double, const Tensor&,
                           const Tensor&);
using BackwardKernelFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, double,
                                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, multi_dim_attention_forward_cpu,
                                        ATTN_CUDA_KERNEL(multi_dim_attention_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"multi_dim_attention_backward", multi_dim_attention_backward_cpu,
                                                ATTN_CUDA_KERNEL(multi_dim_attention_backward_cuda)};

void check_operand(const char* which, const Tensor& t, const Tensor& query) {
  ATTN_CHECK(t.defined(), kOp, which, " is undefined");
  ATTN_CHECK(t.dim() == 3, kOp, which, " must be [B, n, d], got shape ", shape_str(t.shape()));
  ATTN_CHECK(t.dtype() == query.dtype(), kOp, which, " is ", dtype_name(t.dtype()), " but query is ",
             dtype_name(query.dtype()));
  ATTN_CHECK(t.device() == query.device(), kOp, which, " on ", device_name(t.device()), ", query on ",
             device_name(query.device()));
}

// The kernels read contiguous, history-free operands.
Tensor plain(const Tensor& t) { return contiguous(t.detach()); }

}  // namespace

Tensor multi_dim_attention(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask,
                           double scale_c) {
  ATTN_CHECK(query.defined(), kOp, "query is undefined");
  ATTN_CHECK(is_floating(query.dtype()), kOp, "expects float32 or float64, got ", dtype_name(query.dtype()));
  check_operand("query", query, query);
  check_operand("key", key, query);
  check_operand("values", values, query);
  ATTN_CHECK(std::isfinite(scale_c) && scale_c > 0, kOp, "scale c must be positive and finite, got ", scale_c);
  const int64_t B = query.size(0), nq = query.size(1), nk = key.size(1), d = query.size(2);
  ATTN_CHECK(key.size(0) == B && key.size(2) == d, kOp, "key of shape ", shape_str(key.shape()),
             " does not match query of shape ", shape_str(query.shape()), " (same batch and features expected)");
  ATTN_CHECK(values.shape() == key.shape(), kOp, "values of shape ", shape_str(values.shape()),
             " must have key's shape ", shape_str(key.shape()));
  ATTN_CHECK(mask.defined() && mask.dtype() == DType::U8, kOp, "mask must be a uint8 tensor (nonzero = may attend)",
             mask.defined() ? std::string(", got ") + dtype_name(mask.dtype()) : std::string());
  ATTN_CHECK(mask.device() == query.device(), kOp, "mask on ", device_name(mask.device()), ", query on ",
             device_name(query.device()));
  const Shape pairs{B, nq, nk};
  ATTN_CHECK(broadcasts_to(mask.shape(), pairs), kOp, "mask of shape ", shape_str(mask.shape()),
             " does not broadcast to [B, nq, nk] = ", shape_str(pairs));

  Tensor q = plain(query), k = plain(key), v = plain(values);
  Tensor m;
  {
    NoGrad no_grad;
    m = contiguous(expand(mask, pairs));
  }
  Tensor out = empty({B, nq, d}, query.dtype(), query.device());
  Tensor log_norm = empty({B, nq, d}, query.dtype(), query.device());
  kForward(query.device(), q, k, v, m, scale_c, out, log_norm);
  if (!any_requires_grad({query, key, values})) return out;

  Tensor saved_out = out.detach();
  record(out, kOp, {query, key, values}, {q, k, v, m, saved_out, log_norm},
         [q, k, v, m, scale_c, saved_out, log_norm](const Tensor& g, const std::vector<bool>&) {
           Tensor gq = empty(q.shape(), q.dtype(), q.device());
           Tensor gk = empty(k.shape(), k.dtype(), k.device());
           Tensor gv = empty(v.shape(), v.dtype(), v.device());
           kBackward(g.device(), contiguous(g), q, k, v, m, scale_c, saved_out, log_norm, gq, gk, gv);
           return std::vector<Tensor>{gq, gk, gv};
         });
  return out;
}

}  // namespace attn
