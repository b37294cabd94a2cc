// CoNLL-2012 (OntoNotes 5.0) NER from the shared task's *_conll files, the
// documents of each split concatenated into DIR/train.english.v4_gold_conll,
// dev.english.v4_gold_conll and test.english.v4_gold_conll (as the
// coreference setups build them). Column 11 holds the names in bracket
// notation, "(PERSON*" opening a name, "*" inside or outside one, "*)"
// closing it, "(GPE)" a one-word name; it becomes BIO (or BIOES).
#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/formats/tag_schemes.h"
#include "attn/train/data/formats/tagged_sentences.h"

namespace attn {

namespace {

using loader_util::fail_at;
using loader_util::quote;
using loader_util::TaggedFile;
using loader_util::TaggedSentence;

const char* const kLoader = "load_conll12";
// document, part, word number, word, POS, parse, lemma, frameset, sense,
// speaker, names, the predicates' arguments (one column each), coreference.
constexpr size_t kMinColumns = 12;
constexpr size_t kWordNumber = 2, kWord = 3, kNames = 10;

// Reads one bracket cell into a BIO tag; `open` is the type of the name
// being read ("" outside one).
std::string bio_of_cell(const std::string& file, size_t line, const std::string& cell, std::string& open) {
  size_t at = 0;
  std::string starts;
  if (cell[0] == '(') {
    at = cell.find_first_of("*)", 1);
    starts = cell.substr(1, at == std::string::npos ? std::string::npos : at - 1);
    if (starts.empty() || at == std::string::npos)
      fail_at(kLoader, file, line, "name cell " + quote(cell) + " is not (TYPE*, *, *), (TYPE) or (TYPE*)");
    if (!open.empty())
      fail_at(kLoader, file, line, "name " + quote(starts) + " opens inside the open name " + quote(open));
  }
  if (at < cell.size() && cell[at] == '*') ++at;
  const bool closes = at < cell.size() && cell[at] == ')';
  if (closes) ++at;
  if (at != cell.size() || (starts.empty() && cell[0] != '*'))
    fail_at(kLoader, file, line, "name cell " + quote(cell) + " is not (TYPE*, *, *), (TYPE) or (TYPE*)");
  std::string tag;
  if (!starts.empty()) {
    tag = "B-" + starts;
    open = starts;
  } else if (!open.empty()) {
    tag = "I-" + open;
  } else {
    if (closes) fail_at(kLoader, file, line, "name cell " + quote(cell) + " closes a name that never opened");
    tag = "O";
  }
  if (closes) open.clear();
  return tag;
}

TaggedFile read_conll12(const std::string& file, TagScheme scheme) {
  TaggedFile out{file, {}};
  TaggedSentence current;
  std::string open;
  auto finish = [&](size_t line) {
    if (!open.empty()) fail_at(kLoader, file, line, "the sentence ends inside the name " + quote(open));
    if (!current.tokens.empty()) {
      current.tags = bio_in_scheme(current.tags, scheme);
      out.sentences.push_back(std::move(current));
    }
    current = TaggedSentence();
  };
  const std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (loader_util::is_blank(line) || line.compare(0, 6, "#begin") == 0 || line.compare(0, 4, "#end") == 0) {
      finish(i + 1);
      continue;
    }
    const std::vector<std::string> cols = loader_util::split_whitespace(line);
    if (cols.size() < kMinColumns)
      fail_at(kLoader, file, i + 1,
              "expected at least " + std::to_string(kMinColumns) + " columns of a *_conll file (names in column " +
                  std::to_string(kNames + 1) + "), found " + std::to_string(cols.size()));
    // The word number restarts at 0 with each sentence: a mismatch is a
    // missing blank line or a line lost.
    if (cols[kWordNumber] != std::to_string(current.tokens.size()))
      fail_at(kLoader, file, i + 1,
              "word number " + quote(cols[kWordNumber]) + " where the sentence's word " +
                  std::to_string(current.tokens.size()) + " was expected (a missing blank line?)");
    current.tokens.push_back(cols[kWord]);
    current.tags.push_back(bio_of_cell(file, i + 1, cols[kNames], open));
    current.lines.push_back(i + 1);
  }
  finish(lines.size());
  return out;
}

}  // namespace

Dataset load_conll12(const std::string& dir, TagScheme scheme) {
  auto path = [&](const char* split) { return loader_util::join_path(dir, std::string(split) + ".english.v4_gold_conll"); };
  return loader_util::tagged_dataset(kLoader, "conll12", read_conll12(path("train"), scheme),
                                     read_conll12(path("dev"), scheme), read_conll12(path("test"), scheme), false);
}

}  // namespace attn
