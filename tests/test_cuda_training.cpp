// `attn train --device cuda` end to end: a few SGD steps of MTSA on a small
// generated task, once on the GPU and once on the CPU from the same seed and
// without dropout, so both devices compute one function; the resumable
// checkpoints' weights must agree within float32 tolerance, and so must the
// step log's losses and gradient norms; the GPU run's allocator bytes are
// the GPU allocator's. Skips without a GPU (never in the emulated build,
// where the tests see its device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/nn/safetensors.h"
#include "attn/util/json.h"
#include "test_data_util.h"
#include "attn/train/cli/commands.h"

namespace attn {
namespace {

std::vector<std::string> train_args(const std::string& data, const std::string& run, const std::string& device) {
  return {"--data", data, "--format", "tsv", "--model", "mtsa", "--hidden", "12", "--embedding-dim", "12",
          "--head-hidden", "12", "--keep-prob", "1", "--optimizer", "sgd", "--lr", "0.1", "--batch", "16",
          "--max-steps", "3", "--min-count", "1", "--log-every", "1", "--device", device, "--run", run, "--quiet"};
}

std::vector<Json> step_lines(const std::string& run) {
  std::vector<Json> lines;
  std::ifstream in(run + "/steps.jsonl");
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

std::map<std::string, Tensor> model_weights(const std::string& run) {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : load_safetensors(run + "/last.safetensors"))
    if (name.rfind("model.", 0) == 0) out.emplace(name, t);
  return out;
}

TEST(CudaTraining, ThreeStepsOnCudaMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  const std::string dir = test_data::fresh_dir();
  const std::string data = test_data::write_marker_data(dir, 48, 16, 16);
  ASSERT_EQ(run_train_command(train_args(data, dir + "/cpu", "cpu")), 0);
  ASSERT_EQ(run_train_command(train_args(data, dir + "/cuda", "cuda")), 0);
  const std::map<std::string, Tensor> cpu = model_weights(dir + "/cpu"), gpu = model_weights(dir + "/cuda");
  ASSERT_FALSE(cpu.empty());
  ASSERT_EQ(cpu.size(), gpu.size());
  std::ostringstream failures;
  for (const auto& [name, t] : cpu) {
    ASSERT_TRUE(gpu.count(name)) << name;
    const std::vector<double> ref = t.to_vector(), got = gpu.at(name).to_vector();
    ASSERT_EQ(ref.size(), got.size()) << name;
    double scale = 0;
    for (double r : ref) scale = std::max(scale, std::abs(r));
    // float32 on both devices, summed in different orders, through three
    // steps of a few dozen ops each (as in test_cuda_models.cpp).
    int bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double tol = 1e-4 + 2e-3 * std::abs(ref[i]) + 1e-4 * scale;
      if (!(std::abs(got[i] - ref[i]) <= tol) && bad++ < 3)
        failures << name << "[" << i << "]: cuda " << got[i] << ", cpu " << ref[i] << "\n";
    }
  }
  EXPECT_EQ(failures.str(), "");

  // The step log: the same steps, the same loss and gradient norm within the
  // weights' float32 tolerance, and the bytes of the device each run used.
  const std::vector<Json> cpu_steps = step_lines(dir + "/cpu"), gpu_steps = step_lines(dir + "/cuda");
  ASSERT_EQ(cpu_steps.size(), 3u);
  ASSERT_EQ(gpu_steps.size(), 3u);
  for (size_t i = 0; i < cpu_steps.size(); ++i) {
    EXPECT_EQ(gpu_steps[i].at("step").as_number(), static_cast<double>(i + 1));
    for (const char* key : {"loss", "grad_norm"}) {
      const double want = cpu_steps[i].at(key).as_number();
      EXPECT_NEAR(gpu_steps[i].at(key).as_number(), want, 1e-4 + 2e-3 * std::abs(want)) << key << " at step " << i + 1;
    }
    EXPECT_GT(gpu_steps[i].at("allocator_bytes").as_number(), 0) << "the GPU allocator holds the weights";
  }
}

}  // namespace
}  // namespace attn
