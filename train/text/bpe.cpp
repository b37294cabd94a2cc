#include "attn/train/text/bpe.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "attn/engine/error.h"
#include "attn/train/text/utf8_chars.h"
#include "attn/util/atomic_file.h"
#include "attn/util/text.h"

namespace attn {

namespace {

const char* const kHeader = "#version: 0.2";
const char* const kEndLine = "#attn-bpe-end ";
const std::string kContinued = "@@";

// A word's starting symbols: its characters, the last one marked.
std::vector<std::string> initial_symbols(const std::string& word) {
  std::vector<std::string> symbols = text::utf8_chars(word);
  if (!symbols.empty()) symbols.back() += kEndOfWord;
  return symbols;
}

std::string pair_key(const std::string& left, const std::string& right) { return left + ' ' + right; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Merges every occurrence of (a, b) in `word`, left to right, without
// overlaps ("x x x" with (x, x) gives "xx x", as subword-nmt does).
template <class Sym, class Make>
void merge_pair(std::vector<Sym>& word, const Sym& a, const Sym& b, Make make_merged) {
  std::vector<Sym> merged;
  merged.reserve(word.size());
  for (size_t i = 0; i < word.size(); ++i) {
    if (i + 1 < word.size() && word[i] == a && word[i + 1] == b) {
      merged.push_back(make_merged());
      ++i;
    } else {
      merged.push_back(word[i]);
    }
  }
  word.swap(merged);
}

// The learner's state: the distinct words as symbol ids with their counts,
// the count of every adjacent pair, and where each pair occurs.
class Learner {
 public:
  explicit Learner(const std::vector<std::string>& lines) {
    std::map<std::string, int64_t> counts;  // ordered: the ids below do not depend on hashing
    for (const std::string& line : lines)
      for (const std::string& w : text::split_python_whitespace(line)) ++counts[w];
    for (const auto& [word, count] : counts) {
      std::vector<int32_t> ids;
      for (const std::string& s : initial_symbols(word)) ids.push_back(intern(s));
      words_.push_back(std::move(ids));
      freq_.push_back(count);
    }
    std::unordered_map<uint64_t, int64_t> delta;
    for (size_t w = 0; w < words_.size(); ++w) add_pairs(w, +1, delta);
    publish(delta);
  }

  // The next merge, or false when no pair occurs at least twice.
  bool best(int32_t& a, int32_t& b) {
    while (!heap_.empty()) {
      const Entry top = heap_.top();
      heap_.pop();
      auto it = pair_count_.find(top.key);
      if (it == pair_count_.end() || it->second != top.count) continue;  // stale entry
      if (top.count < 2) return false;
      a = static_cast<int32_t>(top.key >> 32);
      b = static_cast<int32_t>(top.key & 0xffffffffu);
      return true;
    }
    return false;
  }

  void apply(int32_t a, int32_t b) {
    const uint64_t key = pack(a, b);
    const int32_t ab = intern(names_[a] + names_[b]);
    std::vector<int32_t> where = where_[key];
    std::sort(where.begin(), where.end());
    where.erase(std::unique(where.begin(), where.end()), where.end());
    std::unordered_map<uint64_t, int64_t> delta;
    for (int32_t w : where) {
      std::vector<int32_t>& word = words_[w];
      bool present = false;
      for (size_t i = 0; i + 1 < word.size() && !present; ++i) present = word[i] == a && word[i + 1] == b;
      if (!present) continue;  // an earlier merge took the pair out of this word
      add_pairs(w, -1, delta);
      merge_pair(word, a, b, [&] { return ab; });
      add_pairs(w, +1, delta);
    }
    where_.erase(key);
    publish(delta);
  }

  const std::string& name(int32_t id) const { return names_[id]; }

 private:
  struct Entry {
    int64_t count;
    uint64_t key;
  };
  static uint64_t pack(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  int32_t intern(const std::string& s) {
    auto [it, fresh] = ids_.emplace(s, static_cast<int32_t>(names_.size()));
    if (fresh) names_.push_back(s);
    return it->second;
  }

  void add_pairs(size_t w, int sign, std::unordered_map<uint64_t, int64_t>& delta) {
    const std::vector<int32_t>& word = words_[w];
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const uint64_t key = pack(word[i], word[i + 1]);
      delta[key] += sign * freq_[w];
      if (sign > 0) where_[key].push_back(static_cast<int32_t>(w));
    }
  }

  void publish(const std::unordered_map<uint64_t, int64_t>& delta) {
    for (const auto& [key, d] : delta) {
      if (d == 0) continue;
      int64_t& count = pair_count_[key];
      count += d;
      if (count > 0) heap_.push({count, key});
    }
  }

  // Most frequent first; among equal counts the larger (left, right) strings.
  struct Less {
    const std::vector<std::string>* names;
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      const std::string &xl = (*names)[x.key >> 32], &yl = (*names)[y.key >> 32];
      if (xl != yl) return xl < yl;
      return (*names)[x.key & 0xffffffffu] < (*names)[y.key & 0xffffffffu];
    }
  };

  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::vector<int32_t>> words_;
  std::vector<int64_t> freq_;
  std::unordered_map<uint64_t, int64_t> pair_count_;
  std::unordered_map<uint64_t, std::vector<int32_t>> where_;
  std::priority_queue<Entry, std::vector<Entry>, Less> heap_{Less{&names_}};
};

}  // namespace

void Bpe::add_merge(const std::string& left, const std::string& right) {
  rank_.emplace(pair_key(left, right), static_cast<int64_t>(merges_.size()));
  merges_.emplace_back(left, right);
}

Bpe Bpe::learn(const std::vector<std::string>& lines, int64_t merges) {
  ATTN_CHECK(merges >= 0, "Bpe::learn", "the number of merges must be >= 0, got ", merges);
  Bpe bpe;
  Learner learner(lines);
  int32_t a = 0, b = 0;
  for (int64_t m = 0; m < merges && learner.best(a, b); ++m) {
    bpe.add_merge(learner.name(a), learner.name(b));
    learner.apply(a, b);
  }
  return bpe;
}

std::vector<std::string> Bpe::encode(const std::string& line) const {
  return encode_words(text::split_python_whitespace(line));
}

std::vector<std::string> Bpe::encode_words(const std::vector<std::string>& words) const {
  std::vector<std::string> units;
  for (const std::string& w : words) {
    bool has_space = false;
    for (size_t i = 0; i < w.size() && !has_space; i += text::utf8_char_length(w, i))
      has_space = text::is_python_space_at(w, i);
    ATTN_CHECK(!w.empty() && !has_space, "Bpe::encode_words", "a word must be non-empty and hold no whitespace, got ",
               text::quote(w));
    std::vector<std::string> word = initial_symbols(w);
    while (word.size() > 1) {
      int64_t best_rank = -1;
      size_t best_at = 0;
      for (size_t i = 0; i + 1 < word.size(); ++i) {
        auto it = rank_.find(pair_key(word[i], word[i + 1]));
        if (it != rank_.end() && (best_rank < 0 || it->second < best_rank)) best_rank = it->second, best_at = i;
      }
      if (best_rank < 0) break;
      const std::string a = word[best_at], b = word[best_at + 1];
      merge_pair(word, a, b, [&] { return a + b; });
    }
    std::string& last = word.back();
    last.resize(last.size() - std::string(kEndOfWord).size());
    for (size_t i = 0; i < word.size(); ++i) units.push_back(i + 1 < word.size() ? word[i] + kContinued : word[i]);
  }
  return units;
}

std::string Bpe::decode(const std::vector<std::string>& units) {
  std::string out;
  bool glue = true;
  for (const std::string& u : units) {
    if (!glue) out += ' ';
    glue = ends_with(u, kContinued);
    out.append(u, 0, glue ? u.size() - kContinued.size() : u.size());
  }
  return out;
}

void Bpe::save(const std::string& path) const {
  std::string out = std::string(kHeader) + "\n";
  for (const auto& [left, right] : merges_) out += left + ' ' + right + '\n';
  out += kEndLine + std::to_string(merges_.size()) + "\n";
  write_file_atomically(path, out);
}

Bpe Bpe::load(const std::string& path) {
  const char* loader = "Bpe::load";
  const std::vector<std::string> lines = text::read_lines(loader, path);
  if (lines.empty() || lines[0] != kHeader)
    text::fail_at(loader, path, 1,
                  "not a BPE codes file: the first line must be '" + std::string(kHeader) + "', got " +
                      text::quote(lines.empty() ? std::string() : lines[0]));
  // Every symbol of a merge is a single character (word-final ones marked)
  // or the product of an earlier merge; anything else is damage.
  std::set<std::string> known;
  auto valid_symbol = [&](const std::string& s, bool may_end_word) {
    if (known.count(s)) return true;
    std::string body = s;
    if (ends_with(s, kEndOfWord)) {
      if (!may_end_word) return false;
      body.resize(s.size() - std::string(kEndOfWord).size());
    }
    return !body.empty() && text::utf8_char_length(body, 0) == body.size();
  };
  Bpe bpe;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind(kEndLine, 0) == 0) {
      const std::string n = line.substr(std::string(kEndLine).size());
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 18 ||
          std::stoll(n) != bpe.merges())
        text::fail_at(loader, path, i + 1,
                      "the end line says " + text::quote(n) + " merges, but the file holds " +
                          std::to_string(bpe.merges()));
      for (size_t k = i + 1; k < lines.size(); ++k)
        if (!text::is_blank(lines[k])) text::fail_at(loader, path, k + 1, "text after the end line");
      return bpe;
    }
    const size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find_first_of(" \t", space + 1) != std::string::npos)
      text::fail_at(loader, path, i + 1, "expected a merge \"LEFT RIGHT\", got " + text::quote(line));
    const std::string left = line.substr(0, space), right = line.substr(space + 1);
    if (!valid_symbol(left, false) || !valid_symbol(right, true))
      text::fail_at(loader, path, i + 1,
                    "merge " + text::quote(line) + " joins a symbol that is neither a character nor made by an "
                    "earlier merge");
    if (bpe.rank_.count(pair_key(left, right)))
      text::fail_at(loader, path, i + 1, "merge " + text::quote(line) + " appears twice");
    bpe.add_merge(left, right);
    known.insert(left + right);
  }
  throw Error(std::string(loader) + ": " + path + ": truncated: no '" + kEndLine + "N' line after " +
              std::to_string(bpe.merges()) + " merges");
}

}  // namespace attn
