// Generic directory formats: label<TAB>text, label<TAB>a<TAB>b, and
// CoNLL-style token<TAB>tag files.
#include <map>
#include <set>

#include "engine/error.h"
#include "train/loader_util.h"
#include "train/loaders.h"
#include "train/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;
using loader_util::join_path;

// A raw example before label names are known: label text plus its source.
struct RawLine {
  std::string label;
  std::string a, b;
};

std::vector<RawLine> read_labelled(const char* loader, const std::string& file, size_t fields_wanted) {
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
    out.push_back({f[0], f[1], fields_wanted > 2 ? f[2] : std::string()});
  }
  return out;
}

Dataset load_labelled_dir(const char* loader, const std::string& dir, TaskKind task) {
  size_t fields = task == TaskKind::Pair ? 3 : 2;
  std::string dev_file = join_path(dir, "dev.tsv");
  bool has_dev = loader_util::file_exists(dev_file);
  std::vector<RawLine> train = read_labelled(loader, join_path(dir, "train.tsv"), fields);
  std::vector<RawLine> dev = has_dev ? read_labelled(loader, dev_file, fields) : std::vector<RawLine>();
  std::vector<RawLine> test = read_labelled(loader, join_path(dir, "test.tsv"), fields);

  Dataset d;
  d.name = loader_util::base_name(dir);
  d.task = task;
  std::vector<std::string> names;
  for (const auto* part : {&train, &dev, &test})
    for (const RawLine& r : *part) names.push_back(r.label);
  d.label_names = loader_util::sorted_labels(names);
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

struct TaggedSentence {
  std::vector<std::string> tokens, tags;
};

std::vector<TaggedSentence> read_tagged(const std::string& file, bool conll) {
  const char* loader = "load_tagging_dir";
  std::vector<TaggedSentence> out;
  TaggedSentence current;
  auto finish = [&] {
    if (!current.tokens.empty()) out.push_back(std::move(current));
    current = TaggedSentence();
  };
  std::vector<std::string> lines = loader_util::read_lines(loader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (loader_util::is_blank(line)) {
      finish();
      continue;
    }
    if (line.compare(0, 10, "-DOCSTART-") == 0) continue;
    std::string token, tag;
    if (conll) {
      std::vector<std::string> cols = loader_util::split_whitespace(line);
      if (cols.size() < 2) fail_at(loader, file, i + 1, "expected at least two columns (token ... tag)");
      token = cols.front();
      tag = cols.back();
    } else {
      std::vector<std::string> cols = loader_util::split_tabs(line);
      if (cols.size() != 2)
        fail_at(loader, file, i + 1,
                "expected token<TAB>tag, found " + std::to_string(cols.size()) + " tab-separated fields");
      token = cols[0];
      tag = cols[1];
      if (token.empty() || tag.empty()) fail_at(loader, file, i + 1, "empty token or tag");
    }
    current.tokens.push_back(lowercase_token(token));
    current.tags.push_back(tag);
  }
  finish();
  return out;
}

}  // namespace

Dataset load_classification_tsv_dir(const std::string& dir) {
  return load_labelled_dir("load_classification_tsv_dir", dir, TaskKind::Classify);
}

Dataset load_pair_tsv_dir(const std::string& dir) { return load_labelled_dir("load_pair_tsv_dir", dir, TaskKind::Pair); }

Dataset load_tagging_dir(const std::string& dir) {
  // Picks NAME.tsv, else NAME.conll; "" when neither exists.
  auto pick = [&](const std::string& stem, bool& conll) -> std::string {
    std::string tsv = join_path(dir, stem + ".tsv"), co = join_path(dir, stem + ".conll");
    conll = false;
    if (loader_util::file_exists(tsv)) return tsv;
    conll = true;
    if (loader_util::file_exists(co)) return co;
    return "";
  };
  bool train_conll = false, dev_conll = false, test_conll = false;
  std::string train = pick("train", train_conll), dev = pick("dev", dev_conll), test = pick("test", test_conll);
  if (train.empty()) throw Error("load_tagging_dir: cannot open " + join_path(dir, "train.tsv") + " (or train.conll)");
  if (test.empty()) throw Error("load_tagging_dir: cannot open " + join_path(dir, "test.tsv") + " (or test.conll)");
  std::vector<TaggedSentence> tr = read_tagged(train, train_conll);
  std::vector<TaggedSentence> dv = dev.empty() ? std::vector<TaggedSentence>() : read_tagged(dev, dev_conll);
  std::vector<TaggedSentence> te = read_tagged(test, test_conll);

  Dataset d;
  d.name = loader_util::base_name(dir);
  d.task = TaskKind::Tag;
  std::vector<std::string> names;
  for (const auto* part : {&tr, &dv, &te})
    for (const TaggedSentence& s : *part) names.insert(names.end(), s.tags.begin(), s.tags.end());
  std::set<std::string> unique(names.begin(), names.end());
  d.label_names.assign(unique.begin(), unique.end());
  std::map<std::string, int64_t> index = loader_util::label_index(d.label_names);
  auto convert = [&](const std::vector<TaggedSentence>& raw, std::vector<Example>& out) {
    for (const TaggedSentence& s : raw) {
      Example e;
      e.tokens = s.tokens;
      for (const std::string& t : s.tags) e.tags.push_back(index.at(t));
      out.push_back(std::move(e));
    }
  };
  convert(tr, d.train);
  convert(dv, d.dev);
  convert(te, d.test);
  if (dev.empty()) d.dev = split_off(d.train, kDevSplitFraction, kDevSplitSeed);
  return d;
}

}  // namespace attn
