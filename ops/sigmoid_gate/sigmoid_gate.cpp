#include "attn/ops/sigmoid_gate/sigmoid_gate.h"

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate_kernels.h"

namespace attn {

namespace {

constexpr const char* kOp = "sigmoid_gate";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using BackwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                            const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, sigmoid_gate_cpu, ATTN_CUDA_KERNEL(sigmoid_gate_cuda)};
const DeviceKernels<BackwardFn> kBackward{"sigmoid_gate_backward", sigmoid_gate_backward_cpu,
                                          ATTN_CUDA_KERNEL(sigmoid_gate_backward_cuda)};

void check_like(const char* which, const Tensor& t, const Tensor& z) {
  ATTN_CHECK(t.defined(), kOp, which, " is undefined");
  ATTN_CHECK(t.dtype() == z.dtype() && t.device() == z.device(), kOp, which, " is ", dtype_name(t.dtype()), " on ",
             device_name(t.device()), ", z is ", dtype_name(z.dtype()), " on ", device_name(z.device()));
}

}  // namespace

Tensor sigmoid_gate(const Tensor& z, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(z.defined() && is_floating(z.dtype()), kOp, "z must be a float32 or float64 tensor");
  check_like("a", a, z);
  check_like("b", b, z);
  const Shape shape = broadcast_shapes(broadcast_shapes(z.shape(), a.shape(), kOp), b.shape(), kOp);
  // out is stored like a when a has its shape (MTSA gates heads in the
  // token-major order of its split value heads, so merging the gate's heads
  // back is a view, not a copy).
  Tensor out = a.shape() == shape ? empty_in_layout_of(a, z.dtype(), z.device()) : empty(shape, z.dtype(), z.device());
  kForward(z.device(), z, a, b, out);
  if (!any_requires_grad({z, a, b})) return out;

  const Tensor zs = z.detach(), as = a.detach(), bs = b.detach();
  record(out, kOp, {z, a, b}, {zs, as, bs}, [zs, as, bs](const Tensor& g, const std::vector<bool>& needs) {
    Tensor gz = empty(g.shape(), g.dtype(), g.device());
    Tensor ga = empty(g.shape(), g.dtype(), g.device());
    Tensor gb = empty(g.shape(), g.dtype(), g.device());
    kBackward(g.device(), g, zs, as, bs, gz, ga, gb);
    return std::vector<Tensor>{needs[0] ? sum_to(gz, zs.shape()) : Tensor(),
                               needs[1] ? sum_to(ga, as.shape()) : Tensor(),
                               needs[2] ? sum_to(gb, bs.shape()) : Tensor()};
  });
  return out;
}

}  // namespace attn
