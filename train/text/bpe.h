// Joint byte-pair encoding (Sennrich, Haddow & Birch 2016, "Neural Machine
// Translation of Rare Words with Subword Units"), as subword-nmt learns and
// applies it: merges learned from word frequencies over whitespace-separated
// words, each word's last character marked with "</w>" so merges never cross
// a word boundary, and units continued by the next one marked with a
// trailing "@@". The text is expected pretokenised (train/text/pretokenize.h).
// Learning rule, tie-break and file format: docs/data.md, "Translation".
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn {

class Bpe {
 public:
  // Learns up to `merges` merges (>= 0) from the words of `lines`: each step
  // merges the most frequent adjacent pair of symbols, a tie going to the
  // pair whose (left, right) strings are largest in byte order (subword-nmt's
  // max over (count, pair)). Learning stops early when no pair occurs twice.
  static Bpe learn(const std::vector<std::string>& lines, int64_t merges);

  // The subword units of a line's words; every unit but a word's last ends
  // with "@@". A word's characters are merged by the learned merges in their
  // order (the earliest-learned pair present first, all its occurrences left
  // to right); characters never seen in learning stay single units.
  std::vector<std::string> encode(const std::string& line) const;
  // The same for words already split (Example.tokens of the parallel-text
  // loader); a word must not hold whitespace.
  std::vector<std::string> encode_words(const std::vector<std::string>& words) const;
  // The words again, separated by single spaces: a unit ending with "@@"
  // is glued to the next one.
  static std::string decode(const std::vector<std::string>& units);

  // subword-nmt's codes format ("#version: 0.2", one "left right" merge a
  // line) followed by "#attn-bpe-end N", which lets load() tell a truncated
  // file. Written to a temporary file, then renamed over `path`.
  void save(const std::string& path) const;
  // Throws attn::Error naming the file and line for anything else than what
  // save() writes: another header, a line that is not two symbols, a symbol
  // no earlier merge produced, a repeated merge, a missing or wrong end line.
  static Bpe load(const std::string& path);

  int64_t merges() const { return static_cast<int64_t>(merges_.size()); }
  // The merges in the order learned, symbols as in the file ("e</w>").
  const std::vector<std::pair<std::string, std::string>>& merge_list() const { return merges_; }

 private:
  void add_merge(const std::string& left, const std::string& right);
  std::vector<std::pair<std::string, std::string>> merges_;
  std::unordered_map<std::string, int64_t> rank_;  // "left right" -> position in merges_
};

// The end-of-word marker of the symbols (subword-nmt's).
constexpr const char* kEndOfWord = "</w>";

}  // namespace attn
