// The whole model (embedding -> encoder -> head) for every task: output
// shapes, parameter names, unknown config keys, and that it learns.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/task_model.h"
#include "attn/ops/loss/loss.h"
#include "attn/train/optim/sgd.h"

namespace attn {
namespace {

Config small_config(const std::string& encoder) {
  std::string text = "encoder = " + encoder + "\nembedding_dim = 6\nhead_hidden = 5\nkeep_prob = 1.0\n";
  if (encoder != "bow") text += "hidden = 4\n";  // bow has no width of its own
  return Config::parse(text);
}

TaskInputs inputs() {
  TaskInputs in;
  in.ids = from_indices({2, 3, 4, 0, 5, 6, 0, 0}, {2, 4});
  in.mask = length_mask({3, 2}, 4);
  in.ids_b = from_indices({7, 2, 0, 3, 4, 5}, {2, 3});
  in.mask_b = length_mask({2, 3}, 3);
  return in;
}

TEST(TaskModel, OutputShapesForEveryTask) {
  for (std::string enc : {"bow", "disan", "bilstm", "bigru", "bisru"}) {
    for (TaskKind task : {TaskKind::Classify, TaskKind::Pair, TaskKind::Relatedness, TaskKind::Tag}) {
      Generator init(1), noise(2);
      Config c = small_config(enc);
      TaskModel m(c, task, 10, 3, DType::F32, init, noise);
      c.check_all_used("test config");
      Tensor y = m.logits(inputs());
      Shape expected = task == TaskKind::Tag ? Shape{2, 4, 3} : Shape{2, 3};
      EXPECT_EQ(y.shape(), expected) << enc << " " << task_name(task);
    }
  }
}

TEST(TaskModel, ParameterNamesAreHierarchical) {
  Generator init(1), noise(2);
  TaskModel m(small_config("disan"), TaskKind::Classify, 10, 2, DType::F32, init, noise);
  std::vector<std::string> names;
  for (auto& [name, t] : m.named_parameters()) names.push_back(name);
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_TRUE(has("embedding.weight"));
  EXPECT_TRUE(has("encoder.fw.w1.weight"));
  EXPECT_TRUE(has("encoder.s2t.w2.bias"));
  EXPECT_TRUE(has("head.mlp.fc.weight"));
}

TEST(TaskModel, PairFeaturesDefaultToTheEncodersPaper) {
  EXPECT_STREQ(find_encoder("mstrans")->pair_features, "absdiff_diff");  // seed 003
  for (const char* name :
       {"mtsa", "disan", "biblosan", "resan", "transformer", "bilstm", "bigru", "bisru", "multicnn", "hrchycnn",
        "bow"})
    EXPECT_STREQ(find_encoder(name)->pair_features, "diff_prod") << name;
  // An explicit key wins, and a wrong one is refused.
  Generator init(1), noise(2);
  Config c = small_config("bow");
  c.set("pair_features", "sideways");
  EXPECT_THROW(TaskModel(c, TaskKind::Pair, 10, 3, DType::F32, init, noise), Error);
}

TEST(TaskModel, UnknownWordRowIsTrainedByDefault) {
  // The papers fine-tune every row; <unk> (id 1) is no longer fixed at zero.
  Generator init(1), noise(2);
  TaskModel m(small_config("bow"), TaskKind::Classify, 10, 2, DType::F64, init, noise);
  TaskInputs in;
  in.ids = from_indices({1, 1, 2, 0}, {2, 2});
  in.mask = length_mask({2, 1}, 2);
  cross_entropy(m.logits(in), from_indices({0, 1}, {2})).backward();
  const Tensor g = m.embedding().weight.grad();
  double unk = 0;
  for (int64_t j = 0; j < 6; ++j) unk = std::max(unk, std::fabs(g.at({1, j})));
  EXPECT_GT(unk, 0.0);
  for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(g.at({0, j}), 0.0);  // padding still selected out
  Config fixed = small_config("bow");
  fixed.set("train_unk", "false");
  Generator init2(1), noise2(2);
  TaskModel frozen(fixed, TaskKind::Classify, 10, 2, DType::F64, init2, noise2);
  cross_entropy(frozen.logits(in), from_indices({0, 1}, {2})).backward();
  for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(frozen.embedding().weight.grad().at({1, j}), 0.0);
}

TEST(TaskModel, UnknownConfigKeyIsReported) {
  Generator init(1), noise(2);
  Config c = Config::parse("encoder = bow\nembedding_dim = 4\nhiddden = 3\n");
  TaskModel m(c, TaskKind::Classify, 10, 2, DType::F32, init, noise);
  try {
    c.check_all_used("the model config");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hiddden"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TaskModel(Config::parse("encoder = nope\n"), TaskKind::Classify, 10, 2, DType::F32, init, noise),
               Error);
}

TEST(TaskModel, SgdFitsATinyBatch) {
  Generator init(3), noise(4);
  TaskModel m(small_config("disan"), TaskKind::Classify, 10, 2, DType::F32, init, noise);
  Tensor labels = from_indices({1, 0}, {2});
  Sgd sgd(m.parameters(), 0.5);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    sgd.zero_grad();
    Tensor loss = cross_entropy(m.logits(inputs()), labels);
    loss.backward();
    sgd.step();
    if (step == 0) first = loss.item();
    last = loss.item();
  }
  EXPECT_LT(last, 0.2 * first);
}

}  // namespace
}  // namespace attn
