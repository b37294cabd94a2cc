#include "attn/train/cli/analysis_presets.h"
#include "attn/train/cli/dataset_presets.h"

namespace attn {

// Table 3 of the Multi-Scale Transformer paper, one row per data set. Table 1
// gives MTL-16 the SST settings (H DIM 300, alpha 0.5, head DIM 30, the
// candidate scales 1, 3, N/16, N/8, N/4), so each row is mstrans-sst5 on
// another data set. The paper does not describe its Transformer column: it is
// the same stack with every head attending to the whole sentence (the
// registry's transformer), at MS-Trans's width, heads and layers, so the two
// columns differ only in the heads' scales.
std::vector<Preset> mtl16_presets(const std::vector<Preset>& made) {
  const Preset& base = preset_named(made, "mstrans-sst5");
  struct Row {
    const char* format;  // mtl16-NAME's NAME
    const char* shown;   // the table's row label
    const char* ms_trans;
    const char* transformer;
  };
  static const Row kTable3[] = {
      {"apparel", "Apparel", "87.25", "82.25"},       {"baby", "Baby", "85.50", "84.50"},
      {"books", "Books", "85.25", "81.50"},           {"camera", "Camera", "89.00", "86.00"},
      {"dvd", "DVD", "86.25", "77.75"},               {"electronics", "Electronics", "86.50", "81.50"},
      {"health", "Health", "87.50", "83.50"}, {"imdb", "IMDB", "84.25", "82.50"},
      {"kitchen", "Kitchen", "85.50", "83.00"},  {"magazines", "Magazines", "91.50", "89.50"},
      {"mr", "MR", "79.25", "77.25"},                 {"music", "Music", "82.00", "79.00"},
      {"software", "Software", "88.50", "85.25"},     {"sports", "Sports", "85.75", "84.75"},
      {"toys", "Toys", "87.50", "82.00"},       {"video", "Video", "90.00", "84.25"},
  };
  const std::string source = "Multi-Scale Transformer paper, Experiments (Text Classification); Tables 1 and 3, row ";
  std::vector<Preset> ms_rows, transformer_rows;
  for (const Row& r : kTable3) {
    const std::string format = std::string("mtl16-") + r.format;
    const std::string row = std::string(r.shown);
    const PresetSetting data = {"format", format, "MTL-16's " + row + " (1400/200/400, Table 1)"};
    ms_rows.push_back(preset_variant(base, "mstrans-" + format, "Multi-Scale Transformer on MTL-16 " + row,
                                     source + row + ", column MS-Trans",
                                     std::string("test accuracy ") + r.ms_trans, {data}));
    transformer_rows.push_back(without_settings(
        preset_variant(base, "transformer-" + format, "Transformer on MTL-16 " + row,
                       source + row + ", column Transformer", std::string("test accuracy ") + r.transformer,
                       {data,
                        {"model", "transformer", "the table's \"Transformer\" column"},
                        {"heads", "10", "unstated: MS-Trans's heads (head DIM 30, Table 1)"},
                        {"model:layers", "3", "unstated: MS-Trans's L = 3"},
                        {"model:head_activation", "relu", "unstated: relu, as MS-Trans's"}}),
        {"model:alpha", "model:scales"}));
  }
  ms_rows.insert(ms_rows.end(), transformer_rows.begin(), transformer_rows.end());
  return ms_rows;
}

}  // namespace attn
