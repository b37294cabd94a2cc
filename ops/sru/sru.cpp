#include "attn/ops/sru/sru.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/prefix_lengths.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/sru/sru_kernels.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "sru_sequence";

using RunFn = void (*)(const SruRun&);
const DeviceKernels<RunFn> kForward{"sru_forward", sru_forward_cpu, ATTN_CUDA_KERNEL(sru_forward_cuda)};
const DeviceKernels<RunFn> kBackward{"sru_backward", sru_backward_cpu, ATTN_CUDA_KERNEL(sru_backward_cuda)};

std::string describe(const Tensor& t) { return t.defined() ? shape_str(t.shape()) : std::string("(undefined)"); }

void check_like(const Tensor& t, const Tensor& u, const char* name) {
  ATTN_CHECK(t.dtype() == u.dtype() && t.device() == u.device(), kOp, name, " is ", dtype_name(t.dtype()), " on ",
             device_name(t.device()), ", u is ", dtype_name(u.dtype()), " on ", device_name(u.device()));
}

void check_operands(const Tensor& u, const Tensor& highway, const Tensor& bias, const Tensor& mask) {
  ATTN_CHECK(u.defined() && is_floating(u.dtype()) && u.dim() == 3, kOp,
             "u must be a float32 or float64 tensor [B, n, 3h], got ", describe(u));
  const int64_t B = u.size(0), n = u.size(1);
  ATTN_CHECK(u.size(2) > 0 && u.size(2) % 3 == 0, kOp, "u ", shape_str(u.shape()),
             ": its last axis must be the three blocks x~, f, r of the hidden width (3 h, h >= 1)");
  const int64_t h = u.size(2) / 3;
  ATTN_CHECK(highway.defined() && highway.shape() == Shape({B, n, h}), kOp, "highway must be [", B, ", ", n, ", ",
             h, "] for u ", shape_str(u.shape()), ", got ", describe(highway));
  check_like(highway, u, "highway");
  if (bias.defined()) {
    ATTN_CHECK(bias.shape() == Shape({2 * h}), kOp, "bias must be [", 2 * h, "] (b_f then b_r), got ",
               shape_str(bias.shape()));
    check_like(bias, u, "bias");
  }
  if (!mask.defined()) return;
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({B, n}), kOp, "mask must be uint8 [", B, ", ", n,
             "], got ", dtype_name(mask.dtype()), " ", shape_str(mask.shape()));
}

}  // namespace

Tensor sru_sequence(const Tensor& u_in, const Tensor& highway_in, const Tensor& bias_in, const Tensor& mask,
                    bool reverse) {
  check_operands(u_in, highway_in, bias_in, mask);
  const Device dev = u_in.device();
  const DType dt = u_in.dtype();
  const int64_t B = u_in.size(0), n = u_in.size(1), h = u_in.size(2) / 3;

  SruRun run;
  run.dtype = dt;
  run.B = B, run.n = n, run.h = h, run.reverse = reverse;
  run.lengths = from_indices(prefix_lengths(mask, B, n, kOp), {B}).to(dev);
  run.u = contiguous(u_in.detach());
  run.highway = contiguous(highway_in.detach());
  run.bias = bias_in.defined() ? contiguous(bias_in.detach()) : Tensor();
  // Zeros, not empty: padded outputs stay exactly 0, and no padded c is
  // left uninitialised (the backward never reads one, but a copy might).
  run.cs = zeros({B, n, h}, dt, dev);
  run.out = zeros({B, n, h}, dt, dev);
  kForward(dev, run);

  Tensor out = run.out;
  std::vector<Tensor> inputs{u_in, highway_in};
  if (bias_in.defined()) inputs.push_back(bias_in);
  if (!any_requires_grad(inputs)) return out;

  SruRun saved = run;
  saved.out = Tensor();  // the backward needs c, u and the highway, never h
  record(out, kOp, inputs,
         {saved.lengths, saved.u, saved.highway, saved.bias, saved.cs, saved.out, saved.grad_out, saved.du, saved.dhw},
         [saved](const Tensor& g, const std::vector<bool>& needs) {
    SruRun bs = saved;
    const Device dev = g.device();
    const DType dt = g.dtype();
    bs.grad_out = contiguous(g);
    // Zeros: the gradient at padded tokens is exactly 0 (never written).
    bs.du = zeros({bs.B, bs.n, 3 * bs.h}, dt, dev);
    bs.dhw = zeros({bs.B, bs.n, bs.h}, dt, dev);
    kBackward(dev, bs);
    std::vector<Tensor> grads{needs[0] ? bs.du : Tensor(), needs[1] ? bs.dhw : Tensor()};
    // The biases add to every valid token's f and r pre-activations: their
    // gradient is those blocks of du summed over sentences and tokens.
    if (needs.size() > 2) grads.push_back(needs[2] ? sum(narrow(bs.du, 2, bs.h, 2 * bs.h), {0, 1}) : Tensor());
    return grads;
  });
  return out;
}

}  // namespace attn
