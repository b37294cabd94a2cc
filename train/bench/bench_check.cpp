#include "attn/train/bench/bench_check.h"

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/models/resan.h"
#include "attn/nn/safetensors.h"

namespace attn {

namespace {

// Example 0 at full length (the unpadded path), the others in [1, n].
Tensor padded_mask(int64_t batch, int64_t length, Generator& gen) {
  std::vector<int64_t> lengths(static_cast<size_t>(batch), length);
  for (size_t i = 1; i < lengths.size(); ++i)
    lengths[i] = 1 + static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(length));
  return length_mask(lengths, length);
}

std::string config_text(const BenchPoint& point) {
  std::string text;
  if (point.hidden > 0) text = "hidden=" + std::to_string(point.hidden);
  for (const auto& [key, value] : point.config) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text;
}

}  // namespace

BenchCheck make_bench_check(const BenchPoint& requested) {
  ATTN_CHECK(requested.device == Device::CPU, "bench --save-check", "the numeric check runs on the CPU only");
  BenchPoint point = requested;
  point.dtype = DType::F64;
  point.random_lengths = false;
  Generator init(point.seed), noise(point.seed + 1), data(point.seed + 2);
  std::unique_ptr<Encoder> encoder = make_bench_encoder(point, init, noise);
  BenchInputs inputs = make_bench_inputs(point, data);
  inputs.mask = padded_mask(point.batch, point.length, data);
  const bool train = point.mode == BenchMode::Train;
  if (train) inputs.x.set_requires_grad(true);

  EncoderOutput out = run_bench_step_with_outputs(*encoder, inputs, point.mode);

  BenchCheck check;
  auto& t = check.tensors;
  const auto params = encoder->named_parameters();
  for (const auto& [name, p] : params) t.emplace_back("param." + name, p.detach());
  t.emplace_back("input.x", inputs.x.detach());
  t.emplace_back("input.mask", inputs.mask);
  t.emplace_back("output.tokens", out.tokens.detach());
  t.emplace_back("output.sentence", out.sentence.detach());
  if (train) {
    ATTN_CHECK(inputs.x.grad().defined(), "bench --save-check", "the loss did not reach the input of '",
               point.model, "'");
    t.emplace_back("grad.input.x", inputs.x.grad());
    for (const auto& [name, p] : params)
      if (p.grad().defined()) t.emplace_back("grad.param." + name, p.grad());
  }
  if (const auto* resan = dynamic_cast<const Resan*>(encoder.get())) {
    t.emplace_back("selection.z_head", resan->last_selection().z_head);
    t.emplace_back("selection.z_dep", resan->last_selection().z_dep);
  }

  check.metadata = {{"format", "attn bench check 1"},
                    {"model", point.model},
                    {"mode", bench_mode_name(point.mode)},
                    {"training", train ? "true" : "false"},
                    {"loss", train ? "sum(output.tokens) + sum(output.sentence)" : "none (inference)"},
                    {"config", config_text(point)},
                    {"batch", std::to_string(point.batch)},
                    {"length", std::to_string(point.length)},
                    {"features", std::to_string(point.features)},
                    {"seed", std::to_string(point.seed)}};
  return check;
}

void save_bench_check(const BenchPoint& point, const std::string& path) {
  BenchCheck check = make_bench_check(point);
  save_safetensors(path, check.tensors, check.metadata);
}

}  // namespace attn
