// CoNLL-style tagging directories: token<TAB>tag (.tsv) or whitespace
// columns (.conll), with the checks that keep a wrong file from training for
// an epoch before anything notices: classification TSVs read as tagging data,
// header rows, near-duplicate tags and chunk tag sets with unprefixed tags.
#include <unordered_set>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/formats/tagged_sentences.h"

namespace attn {

namespace {

using loader_util::fail_at;
using loader_util::join_path;
using loader_util::quote;
using loader_util::TaggedFile;
using loader_util::TaggedSentence;

const char* const kLoader = "load_tagging_dir";
const char* const kLooksLikeClassification =
    "this looks like a label<TAB>text classification file, not token<TAB>tag lines (is --task right?)";

// In a real tagging file distinct tokens far outnumber distinct tags; the
// reverse, over enough lines, is a label<TAB>text file with one-word texts.
constexpr size_t kMinLinesForColumnCheck = 50;

void check_columns_not_swapped(const TaggedFile& f) {
  std::unordered_set<std::string> tokens, tags;
  size_t lines = 0;
  for (const TaggedSentence& s : f.sentences) {
    tokens.insert(s.tokens.begin(), s.tokens.end());
    tags.insert(s.tags.begin(), s.tags.end());
    lines += s.tokens.size();
  }
  if (lines >= kMinLinesForColumnCheck && tags.size() > tokens.size())
    throw Error(std::string(kLoader) + ": " + f.path + ": " + std::to_string(tags.size()) +
                " distinct tags but only " + std::to_string(tokens.size()) + " distinct tokens: " +
                kLooksLikeClassification);
}

TaggedFile read_tagged(const std::string& file, bool conll) {
  TaggedFile out{file, {}};
  TaggedSentence current;
  auto finish = [&] {
    if (!current.tokens.empty()) out.sentences.push_back(std::move(current));
    current = TaggedSentence();
  };
  std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
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
      if (cols.size() < 2) fail_at(kLoader, file, i + 1, "expected at least two columns (token ... tag)");
      token = cols.front();
      tag = cols.back();
    } else {
      std::vector<std::string> cols = loader_util::split_tabs(line);
      if (cols.size() != 2)
        fail_at(kLoader, file, i + 1,
                "expected token<TAB>tag, found " + std::to_string(cols.size()) + " tab-separated fields");
      token = cols[0];
      tag = cols[1];
      if (token.empty() || tag.empty()) fail_at(kLoader, file, i + 1, "empty token or tag");
      // A tag is one symbol; a space between its characters means a sentence
      // (spaces around it are left to the near-duplicate check).
      size_t first = tag.find_first_not_of(' '), last = tag.find_last_not_of(' ');
      if (first != std::string::npos && tag.find(' ', first) < last)
        fail_at(kLoader, file, i + 1, "tag " + quote(tag) + " contains spaces: " + kLooksLikeClassification);
    }
    current.tokens.push_back(token);
    current.tags.push_back(tag);
    current.lines.push_back(i + 1);
  }
  finish();
  check_columns_not_swapped(out);
  return out;
}

}  // namespace

Dataset load_tagging_dir(const std::string& dir, bool allow_similar_labels) {
  // Picks NAME.tsv, else NAME.conll; "" when neither exists.
  auto pick = [&](const std::string& stem, bool& conll) -> std::string {
    std::string tsv = join_path(dir, stem + ".tsv"), co = join_path(dir, stem + ".conll");
    conll = false;
    if (loader_util::is_regular_file(tsv)) return tsv;
    conll = true;
    if (loader_util::is_regular_file(co)) return co;
    return "";
  };
  bool train_conll = false, dev_conll = false, test_conll = false;
  std::string train = pick("train", train_conll), dev = pick("dev", dev_conll), test = pick("test", test_conll);
  if (train.empty()) throw Error(std::string(kLoader) + ": cannot open " + join_path(dir, "train.tsv") + " (or train.conll)");
  if (test.empty()) throw Error(std::string(kLoader) + ": cannot open " + join_path(dir, "test.tsv") + " (or test.conll)");
  const TaggedFile tr = read_tagged(train, train_conll);
  const TaggedFile dv = dev.empty() ? TaggedFile() : read_tagged(dev, dev_conll);
  const TaggedFile te = read_tagged(test, test_conll);
  return loader_util::tagged_dataset(kLoader, loader_util::base_name(dir), tr, dv, te, allow_similar_labels);
}

}  // namespace attn
