// The Multi-Scale Transformer paper's Table 4 rows as presets: every row our
// encoders cover, with its figure, Table 1's sequence-labelling settings and
// the character feature exactly on the "+ Char" rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/train/cli/presets.h"

using namespace attn;
using ::testing::HasSubstr;

namespace {
std::string setting(const Preset& p, const std::string& key) {
  for (const PresetSetting& s : p.settings)
    if (s.key == key) return s.value;
  return "";
}
}  // namespace

TEST(SeqlabPresets, EveryTable4RowOurEncodersCoverHasItsFigure) {
  struct Row {
    const char* name;
    const char* figure;
  };
  const Row rows[] = {
      {"transformer-ptb-pos", "96.31"},       {"transformer-conll03", "86.48"},       {"transformer-conll12", "83.57"},
      {"transformer-ptb-pos-char", "97.04"},  {"transformer-conll03-char", "88.26"},  {"transformer-conll12-char", "85.14"},
      {"mstrans-ptb-pos", "97.24"},           {"mstrans-conll03", "89.38"},           {"mstrans-conll12", "85.26"},
      {"mstrans-ptb-pos-char", "97.54"},      {"mstrans-conll03-char", "91.33"},      {"mstrans-conll12-char", "86.77"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const Preset* p = find_preset(row.name);
    ASSERT_NE(p, nullptr);
    const std::string name = row.name;
    EXPECT_THAT(p->result, HasSubstr(row.figure));
    EXPECT_THAT(p->result, HasSubstr(name.find("ptb-pos") != std::string::npos ? "accuracy" : "entity F1"));
    EXPECT_THAT(p->source, HasSubstr("Tables 1 and 4"));
    EXPECT_EQ(setting(*p, "task"), "tag");
    EXPECT_EQ(setting(*p, "hidden"), "300");
    EXPECT_EQ(setting(*p, "heads"), "10");
    const bool chars = name.size() > 5 && name.compare(name.size() - 5, 5, "-char") == 0;
    EXPECT_EQ(setting(*p, "model:char_cnn"), chars ? "true" : "");
    if (name.rfind("mstrans", 0) == 0) {
      EXPECT_EQ(setting(*p, "model:scales"), "1,3,5,7,9");
      EXPECT_EQ(setting(*p, "model:alpha"), "1.0");
    } else {
      EXPECT_EQ(setting(*p, "model"), "transformer");
      EXPECT_EQ(setting(*p, "model:scales"), "");
    }
  }
}
