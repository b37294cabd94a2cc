// MTL-16 (--format mtl16-NAME): the loader on the fixture in the release's
// layout, its errors, and the presets of the Multi-Scale Transformer paper's
// Table 3, one pair per data set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "attn/train/cli/presets.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

const std::string kFixture = std::string(ATTN_SOURCE_DIR) + "/data/fixtures/mtl16";

Dataset load(const std::string& dir, const std::string& name) {
  DataSpec spec;
  spec.data = dir;
  spec.format = "mtl16-" + name;
  return load_task_data(spec);
}

TEST(DataMtl16, EveryDataSetOfTheFixtureLoadsWithAnEighthOfTrainAsDev) {
  ASSERT_EQ(mtl16_datasets().size(), 16u);
  for (const std::string& name : mtl16_datasets()) {
    SCOPED_TRACE(name);
    const Dataset d = load(kFixture, name);
    EXPECT_EQ(d.name, "mtl16-" + name);
    EXPECT_EQ(d.task, TaskKind::Classify);
    EXPECT_EQ(d.label_names, (std::vector<std::string>{"0", "1"}));
    EXPECT_EQ(d.train.size(), 7u);  // the fixture's 8 train lines less the dev eighth
    EXPECT_EQ(d.dev.size(), 1u);
    EXPECT_EQ(d.test.size(), 4u);
    EXPECT_EQ(d.test[0].tokens[0], name);  // the fixture's lines start with the data set's name
    EXPECT_EQ(d.test[0].label, 0);
    EXPECT_EQ(d.test[1].label, 1);
  }
}

TEST(DataMtl16, TheDevSplitIsSeededAndDisjointFromTrain) {
  const std::string dir = fresh_dir();
  std::string train;
  for (int i = 0; i < 1600; ++i) train += std::to_string(i % 2) + "\tline " + std::to_string(i) + "\n";
  write(dir, "books.task.train", train);
  write(dir, "books.task.test", "1\tgood\n");
  const Dataset a = load(dir, "books"), b = load(dir, "books");
  EXPECT_EQ(a.dev.size(), 200u);  // 1400/200/400 (Liu et al. 2017)
  EXPECT_EQ(a.train.size(), 1400u);
  std::set<std::string> train_lines;
  for (const Example& e : a.train) train_lines.insert(e.tokens[1]);
  for (size_t i = 0; i < a.dev.size(); ++i) {
    EXPECT_EQ(train_lines.count(a.dev[i].tokens[1]), 0u);
    EXPECT_EQ(a.dev[i].tokens, b.dev[i].tokens);
  }
}

TEST(DataMtl16, BadInputsAreRefusedNamingTheProblem) {
  const std::string dir = fresh_dir();
  // Names are the paper's rows in lower case, not the files' stems.
  EXPECT_THAT(error_of([&] { load(kFixture, "kitchen_housewares"); }),
              AllOf(HasSubstr("unknown MTL-16 data set 'kitchen_housewares'"), HasSubstr("kitchen, magazines")));
  EXPECT_THAT(error_of([&] { load(kFixture, "MR"); }), HasSubstr("unknown MTL-16 data set 'MR'"));
  EXPECT_THAT(error_of([&] { load(kFixture, ""); }), HasSubstr("unknown MTL-16 data set ''"));
  write(dir, "dvd.task.train", "1\tfine film\n0\tdull\n");
  EXPECT_THAT(error_of([&] { load(dir, "dvd"); }), HasSubstr("dvd.task.test"));  // missing file
  write(dir, "dvd.task.test", "1\tfine\n2\tso so\n");
  EXPECT_THAT(error_of([&] { load(dir, "dvd"); }),
              AllOf(HasSubstr("dvd.task.test:2"), HasSubstr("must be 0 or 1"), HasSubstr("2")));
  write(dir, "dvd.task.test", "1 fine\n");
  EXPECT_THAT(error_of([&] { load(dir, "dvd"); }), AllOf(HasSubstr("dvd.task.test:1"), HasSubstr("label<TAB>text")));
  write(dir, "dvd.task.test", "1\tfine\textra\n");
  EXPECT_THAT(error_of([&] { load(dir, "dvd"); }), HasSubstr("found 3"));
  write(dir, "dvd.task.test", "1\t \n");
  EXPECT_THAT(error_of([&] { load(dir, "dvd"); }), HasSubstr("no tokens"));
}

TEST(DataMtl16, Table3HasAnMsTransAndATransformerPresetPerDataSet) {
  std::map<std::string, double> sum;  // per model, to check against the table's Average row
  for (const std::string& name : mtl16_datasets()) {
    for (const std::string model : {"mstrans", "transformer"}) {
      const std::string preset_name = model + "-mtl16-" + name;
      SCOPED_TRACE(preset_name);
      const Preset* p = find_preset(preset_name);
      ASSERT_NE(p, nullptr);
      std::map<std::string, std::string> values;
      for (const PresetSetting& s : p->settings) values[s.key] = s.value;
      EXPECT_EQ(values["model"], model);
      EXPECT_EQ(values["format"], "mtl16-" + name);
      EXPECT_EQ(values["hidden"], "300");  // H DIM (Table 1)
      EXPECT_EQ(values["heads"], "10");    // head DIM 30
      EXPECT_EQ(values.count("model:scales"), model == "mstrans" ? 1u : 0u);
      ASSERT_EQ(p->result.rfind("test accuracy ", 0), 0u);
      sum[model] += std::stod(p->result.substr(14));
    }
  }
  EXPECT_EQ(find_preset("mstrans-mtl16-dvd")->result, "test accuracy 86.25");
  EXPECT_EQ(find_preset("mstrans-mtl16-camera")->result, "test accuracy 89.00");
  EXPECT_EQ(find_preset("transformer-mtl16-dvd")->result, "test accuracy 77.75");
  // The figures average to the table's last row: 86.34 and 82.78.
  EXPECT_NEAR(sum["mstrans"] / 16, 86.34, 0.005);
  EXPECT_NEAR(sum["transformer"] / 16, 82.78, 0.005);
}

}  // namespace
}  // namespace attn
