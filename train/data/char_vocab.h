// The character alphabet of the character feature (models/char_cnn.h):
// UTF-8 code points of the training words, with padding and an unknown
// character, and the character ids of a word (its length capped).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/train/data/dataset.h"

namespace attn {

class CharVocabulary {
 public:
  static constexpr int64_t kPad = 0, kUnk = 1;
  static constexpr const char* kPadEntry = "<pad>";
  static constexpr const char* kUnkEntry = "<unk>";
  // Characters read of a word: a longer word keeps its first and last
  // kMaxWordChars / 2 (prefixes and suffixes carry case and inflection).
  static constexpr size_t kMaxWordChars = 20;

  CharVocabulary();  // just <pad> and <unk>

  // Every code point of the training words (cased_tokens where a loader
  // kept them, else tokens; tokens_b too), most frequent first, ties in
  // byte order. Bytes that are not valid UTF-8 are characters of their own.
  static CharVocabulary build(const std::vector<Example>& examples);

  int64_t size() const { return static_cast<int64_t>(chars_.size()); }
  int64_t id(const std::string& character) const;  // kUnk when unknown
  // The ids of `word`'s characters, at most kMaxWordChars (see above).
  std::vector<int64_t> word_ids(const std::string& word) const;

  // One character per line after <pad> and <unk>; written atomically.
  void save(const std::string& path) const;
  // Throws attn::Error naming the file (and line) when it cannot be read,
  // does not start with <pad> and <unk>, or holds a line that is not one
  // character or repeats one.
  static CharVocabulary load(const std::string& path);

 private:
  void add(const std::string& character);
  std::vector<std::string> chars_;
  std::unordered_map<std::string, int64_t> index_;
};

// `word` cut into UTF-8 code points (an invalid byte is one piece).
std::vector<std::string> utf8_characters(const std::string& word);

// The words a character feature reads for `e`: cased_tokens when the loader
// kept them, else tokens.
const std::vector<std::string>& character_words(const Example& e);

}  // namespace attn
