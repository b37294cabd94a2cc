// `attn bench --save-check`: the file has the tensors bench_vs_torch.py reads,
// with the expected names, dtypes and shapes; its weights and input reproduce
// its outputs when loaded by name into a fresh encoder; ReSAN's selection is
// recorded; the flag refuses settings that do not describe one check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/util/cli_args.h"
#include "bench_args_util.h"
#include "attn/models/masks.h"
#include "attn/nn/safetensors.h"
#include "attn/train/bench/bench_check.h"
#include "attn/train/bench/bench_options.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

std::string temp_path(const std::string& name) { return testing_support::scratch_path(name); }

BenchPoint small_point(const std::string& model, BenchMode mode) {
  BenchPoint p;
  p.model = model;
  p.mode = mode;
  p.batch = 3;
  p.length = 5;
  p.features = 4;
  p.hidden = 4;
  p.seed = 7;
  return p;
}



// The parameters of `point`'s encoder as make_bench_encoder builds them.
std::vector<std::pair<std::string, Tensor>> fresh_parameters(BenchPoint point) {
  point.dtype = DType::F64;
  Generator init(point.seed), noise(point.seed + 1);
  return make_bench_encoder(point, init, noise)->named_parameters();
}

TEST(BenchCheck, FileHoldsNamedShapedTensorsAndRoundTrips) {
  const BenchPoint point = small_point("mtsa", BenchMode::Train);
  const std::string path = temp_path("mtsa_train.safetensors");
  save_bench_check(point, path);
  std::map<std::string, std::string> meta;
  const std::map<std::string, Tensor> file = load_safetensors(path, &meta);
  std::remove(path.c_str());

  EXPECT_EQ(meta.at("model"), "mtsa");
  EXPECT_EQ(meta.at("mode"), "train");
  EXPECT_EQ(meta.at("training"), "true");
  EXPECT_EQ(meta.at("config"), "hidden=4");
  EXPECT_EQ(meta.at("batch"), "3");

  const auto params = fresh_parameters(point);
  ASSERT_FALSE(params.empty());
  for (const auto& [name, p] : params) {
    SCOPED_TRACE(name);
    ASSERT_EQ(file.count("param." + name), 1u);
    const Tensor& saved = file.at("param." + name);
    EXPECT_EQ(saved.dtype(), DType::F64);
    EXPECT_EQ(saved.shape(), p.shape());
    EXPECT_EQ(max_abs_diff(saved, p), 0.0);  // the same initialisation, written and read back
    ASSERT_EQ(file.count("grad.param." + name), 1u);  // MTSA's loss reaches every parameter
    EXPECT_EQ(file.at("grad.param." + name).shape(), p.shape());
  }

  const Tensor& x = file.at("input.x");
  const Tensor& mask = file.at("input.mask");
  EXPECT_EQ(x.dtype(), DType::F64);
  EXPECT_EQ(x.shape(), Shape({3, 5, 4}));
  EXPECT_EQ(mask.dtype(), DType::U8);
  ASSERT_EQ(mask.shape(), Shape({3, 5}));
  const std::vector<double> m = mask.to_vector();
  for (int64_t t = 0; t < 5; ++t) EXPECT_EQ(m[static_cast<size_t>(t)], 1.0) << "example 0 is full length";
  for (int64_t b = 0; b < 3; ++b) {
    EXPECT_EQ(m[static_cast<size_t>(b * 5)], 1.0) << "every example has a first token";
    for (int64_t t = 1; t < 5; ++t)
      EXPECT_LE(m[static_cast<size_t>(b * 5 + t)], m[static_cast<size_t>(b * 5 + t - 1)]) << "a prefix mask";
  }
  EXPECT_EQ(file.at("output.tokens").shape(), Shape({3, 5, 4}));
  EXPECT_EQ(file.at("output.sentence").shape(), Shape({3, 4}));

  // d loss / d x: exactly zero at padded rows (they are selected out), non-zero elsewhere.
  const Tensor& gx = file.at("grad.input.x");
  ASSERT_EQ(gx.shape(), x.shape());
  const std::vector<double> g = gx.to_vector();
  double valid_mass = 0;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t f = 0; f < 4; ++f) {
        const double v = g[static_cast<size_t>((b * 5 + t) * 4 + f)];
        if (m[static_cast<size_t>(b * 5 + t)] == 0) EXPECT_EQ(v, 0.0);
        else valid_mass += std::fabs(v);
      }
  EXPECT_GT(valid_mass, 0.0);
}

TEST(BenchCheck, WeightsAndInputReproduceTheOutputsWhenLoadedByName) {
  for (const std::string model : {"mtsa", "transformer", "biblosan"}) {
    SCOPED_TRACE(model);
    BenchPoint point = small_point(model, BenchMode::Infer);
    if (model == "transformer") point.config = {{"heads", "2"}};
    const std::string path = temp_path(model + "_infer.safetensors");
    save_bench_check(point, path);
    const std::map<std::string, Tensor> file = load_safetensors(path);
    std::remove(path.c_str());

    // A fresh encoder from another seed, given the file's weights by name.
    BenchPoint other = point;
    other.seed = 99;
    other.dtype = DType::F64;
    Generator init(other.seed), noise(other.seed + 1);
    std::unique_ptr<Encoder> encoder = make_bench_encoder(other, init, noise);
    std::map<std::string, Tensor> weights;
    for (const auto& [name, t] : file)
      if (name.rfind("param.", 0) == 0) weights[name.substr(6)] = t;
    load_into_module(*encoder, weights, /*strict=*/true);
    encoder->set_training(false);
    NoGrad no_grad;
    EncoderOutput out = encoder->encode(file.at("input.x"), file.at("input.mask"));
    // Same kernels on the same data: agreement to float64 rounding, scaled by the values.
    const double tokens_scale = std::max(1.0, max_abs(file.at("output.tokens")));
    EXPECT_LE(max_abs_diff(out.tokens, file.at("output.tokens")), 1e-12 * tokens_scale);
    EXPECT_LE(max_abs_diff(out.sentence, file.at("output.sentence")), 1e-12 * tokens_scale);
    EXPECT_GT(max_abs(file.at("output.sentence")), 0.0);
    EXPECT_EQ(file.count("grad.input.x"), 0u) << "inference writes no gradients";
  }
}

TEST(BenchCheck, ResanRecordsItsSelectionAndOnlyTheGradientsTheLossReaches) {
  BenchPoint point = small_point("resan", BenchMode::Train);
  point.config = {{"keep_prob", "1"}};
  const BenchCheck check = make_bench_check(point);
  std::map<std::string, Tensor> t(check.tensors.begin(), check.tensors.end());
  EXPECT_EQ(check.metadata.at("config"), "hidden=4,keep_prob=1");
  const std::vector<double> mask = t.at("input.mask").to_vector();
  for (const char* key : {"selection.z_head", "selection.z_dep"}) {
    SCOPED_TRACE(key);
    ASSERT_EQ(t.count(key), 1u);
    EXPECT_EQ(t.at(key).dtype(), DType::U8);
    EXPECT_EQ(t.at(key).shape(), Shape({3, 5}));
    const std::vector<double> z = t.at(key).to_vector();
    for (size_t i = 0; i < z.size(); ++i) {
      if (mask[i] == 0) {
        EXPECT_EQ(z[i], 0.0) << "a padded token is never selected";
      }
    }
  }
  // The RSS is trained by REINFORCE, not by the bench loss: no gradient; the ReSA blocks have one.
  EXPECT_EQ(t.count("param.rss_head.fc.weight"), 1u);
  EXPECT_EQ(t.count("grad.param.rss_head.fc.weight"), 0u);
  EXPECT_EQ(t.count("grad.param.fw.fc.weight"), 1u);
  EXPECT_EQ(t.count("grad.param.s2t.w1.weight"), 1u);
}

std::string save_check_error(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--save-check", temp_path("unused.safetensors")};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing_support::bench_usage_error(args);
}

TEST(BenchArgs, SaveCheckNeedsOneModelOneModeOneLength) {
  EXPECT_THAT(save_check_error({"--models", "mtsa,disan", "--mode", "train", "--lengths", "8"}),
              HasSubstr("exactly one with --models"));
  EXPECT_THAT(save_check_error({"--models", "mtsa", "--lengths", "8"}), HasSubstr("--mode infer or --mode train"));
  EXPECT_THAT(save_check_error({"--models", "mtsa", "--mode", "train", "--lengths", "8,16"}),
              HasSubstr("exactly one with --lengths"));
  EXPECT_THAT(save_check_error({"--models", "mtsa", "--mode", "train", "--lengths", "8", "--csv", "x.csv"}),
              HasSubstr("--csv"));
  EXPECT_THAT(save_check_error({"--models", "mtsa", "--mode", "train", "--lengths", "8", "--random-lengths"}),
              HasSubstr("--random-lengths"));
  EXPECT_THAT(save_check_error({"--mode", "train", "--lengths", "8", "--profile"}), HasSubstr("--profile"));

  BenchSettings s;
  std::string help;
  ASSERT_TRUE(parse_bench_args({"--models", "mtsa", "--mode", "infer", "--lengths", "8", "--save-check", "c.st"}, &s,
                               &help));
  EXPECT_EQ(s.save_check_path, "c.st");
  EXPECT_FALSE(parse_bench_args({"--help"}, &s, &help));
  EXPECT_THAT(help, HasSubstr("--save-check"));
}

}  // namespace
}  // namespace attn
