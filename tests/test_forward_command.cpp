// `attn forward` and `attn params` end to end through their entry points:
// fresh weights saved, run, reloaded and run again give identical outputs;
// bad inputs, configs and weight files fail with clear messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/models/encoder.h"
#include "attn/models/task_model.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/unary/unary.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/model_commands.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;

class ForwardCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_support::scratch_dir() + "/";
    write_config("encoder = disan\nhidden = 3\n");
  }

  std::string path(const std::string& name) const { return dir_ + name; }

  void write_config(const std::string& text, const std::string& name = "model.cfg") const {
    std::ofstream(path(name)) << text;
  }

  // x [2, 4, 3] from U(-1, 1) with lengths {4, 2}.
  void write_input(DType dtype = DType::F64, const std::string& name = "in.safetensors") const {
    Generator g(7);
    save_safetensors(path(name), {{"x", rand_uniform({2, 4, 3}, -1, 1, g, dtype)}, {"lengths", from_indices({4, 2}, {2})}});
  }

  std::vector<std::string> args(const std::string& output, bool init = false,
                                const std::string& input = "in.safetensors") const {
    std::vector<std::string> a = {"--model", path("model.cfg"), "--weights", path("w.safetensors"),
                                  "--input", path(input),       "--output",  path(output)};
    if (init) a.push_back("--init-weights");
    return a;
  }

  // The Error (or UsageError) message of running forward with `a`.
  static std::string failure_of(const std::vector<std::string>& a) {
    try {
      int rc = run_forward_command(a);
      return "returned " + std::to_string(rc) + " without throwing";
    } catch (const std::exception& e) {
      return e.what();
    }
  }

  std::string dir_;
};

TEST_F(ForwardCommand, FreshWeightsRunReloadRunAgainGiveIdenticalOutputs) {
  write_input();
  ASSERT_EQ(run_forward_command(args("out1.safetensors", true)), 0);
  ASSERT_EQ(run_forward_command(args("out2.safetensors")), 0);
  auto a = load_safetensors(path("out1.safetensors"));
  auto b = load_safetensors(path("out2.safetensors"));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.at("tokens").shape(), (Shape{2, 4, 6}));  // DiSAN: token dim 2 * hidden
  EXPECT_EQ(a.at("sentence").shape(), (Shape{2, 6}));
  EXPECT_EQ(a.at("tokens").dtype(), DType::F64);
  EXPECT_EQ(a.at("tokens").to_vector(), b.at("tokens").to_vector());
  EXPECT_EQ(a.at("sentence").to_vector(), b.at("sentence").to_vector());
  // Padded positions (example 1 has length 2) are exactly zero; valid ones are not all zero.
  double padded = 0, valid = 0;
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t k = 0; k < 6; ++k) {
      (t < 2 ? valid : padded) += std::abs(a.at("tokens").at({1, t, k}));
    }
  EXPECT_EQ(padded, 0.0);
  EXPECT_GT(valid, 0.0);
  // The weights file holds the encoder's named state.
  auto w = load_safetensors(path("w.safetensors"));
  EXPECT_EQ(w.at("fw.w1.weight").shape(), (Shape{3, 3}));
}

TEST_F(ForwardCommand, OutputsFollowTheLoadedWeights) {
  write_input();
  ASSERT_EQ(run_forward_command(args("out1.safetensors", true)), 0);
  std::map<std::string, std::string> meta;
  auto w = load_safetensors(path("w.safetensors"), &meta);
  EXPECT_EQ(meta.at("encoder"), "disan");
  std::vector<std::pair<std::string, Tensor>> changed;
  for (auto& [name, t] : w) {
    if (name == "s2t.w2.weight") write_element(t, 0, read_element(t, 0) + 0.5);
    changed.emplace_back(name, t);
  }
  save_safetensors(path("w.safetensors"), changed, meta);
  ASSERT_EQ(run_forward_command(args("out2.safetensors")), 0);
  auto a = load_safetensors(path("out1.safetensors")), b = load_safetensors(path("out2.safetensors"));
  EXPECT_EQ(a.at("tokens").to_vector(), b.at("tokens").to_vector());  // s2t only changes the sentence
  EXPECT_NE(a.at("sentence").to_vector(), b.at("sentence").to_vector());
}

TEST_F(ForwardCommand, SeedPicksTheInitialisation) {
  write_input();
  std::vector<std::string> a = args("out1.safetensors", true);
  ASSERT_EQ(run_forward_command(a), 0);
  a.push_back("--seed");
  a.push_back("2");
  a[7] = path("out2.safetensors");
  ASSERT_EQ(run_forward_command(a), 0);
  EXPECT_NE(load_safetensors(path("out1.safetensors")).at("sentence").to_vector(),
            load_safetensors(path("out2.safetensors")).at("sentence").to_vector());
}

TEST_F(ForwardCommand, Float32InputGivesFloat32OutputsFromFloat64Weights) {
  write_input(DType::F64);
  ASSERT_EQ(run_forward_command(args("out64.safetensors", true)), 0);
  write_input(DType::F32, "in32.safetensors");
  ASSERT_EQ(run_forward_command(args("out32.safetensors", false, "in32.safetensors")), 0);
  auto a = load_safetensors(path("out64.safetensors")), b = load_safetensors(path("out32.safetensors"));
  EXPECT_EQ(b.at("tokens").dtype(), DType::F32);
  EXPECT_EQ(b.at("sentence").dtype(), DType::F32);
  std::vector<double> x = a.at("sentence").to_vector(), y = b.at("sentence").to_vector();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-5);
}

TEST_F(ForwardCommand, MaskInputEqualsLengthsInput) {
  write_input();
  ASSERT_EQ(run_forward_command(args("out1.safetensors", true)), 0);
  Tensor x = load_safetensors(path("in.safetensors")).at("x");
  // Example 1 has length 2: its last two positions are padding. (Written
  // element by element: GCC 12 with AVX-512 miscompiles some 8-double
  // initializer lists such as {1, 1, 1, 1, 1, 1, 0, 0}.)
  Tensor mask = ones({2, 4}, DType::U8);
  write_element(mask, 6, 0);
  write_element(mask, 7, 0);
  save_safetensors(path("in_mask.safetensors"), {{"x", x}, {"mask", mask}});
  ASSERT_EQ(run_forward_command(args("out2.safetensors", false, "in_mask.safetensors")), 0);
  EXPECT_EQ(load_safetensors(path("out1.safetensors")).at("sentence").to_vector(),
            load_safetensors(path("out2.safetensors")).at("sentence").to_vector());
}

TEST_F(ForwardCommand, MissingOrMalformedInputsAreExplained) {
  ASSERT_EQ((write_input(), run_forward_command(args("out.safetensors", true))), 0);
  Generator g(1);
  auto input_error = [&](const std::vector<std::pair<std::string, Tensor>>& tensors) {
    save_safetensors(path("bad.safetensors"), tensors);
    return failure_of(args("out.safetensors", false, "bad.safetensors"));
  };
  Tensor x = rand_uniform({2, 4, 3}, -1, 1, g, DType::F64);
  EXPECT_THAT(input_error({{"lengths", from_indices({4, 2}, {2})}}), HasSubstr("missing tensor 'x'"));
  EXPECT_THAT(input_error({{"x", rand_uniform({2, 4}, -1, 1, g, DType::F64)}}),
              HasSubstr("'x' must have shape [B, n, d], got [2, 4]"));
  EXPECT_THAT(input_error({{"x", from_indices({1, 2}, {1, 1, 2})}}), HasSubstr("'x' must be float32 or float64"));
  EXPECT_THAT(input_error({{"x", x}, {"lengths", from_indices({5, 2}, {2})}}),
              HasSubstr("lengths[0] = 5 is out of range [0, 4]"));
  EXPECT_THAT(input_error({{"x", x}, {"lengths", from_indices({-1, 2}, {2})}}), HasSubstr("out of range"));
  EXPECT_THAT(input_error({{"x", x}, {"lengths", from_indices({4, 2, 1}, {3})}}),
              HasSubstr("'lengths' must have shape [2]"));
  EXPECT_THAT(input_error({{"x", x}, {"mask", full({2, 4}, 2, DType::U8)}}), HasSubstr("must be 0 or 1"));
  EXPECT_THAT(input_error({{"x", x}, {"mask", ones({2, 4})}}), HasSubstr("'mask' must be uint8"));
  EXPECT_THAT(input_error({{"x", x}, {"lenghts", from_indices({4, 2}, {2})}}), HasSubstr("unexpected tensor 'lenghts'"));
  EXPECT_THAT(input_error({{"x", x}, {"lengths", from_indices({4, 2}, {2})}, {"mask", ones({2, 4}, DType::U8)}}),
              HasSubstr("either 'lengths' or 'mask', not both"));
  // Weights built for 3 input features cannot run on 5.
  EXPECT_THAT(input_error({{"x", rand_uniform({2, 4, 5}, -1, 1, g, DType::F64)}}),
              HasSubstr("fw.fc.weight: checkpoint has [3, 3], model has [3, 5]"));
}

TEST_F(ForwardCommand, ConfigInputDimMustMatchX) {
  write_input();
  write_config("encoder = disan\nhidden = 3\nembedding_dim = 5\n");
  EXPECT_THAT(failure_of(args("out.safetensors", true)),
              HasSubstr("'x' has 3 features per token but the model config '" + path("model.cfg") +
                        "' sets embedding_dim = 5"));
}

TEST_F(ForwardCommand, BadWeightsFilesAreExplained) {
  write_input();
  EXPECT_THAT(failure_of(args("out.safetensors")), HasSubstr("does not exist (pass --init-weights to create it)"));
  ASSERT_EQ(run_forward_command(args("out.safetensors", true)), 0);
  // Truncated weights.
  std::ifstream in(path("w.safetensors"), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  std::ofstream(path("w.safetensors"), std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 3);
  std::string msg = failure_of(args("out.safetensors"));
  EXPECT_THAT(msg, HasSubstr(path("w.safetensors")));
  EXPECT_THAT(msg, HasSubstr("truncated"));
  // Weights of another encoder.
  write_config("encoder = bow\n");
  ASSERT_EQ(run_forward_command(args("out.safetensors", true)), 0);
  write_config("encoder = disan\nhidden = 3\n");
  EXPECT_THAT(failure_of(args("out.safetensors")), HasSubstr("saved for encoder 'bow' but the model config builds 'disan'"));
  // Weights of a differently sized model.
  write_config("encoder = disan\nhidden = 4\n");
  ASSERT_EQ(run_forward_command(args("out.safetensors", true)), 0);
  write_config("encoder = disan\nhidden = 3\n");
  msg = failure_of(args("out.safetensors"));
  EXPECT_THAT(msg, HasSubstr("weights " + path("w.safetensors")));
  EXPECT_THAT(msg, HasSubstr("fw.bias: checkpoint has [4], model has [3]"));
}

TEST_F(ForwardCommand, UsageErrorsAndUnknownConfigKeys) {
  write_input();
  write_config("encoder = disan\nhiden = 3\n");
  EXPECT_THAT(failure_of(args("out.safetensors", true)), HasSubstr("does not know the key(s): hiden"));
  EXPECT_THROW(run_forward_command({"--no-such-flag"}), UsageError);
  EXPECT_THROW(run_forward_command({"--model", path("model.cfg")}), UsageError);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run_forward_command({"--help"}), 0);
  EXPECT_THAT(::testing::internal::GetCapturedStdout(), HasSubstr("--init-weights"));
}

TEST_F(ForwardCommand, ParamsListsEveryTensorOfTheWholeModelAndTheTotal) {
  ::testing::internal::CaptureStdout();
  int rc = run_params_command({"--model", path("model.cfg"), "--input-dim", "2", "--vocab-size", "50", "--classes", "3"});
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("encoder.fw.fc.weight"));
  EXPECT_THAT(out, HasSubstr("[3, 2]"));
  EXPECT_THAT(out, HasSubstr("encoder.s2t.w2.weight"));
  EXPECT_THAT(out, HasSubstr("embedding.weight"));
  EXPECT_THAT(out, HasSubstr("[50, 2]"));
  EXPECT_THAT(out, HasSubstr("head."));
  // Each part's subtotal and the total are those of the task model attn train builds.
  Config config = Config::parse("encoder = disan\nhidden = 3\nembedding_dim = 2\n");
  Generator init(1), noise(2);
  TaskModel model(config, TaskKind::Classify, 50, 3, DType::F32, init, noise);
  std::map<std::string, int64_t> part;
  for (const auto& [name, t] : model.named_parameters()) {
    part[name.substr(0, name.find('.'))] += t.numel();
    EXPECT_THAT(out, HasSubstr(name));
  }
  EXPECT_EQ(part["embedding"], 100);
  EXPECT_GT(part["encoder"], 0);
  EXPECT_GT(part["head"], 0);
  for (const auto& [name, count] : part)
    EXPECT_THAT(out, ::testing::ContainsRegex(name + " +" + std::to_string(count) + " parameters"));
  EXPECT_THAT(out, ::testing::ContainsRegex("total +" + std::to_string(model.parameter_count()) + " parameters"));
}

TEST_F(ForwardCommand, ParamsWithoutAVocabularySizeSaysTheEmbeddingsAreNotCounted) {
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_params_command({"--model", path("model.cfg"), "--input-dim", "2"}), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("not counted"));
  EXPECT_THAT(out, HasSubstr("without the embeddings"));
}

TEST_F(ForwardCommand, ParamsReportsConfigErrors) {
  write_config("encoder = disan\nhidden = 3\nbogus = 1\n");
  try {
    run_params_command({"--model", path("model.cfg")});
    ADD_FAILURE() << "an unknown key was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bogus"));
  }
  write_config("encoder = nonesuch\n");
  EXPECT_THROW(run_params_command({"--model", path("model.cfg")}), Error);
  EXPECT_THROW(run_params_command({"--input-dim", "3"}), UsageError);
  EXPECT_THROW(run_params_command({"--model", path("missing.cfg")}), Error);
}

TEST_F(ForwardCommand, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  write_input();
  ASSERT_EQ(run_forward_command(args("out.safetensors", true)), 0);
  std::ifstream before_file(path("w.safetensors"), std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(before_file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(failure_of(args("w.safetensors")), HasSubstr("is the input '" + path("w.safetensors") + "'"));
  EXPECT_THAT(failure_of(args("in.safetensors")), HasSubstr("is the input '" + path("in.safetensors") + "'"));
  std::ifstream after_file(path("w.safetensors"), std::ios::binary);
  const std::string after((std::istreambuf_iterator<char>(after_file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(before, after);
}

TEST_F(ForwardCommand, InputsThatOverflowFloat32AreAnErrorNotANaNFile) {
  Generator g(7);
  save_safetensors(path("huge.safetensors"),
                   {{"x", mul_scalar(rand_uniform({2, 4, 3}, 0.5, 1, g, DType::F32), 3e38)},
                    {"lengths", from_indices({4, 2}, {2})}});
  EXPECT_THAT(failure_of(args("out.safetensors", true, "huge.safetensors")),
              HasSubstr("the encoder's outputs are not finite"));
  EXPECT_FALSE(std::ifstream(path("out.safetensors")).good());
  save_safetensors(path("nan.safetensors"), {{"x", full({2, 4, 3}, std::nan(""), DType::F32)},
                                             {"lengths", from_indices({4, 2}, {2})}});
  EXPECT_THAT(failure_of(args("out.safetensors", true, "nan.safetensors")),
              HasSubstr("'x' holds a NaN or infinite value"));
}

}  // namespace
}  // namespace attn
