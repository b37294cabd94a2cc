// Plain-text classification corpora: TREC and one-sentence-per-line files
// (CR, MPQA, SUBJ, MR), and the 10-fold cross-validation they are scored by.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;

struct TrecLine {
  std::string label;
  std::string text;
  size_t line_no;
};

// The six coarse classes of Li & Roth's question set, as the files spell them.
const std::vector<std::string> kTrecCoarseLabels = {"ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"};

std::vector<TrecLine> read_trec(const std::string& file, bool fine) {
  const char* loader = "load_trec";
  std::vector<TrecLine> out;
  std::vector<std::string> lines = loader_util::read_lines(loader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (loader_util::is_blank(line)) continue;
    // The label ends at the first space or TAB; the text is the rest.
    const size_t colon = line.find(':');
    const size_t gap = line.find_first_of(" \t");
    if (colon == std::string::npos || colon == 0 || (gap != std::string::npos && gap < colon))
      fail_at(loader, file, i + 1, "expected \"COARSE:fine text\"");
    if (gap == std::string::npos || gap == colon + 1)
      fail_at(loader, file, i + 1, "expected \"COARSE:fine text\" (missing fine label or text)");
    const std::string coarse = line.substr(0, colon);
    if (std::find(kTrecCoarseLabels.begin(), kTrecCoarseLabels.end(), coarse) == kTrecCoarseLabels.end())
      fail_at(loader, file, i + 1,
              "coarse label " + loader_util::quote(coarse) + " is not one of ABBR, DESC, ENTY, HUM, LOC, NUM");
    const std::string label = line.substr(0, gap);
    for (size_t c = colon + 1; c < label.size(); ++c)
      if (!std::isalnum(static_cast<unsigned char>(label[c])))
        fail_at(loader, file, i + 1, "fine label " + loader_util::quote(label) + " is not COARSE:word");
    const size_t text_start = line.find_first_not_of(" \t", gap);
    if (text_start == std::string::npos) fail_at(loader, file, i + 1, "the question after the label is empty");
    out.push_back({fine ? label : coarse, line.substr(text_start), i + 1});
  }
  return out;
}

}  // namespace

Dataset load_trec(const std::string& train, const std::string& test, bool fine) {
  std::vector<TrecLine> tr = read_trec(train, fine), te = read_trec(test, fine);
  std::vector<std::string> names;
  for (const auto* part : {&tr, &te})
    for (const TrecLine& l : *part) names.push_back(l.label);
  Dataset d;
  d.name = fine ? "trec50" : "trec6";
  d.task = TaskKind::Classify;
  d.label_names = loader_util::sorted_labels(names);
  std::map<std::string, int64_t> index = loader_util::label_index(d.label_names);
  auto convert = [&](const std::vector<TrecLine>& lines, std::vector<Example>& out) {
    for (const TrecLine& l : lines) {
      Example e;
      e.tokens = tokenize(l.text);
      e.label = index.at(l.label);
      out.push_back(std::move(e));
    }
  };
  convert(tr, d.train);
  convert(te, d.test);
  // TREC ships without a dev set: split one off train as the TSV formats do.
  d.dev = split_off(d.train, kDevSplitFraction, kDevSplitSeed);
  return d;
}

Dataset load_sentence_per_line(const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& class_files) {
  const char* loader = "load_sentence_per_line";
  ATTN_CHECK(!class_files.empty(), loader, "no class files for ", name);
  Dataset d;
  d.name = name;
  d.task = TaskKind::Classify;
  for (size_t c = 0; c < class_files.size(); ++c) {
    const auto& [label, file] = class_files[c];
    ATTN_CHECK(std::find(d.label_names.begin(), d.label_names.end(), label) == d.label_names.end(), loader,
               "label '", label, "' given twice for ", name);
    d.label_names.push_back(label);
    std::vector<std::string> lines = loader_util::read_lines(loader, file);
    size_t sentences = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find('\0') != std::string::npos) fail_at(loader, file, i + 1, "NUL byte: not a text file");
      if (loader_util::is_blank(lines[i])) continue;
      Example e;
      e.tokens = tokenize(lines[i]);
      e.label = static_cast<int64_t>(c);
      d.train.push_back(std::move(e));
      ++sentences;
    }
    // An empty class file would leave a label no example has: training would
    // see one class and score perfectly.
    if (sentences == 0)
      throw Error(std::string(loader) + ": " + file + " (class '" + label + "' of " + name +
                  ") has no sentences: the file is empty or blank");
  }
  return d;
}

std::vector<std::pair<std::vector<Example>, std::vector<Example>>> ten_fold_splits(const std::vector<Example>& all,
                                                                                   uint64_t seed) {
  constexpr size_t kFolds = 10;
  // Positions grouped by label (std::map: labels in a fixed order), each group
  // shuffled, then dealt round-robin so every fold gets its share of a class.
  std::map<int64_t, std::vector<size_t>> by_label;
  for (size_t i = 0; i < all.size(); ++i) by_label[std::max<int64_t>(all[i].label, -1)].push_back(i);
  Generator gen(seed);
  std::vector<size_t> fold_of(all.size());
  size_t dealt = 0;
  for (auto& [label, positions] : by_label) {
    for (size_t i = positions.size(); i > 1; --i) std::swap(positions[i - 1], positions[gen.next_u64() % i]);
    for (size_t p : positions) fold_of[p] = dealt++ % kFolds;  // continue the deal across classes
  }
  std::vector<std::pair<std::vector<Example>, std::vector<Example>>> folds(kFolds);
  for (size_t f = 0; f < kFolds; ++f) {
    for (size_t i = 0; i < all.size(); ++i) (fold_of[i] == f ? folds[f].second : folds[f].first).push_back(all[i]);
  }
  return folds;
}

}  // namespace attn
