#include "attn/ops/factorized_attention/factorized_attention.h"

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/factorized_attention/factorized_attention_kernels.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "factorized_attention";

using PairWeightsFn = void (*)(const Tensor&, const Tensor&, const Tensor&, bool, double, const Tensor&);
using KeyWeightsFn = void (*)(const Tensor&, const Tensor&, const Tensor&, bool, const Tensor&);
using OutputFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using OutputBackwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using PairBackwardFn = void (*)(const Tensor&, const Tensor&, bool, double);
using KeyBackwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, const Tensor&, bool,
                               const Tensor&);
const DeviceKernels<PairWeightsFn> kPairWeights{"factorized_pair_weights", factorized_pair_weights_cpu,
                                                ATTN_CUDA_KERNEL(factorized_pair_weights_cuda)};
const DeviceKernels<KeyWeightsFn> kKeyWeights{"factorized_key_weights", factorized_key_weights_cpu,
                                              ATTN_CUDA_KERNEL(factorized_key_weights_cuda)};
const DeviceKernels<OutputFn> kOutput{"factorized_output", factorized_output_cpu,
                                      ATTN_CUDA_KERNEL(factorized_output_cuda)};
const DeviceKernels<OutputBackwardFn> kOutputBackward{"factorized_output_backward", factorized_output_backward_cpu,
                                                      ATTN_CUDA_KERNEL(factorized_output_backward_cuda)};
const DeviceKernels<PairBackwardFn> kPairBackward{"factorized_pair_backward", factorized_pair_backward_cpu,
                                                  ATTN_CUDA_KERNEL(factorized_pair_backward_cuda)};
const DeviceKernels<KeyBackwardFn> kKeyBackward{"factorized_key_backward", factorized_key_backward_cpu,
                                                ATTN_CUDA_KERNEL(factorized_key_backward_cuda)};

void check_operand(const char* which, const Tensor& t, const Tensor& q) {
  ATTN_CHECK(t.defined() && t.shape() == q.shape(), kOp, which, " must be [B, h, n, d] = ", shape_str(q.shape()),
             ", got ", t.defined() ? shape_str(t.shape()) : std::string("undefined"));
  ATTN_CHECK(t.dtype() == q.dtype() && t.device() == q.device(), kOp, which, " is ", dtype_name(t.dtype()), " on ",
             device_name(t.device()), ", q is ", dtype_name(q.dtype()), " on ", device_name(q.device()));
}

// t itself when its features are unit-strided (the kernels take any row
// strides), else a contiguous copy.
Tensor unit_feature_stride(const Tensor& t) { return t.strides()[3] == 1 ? t : contiguous(t); }

}  // namespace

FactorizedAttention factorized_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& s,
                                         const Tensor& positional, const Tensor& valid, bool sigmoid_t,
                                         bool sigmoid_s) {
  ATTN_CHECK(q.defined() && q.dim() == 4, kOp, "q must be [B, h, n, d], got ",
             q.defined() ? shape_str(q.shape()) : std::string("undefined"));
  ATTN_CHECK(is_floating(q.dtype()), kOp, "expects float32 or float64, got ", dtype_name(q.dtype()));
  check_operand("k", k, q);
  check_operand("v", v, q);
  check_operand("s", s, q);
  const int64_t B = q.size(0), h = q.size(1), n = q.size(2), d = q.size(3);
  ATTN_CHECK(positional.defined() && positional.dtype() == DType::U8 && positional.shape() == Shape({h, n, n}), kOp,
             "positional mask must be uint8 [h, n, n] = ", shape_str({h, n, n}));
  ATTN_CHECK(valid.defined() && valid.dtype() == DType::U8 && valid.shape() == Shape({B, n}), kOp,
             "valid must be uint8 [B, n] = ", shape_str({B, n}));
  ATTN_CHECK(positional.device() == q.device() && valid.device() == q.device(), kOp, "masks must be on ",
             device_name(q.device()));

  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const Tensor qd = q.detach(), kd = k.detach(), vd = unit_feature_stride(v.detach()), pos = contiguous(positional),
               ok = contiguous(valid);
  Tensor e, packed, dn, has_key, out;
  FactorizedAttention result;
  {
    NoGrad no_grad;
    // Steps 3 and 5: E from the token2token scores, in place.
    e = matmul(qd, transpose(kd, -1, -2));
    has_key = empty({B, h, n}, DType::U8, q.device());
    kPairWeights(q.device(), e, pos, ok, sigmoid_t, scale, has_key);
    // Step 6: [F | v F], then Step 7's denominator and numerator in one GEMM.
    packed = empty({B, h, n, 2 * d}, q.dtype(), q.device());
    kKeyWeights(q.device(), contiguous(s.detach()), vd, ok, sigmoid_s, packed);
    dn = matmul(e, packed);
    out = empty({B, h, n, d}, q.dtype(), q.device());
    Tensor unsafe = empty({B, h, n}, DType::U8, q.device());
    kOutput(q.device(), dn, has_key, out, unsafe);
    result.exact = sum(cast(unsafe, DType::F64)).to(Device::CPU).item() == 0;
  }
  result.out = out;
  if (!result.exact || !any_requires_grad({q, k, v, s})) return result;

  const Tensor saved_out = out.detach();
  record(out, kOp, {q, k, v, s}, {qd, kd, vd, ok, e, packed, dn, saved_out},
         [qd, kd, vd, ok, e, packed, dn, saved_out, sigmoid_t, sigmoid_s, scale](const Tensor& g,
                                                                                const std::vector<bool>& needs) {
           const Device dev = g.device();
           Tensor packed_grad = empty(packed.shape(), packed.dtype(), dev);
           kOutputBackward(dev, contiguous(g), saved_out, dn, packed_grad);
           Tensor gq, gk, gv, gs;
           if (needs[0] || needs[1]) {
             Tensor gr = matmul(packed_grad, transpose(packed, -1, -2));  // grad E
             kPairBackward(dev, gr, e, sigmoid_t, scale);
             // Padded rows of q and k are selected out: gr is 0 against them, and 0 * NaN is NaN.
             const Tensor padded = unsqueeze(unsqueeze(eq(ok, zeros({}, DType::U8, dev)), 1), -1);
             if (needs[0]) gq = matmul(gr, masked_fill(kd, padded, 0.0));
             if (needs[1]) gk = matmul(transpose(gr, -1, -2), masked_fill(qd, padded, 0.0));
           }
           if (needs[2] || needs[3]) {
             const Tensor y = matmul(transpose(e, -1, -2), packed_grad);  // [grad F | grad vF]
             // v's gradient goes into the one already pending for it where
             // the engine offers that (MTSA's v feeds its gate and three
             // projections too): no second buffer and no pass to add them.
             const Tensor pending = needs[2] ? pending_gradient(2) : Tensor();
             const bool accumulate = pending.defined() && pending.shape() == vd.shape() &&
                                     pending.dtype() == vd.dtype() && pending.device() == dev;
             gv = accumulate ? pending : empty(vd.shape(), vd.dtype(), dev);
             gs = empty(vd.shape(), vd.dtype(), dev);
             kKeyBackward(dev, y, packed, vd, ok, sigmoid_s, gv, accumulate, gs);
           }
           return std::vector<Tensor>{gq, gk, needs[2] ? gv : Tensor(), needs[3] ? gs : Tensor()};
         });
  return result;
}

}  // namespace attn
