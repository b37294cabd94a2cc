// Whole models on the GPU against the CPU: each encoder (with its default
// config, and the papers' ablations of it) and a classification head, forward and backward in float32, built
// once, run on the CPU, moved with Module::to and run again on CUDA. Outputs,
// the loss and every parameter's gradient must agree within float32
// tolerance. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/random.h"
#include "attn/models/encoder.h"
#include "attn/models/heads.h"
#include "attn/models/masks.h"
#include "attn/ops/loss/loss.h"

namespace attn {
namespace {

// float32 on both devices; the GPU sums in another order, and a model chains
// dozens of ops, so: |got - ref| <= 1e-4 + 2e-3 |ref| + 1e-4 max|ref| (the last
// term for entries that cancel to near zero inside a tensor of larger ones).
std::string compare(const Tensor& got_t, const Tensor& ref_t, const std::string& what) {
  std::vector<double> got = got_t.to_vector(), ref = ref_t.to_vector();
  if (got.size() != ref.size()) return what + ": size differs\n";
  double scale = 0;
  for (double r : ref) scale = std::max(scale, std::abs(r));
  std::ostringstream os;
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double tol = 1e-4 + 2e-3 * std::abs(ref[i]) + 1e-4 * scale;
    if (!(std::abs(got[i] - ref[i]) <= tol) && bad++ < 3)
      os << what << "[" << i << "]: got " << got[i] << ", expected " << ref[i] << "\n";
  }
  return os.str();
}

struct Outputs {
  Tensor tokens, sentence, loss;
  std::vector<std::pair<std::string, Tensor>> grads;
};

// An encoder and the config keys that differ from its defaults.
struct ModelCase {
  std::string name;    // the test's name
  std::string config;  // config text
};

class CudaModels : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  }
};

Outputs run(Encoder& encoder, ClassificationHead& head, const Tensor& x, const Tensor& mask, const Tensor& labels,
            Device device) {
  encoder.to(device);
  head.to(device);
  for (const Tensor& p : encoder.parameters()) p.zero_grad();
  for (const Tensor& p : head.parameters()) p.zero_grad();
  EncoderOutput e = encoder.encode(x.to(device), mask.to(device));
  Tensor loss = cross_entropy(head.forward(e.sentence), labels.to(device));
  loss.backward();
  Outputs o{e.tokens.detach().to(Device::CPU), e.sentence.detach().to(Device::CPU), loss.detach().to(Device::CPU), {}};
  for (auto& [name, p] : encoder.named_parameters())
    if (p.grad().defined()) o.grads.emplace_back("encoder." + name, p.grad().to(Device::CPU));
  for (auto& [name, p] : head.named_parameters())
    if (p.grad().defined()) o.grads.emplace_back("head." + name, p.grad().to(Device::CPU));
  return o;
}

TEST_P(CudaModels, ForwardAndBackwardMatchTheCpu) {
  Generator init(7), noise(8), data(9);
  const int64_t input_dim = 12;
  Config config = Config::parse(GetParam().config);
  EncoderContext ctx;
  ctx.input_dim = input_dim;
  ctx.dtype = DType::F32;
  ctx.init = &init;
  ctx.noise = &noise;
  std::unique_ptr<Encoder> encoder = build_encoder(config, ctx);
  HeadOptions ho;
  ho.hidden = 16;
  ClassificationHead head(encoder->sentence_dim(), 3, ho, init, noise);
  // Evaluation mode: no dropout or sampling noise, so both devices compute one function.
  encoder->set_training(false);
  head.set_training(false);

  Tensor x = rand_uniform({3, 9, input_dim}, -1, 1, data, DType::F32);
  Tensor mask = length_mask({9, 5, 1}, 9);
  Tensor labels = from_indices({0, 2, 1}, {3});

  CudaSentinelScope sentinel;
  Outputs cpu = run(*encoder, head, x, mask, labels, Device::CPU);
  Outputs gpu = run(*encoder, head, x, mask, labels, Device::CUDA);
  std::string failures = compare(gpu.tokens, cpu.tokens, "tokens") + compare(gpu.sentence, cpu.sentence, "sentence") +
                         compare(gpu.loss, cpu.loss, "loss");
  ASSERT_EQ(gpu.grads.size(), cpu.grads.size()) << "parameters with a gradient differ";
  for (size_t i = 0; i < cpu.grads.size(); ++i)
    failures += compare(gpu.grads[i].second, cpu.grads[i].second, "grad " + cpu.grads[i].first);
  EXPECT_EQ(failures, "") << GetParam().config;
  encoder->to(Device::CPU);  // leaves the module as built
}

std::vector<ModelCase> model_cases() {
  std::vector<ModelCase> cases;
  for (const char* name : {"bow", "mtsa", "disan", "biblosan", "mstrans", "resan", "transformer", "bilstm", "bigru",
                           "bisru", "multicnn", "hrchycnn"})
    cases.push_back({name, std::string("encoder = ") + name + "\n"});
  // The ablation rows of the MTSA and Bi-BloSAN papers' Table 3.
  for (const char* ablation : {"no_token2token", "no_source2token", "no_proposed_modules"})
    cases.push_back({std::string("mtsa_") + ablation, std::string("encoder = mtsa\nablation = ") + ablation + "\n"});
  cases.push_back({"mtsa_no_masks", "encoder = mtsa\nhead_masks = none\n"});
  for (const char* ablation : {"no_local", "no_global", "no_mblosa", "no_mblosa_no_s2t"})
    cases.push_back(
        {std::string("biblosan_") + ablation, std::string("encoder = biblosan\nablation = ") + ablation + "\n"});
  // The ReSAN paper's Table 2 rows and Table 4's iterative sampling.
  for (const char* variant :
       {"no_unselected_heads", "shared_rss", "no_hard_attention", "no_soft_self_attention", "no_attentions"})
    cases.push_back(
        {std::string("resan_") + variant, std::string("encoder = resan\nresa_variant = ") + variant + "\n"});
  cases.push_back({"resan_iterative", "encoder = resan\nrss_kind = iterative\n"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Encoders, CudaModels, ::testing::ValuesIn(model_cases()),
                         [](const ::testing::TestParamInfo<ModelCase>& info) { return info.param.name; });

}  // namespace
}  // namespace attn
