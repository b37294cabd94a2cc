// Word <-> id mapping built from training examples. Id 0 is padding and id 1
// the unknown word, so batching can pad with 0 and map unseen words to 1.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/train/data/char_vocab.h"
#include "attn/train/data/dataset.h"

namespace attn {

class Vocabulary {
 public:
  static constexpr int64_t kPad = 0, kUnk = 1;
  static constexpr const char* kPadWord = "<pad>";
  static constexpr const char* kUnkWord = "<unk>";

  Vocabulary();  // just <pad> and <unk>

  // Counts the words of `tokens` and `tokens_b` of every example and keeps
  // those seen at least `min_count` times, most frequent first (ties in byte
  // order, so the result does not depend on example order). `max_size` caps
  // the total size including <pad> and <unk> (0 = no cap; otherwise >= 2).
  static Vocabulary build(const std::vector<Example>& examples, int64_t min_count, int64_t max_size = 0);
  // From an explicit word list (without the two special entries).
  static Vocabulary from_words(const std::vector<std::string>& words);

  int64_t id(const std::string& word) const;  // kUnk when unknown
  const std::string& word(int64_t id) const;  // throws when out of range
  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  const std::vector<std::string>& words() const { return words_; }
  std::vector<int64_t> ids(const std::vector<std::string>& tokens) const;

  // One word per line, <pad> and <unk> first; written to a temporary file and
  // renamed, so a reader never sees half a file.
  void save(const std::string& path) const;
  // Throws attn::Error naming the file (and line) when it cannot be read,
  // does not start with <pad>, <unk>, or repeats a word.
  static Vocabulary load(const std::string& path);

  // The character alphabet, when the model reads characters (its
  // char_cnn key): batching then fills the character ids of every word.
  void set_characters(CharVocabulary characters);
  const CharVocabulary* characters() const { return characters_.get(); }

 private:
  void add(const std::string& word);
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> index_;
  std::shared_ptr<const CharVocabulary> characters_;
};

}  // namespace attn
