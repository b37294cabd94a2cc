#include "attn/train/data/vocab.h"

#include <algorithm>
#include <fstream>

#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"

namespace attn {

Vocabulary::Vocabulary() {
  add(kPadWord);
  add(kUnkWord);
}

void Vocabulary::add(const std::string& word) {
  index_.emplace(word, static_cast<int64_t>(words_.size()));
  words_.push_back(word);
}

Vocabulary Vocabulary::build(const std::vector<Example>& examples, int64_t min_count, int64_t max_size) {
  ATTN_CHECK(min_count >= 1, "Vocabulary::build", "min_count must be >= 1, got ", min_count);
  ATTN_CHECK(max_size == 0 || max_size >= 2, "Vocabulary::build",
             "max_size must be 0 (no cap) or >= 2 (<pad> and <unk>), got ", max_size);
  std::unordered_map<std::string, int64_t> counts;
  for (const Example& e : examples) {
    for (const std::string& w : e.tokens) ++counts[w];
    for (const std::string& w : e.tokens_b) ++counts[w];
    for (const auto& sentence : e.passage)
      for (const std::string& w : sentence) ++counts[w];
  }
  std::vector<std::pair<std::string, int64_t>> kept;
  for (auto& [w, c] : counts)
    if (c >= min_count && w != kPadWord && w != kUnkWord && !w.empty()) kept.emplace_back(w, c);
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (max_size > 0 && static_cast<int64_t>(kept.size()) > max_size - 2) kept.resize(static_cast<size_t>(max_size - 2));
  Vocabulary v;
  for (const auto& entry : kept) v.add(entry.first);
  return v;
}

Vocabulary Vocabulary::from_words(const std::vector<std::string>& words) {
  Vocabulary v;
  for (const std::string& w : words) {
    ATTN_CHECK(!w.empty() && w.find('\n') == std::string::npos, "Vocabulary::from_words",
               "words must be non-empty and contain no newline");
    ATTN_CHECK(!v.index_.count(w), "Vocabulary::from_words", "repeated word '", w, "'");
    v.add(w);
  }
  return v;
}

void Vocabulary::set_characters(CharVocabulary characters) {
  characters_ = std::make_shared<const CharVocabulary>(std::move(characters));
}

int64_t Vocabulary::id(const std::string& word) const {
  auto it = index_.find(word);
  return it == index_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::word(int64_t id) const {
  ATTN_CHECK(id >= 0 && id < size(), "Vocabulary::word", "id ", id, " out of range for size ", size());
  return words_[static_cast<size_t>(id)];
}

std::vector<int64_t> Vocabulary::ids(const std::vector<std::string>& tokens) const {
  std::vector<int64_t> out;
  out.reserve(tokens.size());
  for (const std::string& t : tokens) out.push_back(id(t));
  return out;
}

void Vocabulary::save(const std::string& path) const {
  std::string text;
  for (const std::string& w : words_) text += w + "\n";
  write_file_atomically(path, text);
}

Vocabulary Vocabulary::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("Vocabulary::load: cannot open " + path);
  auto fail = [&](size_t line, const std::string& what) {
    throw Error("Vocabulary::load: " + path + ":" + std::to_string(line) + ": " + what);
  };
  std::vector<std::string> words;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1 && line != kPadWord) fail(1, std::string("expected ") + kPadWord + ", found '" + line + "'");
    if (number == 2 && line != kUnkWord) fail(2, std::string("expected ") + kUnkWord + ", found '" + line + "'");
    if (number <= 2) continue;
    if (line.empty()) fail(number, "empty word");
    words.push_back(line);
  }
  if (number < 2) fail(number + 1, "file ends before <pad> and <unk>");
  Vocabulary v;
  for (size_t i = 0; i < words.size(); ++i) {
    if (v.index_.count(words[i])) fail(i + 3, "repeated word '" + words[i] + "'");
    v.add(words[i]);
  }
  return v;
}

}  // namespace attn
