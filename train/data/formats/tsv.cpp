// Generic directory formats: label<TAB>text and label<TAB>a<TAB>b
// (tagging directories are in tagging.cpp).
#include <map>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;
using loader_util::join_path;

// A raw example before label names are known: label text plus its source.
struct RawLine {
  std::string label;
  std::string a, b;
};

std::vector<RawLine> read_labelled(const char* loader, const std::string& file, size_t fields_wanted,
                                   loader_util::LabelTally& labels) {
  std::vector<RawLine> out;
  std::vector<std::string> lines = loader_util::read_lines(loader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) continue;
    std::vector<std::string> f = loader_util::split_tabs(lines[i]);
    if (f.size() != fields_wanted)
      fail_at(loader, file, i + 1,
              "expected " + std::to_string(fields_wanted) + " tab-separated fields (" +
                  (fields_wanted == 2 ? "label<TAB>text" : "label<TAB>sentence_a<TAB>sentence_b") + "), found " +
                  std::to_string(f.size()));
    if (loader_util::is_blank(f[0])) fail_at(loader, file, i + 1, "empty label");
    labels.add(f[0], file, i + 1, out.empty());
    out.push_back({f[0], f[1], fields_wanted > 2 ? f[2] : std::string()});
  }
  return out;
}

Dataset load_labelled_dir(const char* loader, const std::string& dir, TaskKind task, bool allow_similar_labels) {
  size_t fields = task == TaskKind::Pair ? 3 : 2;
  std::string dev_file = join_path(dir, "dev.tsv");
  bool has_dev = loader_util::is_regular_file(dev_file);
  loader_util::LabelTally labels;
  std::vector<RawLine> train = read_labelled(loader, join_path(dir, "train.tsv"), fields, labels);
  std::vector<RawLine> dev = has_dev ? read_labelled(loader, dev_file, fields, labels) : std::vector<RawLine>();
  std::vector<RawLine> test = read_labelled(loader, join_path(dir, "test.tsv"), fields, labels);
  labels.check(loader, allow_similar_labels);

  Dataset d;
  d.name = loader_util::base_name(dir);
  d.task = task;
  d.label_names = labels.names();
  std::map<std::string, int64_t> index = loader_util::label_index(d.label_names);
  auto convert = [&](const std::vector<RawLine>& raw, std::vector<Example>& out) {
    for (const RawLine& r : raw) {
      Example e;
      e.label = index.at(r.label);
      e.tokens = tokenize(r.a);
      if (task == TaskKind::Pair) e.tokens_b = tokenize(r.b);
      out.push_back(std::move(e));
    }
  };
  convert(train, d.train);
  convert(dev, d.dev);
  convert(test, d.test);
  if (!has_dev) d.dev = split_off(d.train, kDevSplitFraction, kDevSplitSeed);
  return d;
}

}  // namespace

Dataset load_classification_tsv_dir(const std::string& dir, bool allow_similar_labels) {
  return load_labelled_dir("load_classification_tsv_dir", dir, TaskKind::Classify, allow_similar_labels);
}

Dataset load_pair_tsv_dir(const std::string& dir, bool allow_similar_labels) {
  return load_labelled_dir("load_pair_tsv_dir", dir, TaskKind::Pair, allow_similar_labels);
}

}  // namespace attn
