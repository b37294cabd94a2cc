// The papers' analysis rows as presets (train/cli/analysis_presets.h): a row
// is its main preset with a few settings changed, so it keeps the main row's
// training setup; the Multi-Scale Transformer's Table 6 rows build the head
// layouts their table describes. The switches of the other tables are tested
// with their encoders (tests/test_*_ablation.cpp).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "seeded_encoder_context.h"
#include "attn/models/multiscale.h"
#include "attn/train/cli/analysis_presets.h"

namespace attn {
namespace {

using namespace testing_support;

std::string setting(const Preset& p, const std::string& key) {
  for (const PresetSetting& s : p.settings)
    if (s.key == key) return s.value;
  return "";
}

TEST(AnalysisPresets, AVariantReplacesSettingsOfTheSameKeyAndAppendsNewOnes) {
  const Preset base{"m-f", "M on F", "X paper, Table 1", "acc 1", {{"a", "1", "n"}, {"b", "2", "n"}}};
  const Preset row = preset_variant(base, "m-f-r", "row", "X paper, Table 3", "acc 0.5",
                                    {{"b", "3", "changed"}, {"c", "4", "added"}});
  EXPECT_EQ(row.name, "m-f-r");
  EXPECT_EQ(row.source, "X paper, Table 3");
  EXPECT_EQ(row.result, "acc 0.5");
  ASSERT_EQ(row.settings.size(), 3u);
  EXPECT_EQ(setting(row, "a"), "1");
  EXPECT_EQ(setting(row, "b"), "3");
  EXPECT_EQ(row.settings[1].note, "changed");
  EXPECT_EQ(setting(row, "c"), "4");
  EXPECT_EQ(setting(base, "b"), "2");
  EXPECT_THROW(preset_named({base}, "other"), std::logic_error);
}

// "MODEL-FORMAT-ROW" rows of a main preset "MODEL-FORMAT".
std::vector<std::pair<const Preset*, const Preset*>> analysis_rows() {
  std::vector<std::pair<const Preset*, const Preset*>> rows;
  for (const Preset& p : all_presets()) {
    const size_t second_dash = p.name.find('-', p.name.find('-') + 1);
    if (second_dash == std::string::npos) continue;
    const Preset* base = find_preset(p.name.substr(0, second_dash));
    if (base) rows.emplace_back(&p, base);
  }
  return rows;
}

TEST(AnalysisPresets, EveryRowKeepsItsMainRowsTrainingSetup) {
  const auto rows = analysis_rows();
  EXPECT_GE(rows.size(), 9u);  // at least Table 6 of the Multi-Scale Transformer paper
  for (const auto& [row, base] : rows) {
    SCOPED_TRACE(row->name);
    EXPECT_NE(row->source, base->source);
    for (const char* key : {"task", "format", "model", "optimizer", "lr", "batch", "epochs", "max-steps",
                            "keep-prob", "weight-decay", "weight-decay-scope", "clip", "min-count"})
      EXPECT_EQ(setting(*row, key), setting(*base, key)) << key;
  }
}

TEST(AnalysisPresets, EveryRowOfTheMultiScaleTransformersTable6Exists) {
  const std::map<std::string, std::string> figures = {
      {"a", "85.5"}, {"b", "85.9"}, {"c", "84.9"}, {"d", "84.7"}, {"e", "84.3"},
      {"f", "84.3"}, {"g", "83.9"}, {"h", "81.7"}, {"i", "80.7"}};
  for (const auto& [letter, figure] : figures) {
    const Preset* p = find_preset("mstrans-snli-" + letter);
    ASSERT_NE(p, nullptr) << letter;
    EXPECT_EQ(p->result, "test accuracy " + figure);
    EXPECT_NE(p->source.find("Table 6"), std::string::npos);
  }
}

TEST(AnalysisPresets, EveryAblationRowOfTheThreeTablesExistsWithItsFigure) {
  const std::map<std::string, std::string> rows = {
      // MTSA paper, Table 3.
      {"mtsa-snli-no-masks", "85.3"},
      {"mtsa-snli-no-token2token", "85.8"},
      {"mtsa-snli-no-source2token", "84.9"},
      {"mtsa-snli-no-proposed-modules", "84.3"},
      // Bi-BloSAN paper, Table 3.
      {"biblosan-snli-no-local", "85.2"},
      {"biblosan-snli-no-global", "85.3"},
      {"biblosan-snli-no-mblosa", "83.1"},
      {"biblosan-snli-no-mblosa-no-s2t", "79.8"},
      // ReSAN paper, Table 2 (and Table 4's iterative sampling).
      {"resan-snli-no-unselected-heads", "86.1"},
      {"resan-snli-no-dependency-restricted", "85.6"},
      {"resan-snli-no-hard-attention", "86.0"},
      {"resan-snli-no-soft-self-attention", "83.4"},
      {"resan-snli-no-attentions", "83.1"},
      {"resan-snli-iterative", "86.2"}};
  for (const auto& [name, figure] : rows) {
    SCOPED_TRACE(name);
    const Preset* p = find_preset(name);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p->result.find(figure), std::string::npos) << p->result;
  }
}

// The encoder a Table 6 row builds, narrowed to 10 wide (2 per head) so the
// test is quick: width does not enter the head layout.
std::unique_ptr<Encoder> table6_encoder(const std::string& row) {
  const Preset* p = find_preset("mstrans-snli-" + row);
  Config config;
  for (const PresetSetting& s : p->settings)
    if (s.key.rfind("model:", 0) == 0 && s.key != "model:head_activation") config.set(s.key.substr(6), s.value);
  config.set("heads", setting(*p, "heads"));
  config.set("hidden", "10");
  SeededEncoderContext ctx(10, 1, 2);
  return build_mstrans_encoder(config, ctx);
}

std::vector<std::vector<int64_t>> head_layout(const Encoder& encoder) {
  const auto& ms = dynamic_cast<const MultiScaleTransformer&>(encoder);
  std::vector<std::vector<int64_t>> layout;
  for (int64_t l = 0; l < 3; ++l) layout.push_back(ms.layer(l).attention().head_counts());
  return layout;
}

TEST(AnalysisPresets, Table6MultiScaleRowsSpreadFiveHeadsOverFiveScalesByAlpha) {
  using Layout = std::vector<std::vector<int64_t>>;
  // C: alpha 0, every layer uniform.
  EXPECT_EQ(head_layout(*table6_encoder("c")), Layout(3, {1, 1, 1, 1, 1}));
  // A, B: the bottom layer favours small scales; D, E: large ones. The top layer is uniform.
  for (const char* row : {"a", "b", "d", "e"}) {
    SCOPED_TRACE(row);
    const Layout layout = head_layout(*table6_encoder(row));
    const bool local_first = std::string(row) < "c";
    for (const auto& layer : layout) {
      int64_t sum = 0;
      for (int64_t c : layer) sum += c;
      EXPECT_EQ(sum, 5);
    }
    EXPECT_EQ(layout[2], (std::vector<int64_t>{1, 1, 1, 1, 1}));
    if (local_first) EXPECT_GT(layout[0].front(), layout[0].back());
    else EXPECT_LT(layout[0].front(), layout[0].back());
  }
}

TEST(AnalysisPresets, Table6SingleScaleRowsGiveEveryHeadOfEveryLayerOneScale) {
  for (const char* row : {"f", "g", "h", "i"}) {
    SCOPED_TRACE(row);
    EXPECT_EQ(head_layout(*table6_encoder(row)), (std::vector<std::vector<int64_t>>(3, {5})));
  }
}

}  // namespace
}  // namespace attn
