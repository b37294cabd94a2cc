#include "attn/train/data/char_vocab.h"

#include <algorithm>
#include <fstream>

#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"

namespace attn {

namespace {
// The length of the UTF-8 sequence starting at s[i], or 1 where the bytes
// there are not valid UTF-8.
size_t sequence_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) >> 6) != 0x2) return 1;
  return n;
}
}  // namespace

std::vector<std::string> utf8_characters(const std::string& word) {
  std::vector<std::string> out;
  for (size_t i = 0; i < word.size();) {
    const size_t n = sequence_length(word, i);
    out.push_back(word.substr(i, n));
    i += n;
  }
  return out;
}

const std::vector<std::string>& character_words(const Example& e) {
  return e.cased_tokens.empty() ? e.tokens : e.cased_tokens;
}

CharVocabulary::CharVocabulary() {
  add(kPadEntry);
  add(kUnkEntry);
}

void CharVocabulary::add(const std::string& character) {
  index_.emplace(character, static_cast<int64_t>(chars_.size()));
  chars_.push_back(character);
}

CharVocabulary CharVocabulary::build(const std::vector<Example>& examples) {
  std::unordered_map<std::string, int64_t> counts;
  const auto count = [&](const std::vector<std::string>& words) {
    for (const std::string& w : words)
      for (const std::string& c : utf8_characters(w)) ++counts[c];
  };
  for (const Example& e : examples) {
    count(character_words(e));
    count(e.tokens_b);
  }
  std::vector<std::pair<std::string, int64_t>> kept(counts.begin(), counts.end());
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  CharVocabulary v;
  for (const auto& entry : kept) v.add(entry.first);
  return v;
}

int64_t CharVocabulary::id(const std::string& character) const {
  auto it = index_.find(character);
  return it == index_.end() ? kUnk : it->second;
}

std::vector<int64_t> CharVocabulary::word_ids(const std::string& word) const {
  std::vector<std::string> chars = utf8_characters(word);
  if (chars.size() > kMaxWordChars) {
    const size_t half = kMaxWordChars / 2;
    chars.erase(chars.begin() + static_cast<std::ptrdiff_t>(half),
                chars.end() - static_cast<std::ptrdiff_t>(kMaxWordChars - half));
  }
  std::vector<int64_t> out;
  for (const std::string& c : chars) out.push_back(id(c));
  return out;
}

void CharVocabulary::save(const std::string& path) const {
  std::string text;
  for (const std::string& c : chars_) text += c + "\n";
  write_file_atomically(path, text);
}

CharVocabulary CharVocabulary::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ATTN_CHECK(in.good(), "CharVocabulary::load", "cannot open ", path);
  CharVocabulary v;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (number <= 2) {
      const char* expected = number == 1 ? kPadEntry : kUnkEntry;
      ATTN_CHECK(line == expected, "CharVocabulary::load", where, "expected ", expected, ", found '", line, "'");
      continue;
    }
    ATTN_CHECK(utf8_characters(line).size() == 1, "CharVocabulary::load", where, "'", line,
               "' is not one character");
    ATTN_CHECK(!v.index_.count(line), "CharVocabulary::load", where, "repeats the character '", line, "'");
    v.add(line);
  }
  ATTN_CHECK(number >= 2, "CharVocabulary::load", path, " is empty or cut short: it starts with ", kPadEntry,
             " and ", kUnkEntry);
  return v;
}

}  // namespace attn
