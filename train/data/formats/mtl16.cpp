// MTL-16 (Liu, Qiu and Huang 2017): sixteen binary sentiment data sets, each
// shipped as NAME.task.train, NAME.task.test (and NAME.task.unlabel, unused)
// with label<TAB>text lines.
#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;

const char* const kLoader = "load_mtl16";

std::vector<Example> read_mtl16_file(const std::string& file) {
  std::vector<Example> out;
  const std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) continue;
    const std::vector<std::string> fields = loader_util::split_tabs(lines[i]);
    if (fields.size() != 2)
      fail_at(kLoader, file, i + 1,
              "expected label<TAB>text, found " + std::to_string(fields.size()) + " tab-separated field(s)");
    if (fields[0] != "0" && fields[0] != "1")
      fail_at(kLoader, file, i + 1, "the label must be 0 or 1, found " + loader_util::quote(fields[0]));
    Example e;
    e.label = fields[0] == "1" ? 1 : 0;
    e.tokens = tokenize(fields[1]);
    if (e.tokens.empty()) fail_at(kLoader, file, i + 1, "the text has no tokens");
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

namespace {

// The data sets by the Multi-Scale Transformer paper's row names (Table 3),
// lower case, and the stems of the release's file names.
struct Mtl16Files {
  const char* name;
  const char* stem;
};
const Mtl16Files kMtl16[] = {
    {"apparel", "apparel"},     {"baby", "baby"},         {"books", "books"},
    {"camera", "camera_photo"}, {"dvd", "dvd"},           {"electronics", "electronics"},
    {"health", "health_personal_care"}, {"imdb", "imdb"}, {"kitchen", "kitchen_housewares"},
    {"magazines", "magazines"}, {"mr", "MR"},             {"music", "music"},
    {"software", "software"},   {"sports", "sports_outdoors"}, {"toys", "toys_games"},
    {"video", "video"},
};

}  // namespace

const std::vector<std::string>& mtl16_datasets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Mtl16Files& f : kMtl16) out.push_back(f.name);
    return out;
  }();
  return names;
}

Dataset load_mtl16(const std::string& dir, const std::string& dataset) {
  const Mtl16Files* files = nullptr;
  for (const Mtl16Files& f : kMtl16)
    if (dataset == f.name) files = &f;
  if (!files) {
    std::string known;
    for (const std::string& n : mtl16_datasets()) known += (known.empty() ? "" : ", ") + n;
    ATTN_CHECK(false, kLoader, "unknown MTL-16 data set '", dataset, "' (known: ", known, ")");
  }
  Dataset d;
  d.name = "mtl16-" + dataset;
  d.task = TaskKind::Classify;
  d.label_names = {"0", "1"};
  const std::string stem = loader_util::join_path(dir, std::string(files->stem) + ".task.");
  d.train = read_mtl16_file(stem + "train");
  d.test = read_mtl16_file(stem + "test");
  d.dev = split_off(d.train, kMtl16DevFraction, kDevSplitSeed);
  return d;
}

}  // namespace attn
