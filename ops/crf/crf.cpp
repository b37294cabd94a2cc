#include "attn/ops/crf/crf.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/crf/crf_kernels.h"
#include "attn/ops/prefix_lengths.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {

namespace {

using RunFn = void (*)(const CrfRun&);
const DeviceKernels<RunFn> kForward{"crf_forward", crf_forward_cpu, ATTN_CUDA_KERNEL(crf_forward_cuda)};
const DeviceKernels<RunFn> kBackward{"crf_backward", crf_backward_cpu, ATTN_CUDA_KERNEL(crf_backward_cuda)};
const DeviceKernels<RunFn> kViterbi{"crf_viterbi", crf_viterbi_cpu, ATTN_CUDA_KERNEL(crf_viterbi_cuda)};

std::string describe(const Tensor& t) {
  return t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()) : std::string("(undefined)");
}

void check_parameter(const char* op, const Tensor& t, const char* name, const Shape& shape, const Tensor& e) {
  ATTN_CHECK(t.defined() && t.shape() == shape, op, name, " must be ", shape_str(shape), " for emissions ",
             shape_str(e.shape()), ", got ", describe(t));
  ATTN_CHECK(t.dtype() == e.dtype() && t.device() == e.device(), op, name, " is ", dtype_name(t.dtype()), " on ",
             device_name(t.device()), ", emissions ", dtype_name(e.dtype()), " on ", device_name(e.device()));
}

// The shapes of every operand; returns each sentence's length.
std::vector<int64_t> check_operands(const char* op, const Tensor& e, const Tensor& mask, const Tensor& transitions,
                                    const Tensor& start, const Tensor& end) {
  ATTN_CHECK(e.defined() && is_floating(e.dtype()) && e.dim() == 3, op,
             "emissions must be a float32 or float64 tensor [B, n, K], got ", describe(e));
  const int64_t B = e.size(0), n = e.size(1), K = e.size(2);
  ATTN_CHECK(K > 0, op, "emissions ", shape_str(e.shape()), " have no tags (K = 0)");
  check_parameter(op, transitions, "transitions", {K, K}, e);
  check_parameter(op, start, "start", {K}, e);
  check_parameter(op, end, "end", {K}, e);
  if (mask.defined())
    ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({B, n}), op, "mask must be uint8 [", B, ", ", n,
               "] for emissions ", shape_str(e.shape()), ", got ", describe(mask));
  return prefix_lengths(mask, B, n, op);
}

// Each valid token's tag names one of the K tags; padded ones are not read.
void check_tags(const char* op, const Tensor& tags, const Tensor& e, const std::vector<int64_t>& lengths) {
  const int64_t B = e.size(0), n = e.size(1), K = e.size(2);
  ATTN_CHECK(tags.defined() && tags.dtype() == DType::I64 && tags.shape() == Shape({B, n}), op,
             "tags must be int64 [", B, ", ", n, "] for emissions ", shape_str(e.shape()), ", got ", describe(tags));
  ATTN_CHECK(tags.device() == e.device(), op, "tags on ", device_name(tags.device()), ", emissions on ",
             device_name(e.device()));
  const std::vector<int64_t> host = to_indices(tags);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < lengths[static_cast<size_t>(b)]; ++t) {
      const int64_t y = host[static_cast<size_t>(b * n + t)];
      ATTN_CHECK(y >= 0 && y < K, op, "tag ", y, " of sentence ", b, ", token ", t, " is out of range [0, ", K,
                 ") for K = ", K, " tags");
    }
}

CrfRun make_run(const Tensor& e, const Tensor& transitions, const Tensor& start, const Tensor& end,
                const std::vector<int64_t>& lengths) {
  NoGrad no_grad;
  const Device dev = e.device();
  CrfRun r;
  r.dtype = e.dtype();
  r.B = e.size(0), r.n = e.size(1), r.K = e.size(2);
  r.lengths = from_indices(lengths, {r.B}).to(dev);
  r.emissions = contiguous(e.detach());
  r.transitions = contiguous(transitions.detach());
  r.start = contiguous(start.detach());
  r.end = contiguous(end.detach());
  // Zeros: the rows of padded tokens are never written, and a reader of the
  // whole tensor (anomaly detection) must not meet garbage there.
  r.alpha = zeros({r.B, r.n, r.K}, DType::F64, dev);
  return r;
}

}  // namespace

Tensor crf_nll(const Tensor& emissions, const Tensor& tags, const Tensor& mask, const Tensor& transitions,
               const Tensor& start, const Tensor& end) {
  const char* op = "crf_nll";
  const std::vector<int64_t> lengths = check_operands(op, emissions, mask, transitions, start, end);
  check_tags(op, tags, emissions, lengths);
  CrfRun run = make_run(emissions, transitions, start, end, lengths);
  const Device dev = emissions.device();
  {
    NoGrad no_grad;
    run.tags = contiguous(tags.detach());
    run.log_z = zeros({run.B}, DType::F64, dev);
    run.nll = zeros({run.B}, run.dtype, dev);
  }
  kForward(dev, run);

  Tensor out = run.nll;
  const std::vector<Tensor> inputs{emissions, transitions, start, end};
  if (!any_requires_grad(inputs)) return out;
  CrfRun saved = run;
  saved.nll = Tensor();
  record(out, op, inputs, {saved.lengths, saved.emissions, saved.tags, saved.transitions, saved.start, saved.end,
                           saved.alpha, saved.log_z},
         [saved](const Tensor& g, const std::vector<bool>& needs) {
    CrfRun r = saved;
    const Device dev = g.device();
    r.grad = contiguous(g);
    r.beta = zeros({r.B, 2, r.K}, DType::F64, dev);
    r.d_emissions = zeros({r.B, r.n, r.K}, r.dtype, dev);
    r.d_transitions = zeros({r.B, r.K, r.K}, DType::F64, dev);
    r.d_start = zeros({r.B, r.K}, DType::F64, dev);
    r.d_end = zeros({r.B, r.K}, DType::F64, dev);
    kBackward(dev, r);
    // Each sentence wrote its own rows; their sum is the parameters' gradient.
    auto total = [&](const Tensor& per_sentence) { return cast(sum(per_sentence, {0}), r.dtype); };
    return std::vector<Tensor>{needs[0] ? r.d_emissions : Tensor(), needs[1] ? total(r.d_transitions) : Tensor(),
                               needs[2] ? total(r.d_start) : Tensor(), needs[3] ? total(r.d_end) : Tensor()};
  });
  return out;
}

Tensor crf_viterbi(const Tensor& emissions, const Tensor& mask, const Tensor& transitions, const Tensor& start,
                   const Tensor& end) {
  const std::vector<int64_t> lengths = check_operands("crf_viterbi", emissions, mask, transitions, start, end);
  CrfRun run = make_run(emissions, transitions, start, end, lengths);
  const Device dev = emissions.device();
  {
    NoGrad no_grad;
    run.back = zeros({run.B, run.n, run.K}, DType::I64, dev);
    run.path = zeros({run.B, run.n}, DType::I64, dev);
  }
  kViterbi(dev, run);
  return run.path;
}

}  // namespace attn
