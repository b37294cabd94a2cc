#include "attn/train/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "attn/engine/error.h"

namespace attn {

namespace {
void check_sizes(const char* op, size_t a, size_t b) {
  ATTN_CHECK(a == b, op, "inputs have different lengths: ", a, " vs ", b);
}
}  // namespace

double accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold) {
  check_sizes("accuracy", pred.size(), gold.size());
  if (pred.empty()) return 0;
  size_t right = 0;
  for (size_t i = 0; i < pred.size(); ++i) right += pred[i] == gold[i];
  return static_cast<double>(right) / static_cast<double>(pred.size());
}

double macro_f1(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold) {
  check_sizes("macro_f1", pred.size(), gold.size());
  struct Counts {
    int64_t tp = 0, fp = 0, fn = 0;
  };
  std::map<int64_t, Counts> classes;
  for (size_t i = 0; i < pred.size(); ++i) {
    if (pred[i] == gold[i]) {
      ++classes[gold[i]].tp;
    } else {
      ++classes[pred[i]].fp;
      ++classes[gold[i]].fn;
    }
  }
  if (classes.empty()) return 0;
  double total = 0;
  for (const auto& kv : classes) {
    const Counts& c = kv.second;
    // F1 = 2tp / (2tp + fp + fn); the denominator is positive for every class seen.
    total += 2.0 * static_cast<double>(c.tp) / static_cast<double>(2 * c.tp + c.fp + c.fn);
  }
  return total / static_cast<double>(classes.size());
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes("pearson", x.size(), y.size());
  const size_t n = x.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  return sxy / std::sqrt(sxx * syy);
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  const size_t n = values.size();
  for (size_t i = 0; i < n; ++i)
    ATTN_CHECK(!std::isnan(values[i]), "average_ranks", "value ", i, " is NaN: it has no rank");
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && values[order[j + 1]] == values[order[i]]) ++j;
    // positions i..j (0-based) hold equal values: ranks i+1..j+1, average (i+j)/2 + 1
    const double rank = static_cast<double>(i + j) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_sizes("spearman", x.size(), y.size());
  return pearson(average_ranks(x), average_ranks(y));
}

double mse(const std::vector<double>& pred, const std::vector<double>& gold) {
  check_sizes("mse", pred.size(), gold.size());
  if (pred.empty()) return 0;
  double total = 0;
  for (size_t i = 0; i < pred.size(); ++i) total += (pred[i] - gold[i]) * (pred[i] - gold[i]);
  return total / static_cast<double>(pred.size());
}

double token_accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold,
                      const std::vector<bool>& ignore) {
  check_sizes("token_accuracy", pred.size(), gold.size());
  check_sizes("token_accuracy", pred.size(), ignore.size());
  size_t counted = 0, right = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    if (ignore[i]) continue;
    ++counted;
    right += pred[i] == gold[i];
  }
  return counted == 0 ? 0.0 : static_cast<double>(right) / static_cast<double>(counted);
}

double token_accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold, int64_t ignore_label) {
  check_sizes("token_accuracy", pred.size(), gold.size());
  std::vector<bool> ignore(gold.size());
  for (size_t i = 0; i < gold.size(); ++i) ignore[i] = gold[i] == ignore_label;
  return token_accuracy(pred, gold, ignore);
}

namespace {

// A tag split as conlleval splits it: "B-PER" -> ('B', "PER"); "O" -> ('O', "").
struct SplitTag {
  char prefix = 'O';
  std::string type;
};

SplitTag split_tag(const char* op, const std::string& tag, size_t i, const char* prefixes) {
  if (tag == "O") return {};
  const bool known = tag.size() > 2 && tag[1] == '-' && std::string(prefixes).find(tag[0]) != std::string::npos;
  if (!known) {
    std::string allowed = "O";
    for (const char* p = prefixes; *p; ++p) allowed += std::string(p[1] ? ", " : " or ") + *p + "-<type>";
    ATTN_CHECK(false, op, "tag ", i, " '", tag, "' is not ", allowed);
  }
  return {tag[0], tag.substr(2)};
}

// conlleval's endOfChunk: does the chunk open before `prev` end there?
bool ends_chunk(const SplitTag& prev, const SplitTag& tag) {
  if (prev.prefix == 'O') return false;
  if (prev.prefix == 'E' || prev.prefix == 'S') return true;
  if (tag.prefix == 'B' || tag.prefix == 'S' || tag.prefix == 'O') return true;  // after B- or I-
  return prev.type != tag.type;
}

// conlleval's startOfChunk: does a chunk start at `tag`?
bool starts_chunk(const SplitTag& prev, const SplitTag& tag) {
  if (tag.prefix == 'O') return false;
  if (tag.prefix == 'B' || tag.prefix == 'S') return true;
  if (prev.prefix == 'O' || prev.prefix == 'E' || prev.prefix == 'S') return true;  // an I- or E- with no B-
  return prev.type != tag.type;
}

std::vector<Chunk> chunks_with(const char* op, const std::vector<std::string>& tags, const char* prefixes) {
  std::vector<Chunk> chunks;
  SplitTag prev;
  int64_t begin = 0;
  for (size_t i = 0; i <= tags.size(); ++i) {
    const SplitTag tag = i < tags.size() ? split_tag(op, tags[i], i, prefixes) : SplitTag();  // O past the end
    const int64_t pos = static_cast<int64_t>(i);
    if (ends_chunk(prev, tag)) chunks.push_back(Chunk{prev.type, begin, pos});
    if (starts_chunk(prev, tag)) begin = pos;
    prev = tag;
  }
  return chunks;
}

using Chunker = std::vector<Chunk> (*)(const std::vector<std::string>&);

ChunkScores chunk_scores(const char* op, const std::vector<std::vector<std::string>>& gold,
                         const std::vector<std::vector<std::string>>& pred, Chunker chunker) {
  check_sizes(op, gold.size(), pred.size());
  ChunkScores s;
  for (size_t k = 0; k < gold.size(); ++k) {
    ATTN_CHECK(gold[k].size() == pred[k].size(), op, "sentence ", k, " has ", gold[k].size(),
               " gold tags but ", pred[k].size(), " predicted");
    const std::vector<Chunk> g = chunker(gold[k]), p = chunker(pred[k]);
    std::set<std::tuple<int64_t, int64_t, std::string>> gold_set;
    for (const Chunk& c : g) gold_set.insert({c.begin, c.end, c.type});
    for (const Chunk& c : p) s.correct_chunks += gold_set.count({c.begin, c.end, c.type}) > 0;
    s.gold_chunks += static_cast<int64_t>(g.size());
    s.pred_chunks += static_cast<int64_t>(p.size());
  }
  if (s.pred_chunks > 0) s.precision = static_cast<double>(s.correct_chunks) / static_cast<double>(s.pred_chunks);
  if (s.gold_chunks > 0) s.recall = static_cast<double>(s.correct_chunks) / static_cast<double>(s.gold_chunks);
  if (s.precision + s.recall > 0) s.f1 = 2 * s.precision * s.recall / (s.precision + s.recall);
  return s;
}

}  // namespace

std::vector<Chunk> bio_chunks(const std::vector<std::string>& tags) { return chunks_with("bio_chunks", tags, "BI"); }

std::vector<Chunk> conll_chunks(const std::vector<std::string>& tags) {
  return chunks_with("conll_chunks", tags, "BIES");
}

ChunkScores bio_chunk_f1(const std::vector<std::vector<std::string>>& gold,
                         const std::vector<std::vector<std::string>>& pred) {
  return chunk_scores("bio_chunk_f1", gold, pred, bio_chunks);
}

ChunkScores conll_chunk_f1(const std::vector<std::vector<std::string>>& gold,
                           const std::vector<std::vector<std::string>>& pred) {
  return chunk_scores("conll_chunk_f1", gold, pred, conll_chunks);
}

bool is_chunk_tag(const std::string& tag) {
  return tag.size() > 2 && tag[1] == '-' && (tag[0] == 'B' || tag[0] == 'I' || tag[0] == 'E' || tag[0] == 'S');
}

}  // namespace attn
