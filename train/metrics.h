// Evaluation metrics on plain vectors (no tensors): accuracy, macro-F1,
// Pearson and Spearman correlation, MSE, per-token accuracy and chunk F1
// (conlleval semantics). Every function checks that its inputs have equal
// lengths and throws attn::Error otherwise.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Fraction of positions where pred == gold (0 for empty inputs).
double accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold);

// Unweighted mean of per-class F1 over the classes that occur in gold OR in
// pred (their union). A class never predicted (or never correct) scores F1 0,
// and so does a class predicted but absent from gold. 0 for empty inputs.
double macro_f1(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold);

// Pearson's r. NaN when either input is constant (or has fewer than 2 values):
// the correlation is undefined there.
double pearson(const std::vector<double>& x, const std::vector<double>& y);

// Spearman's rho: Pearson's r of the ranks, tied values sharing the average
// of the ranks they span. NaN when either input is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// 1-based ranks with ties averaged ({10, 20, 20, 30} -> {1, 2.5, 2.5, 4}).
std::vector<double> average_ranks(const std::vector<double>& values);

// Mean squared error (0 for empty inputs).
double mse(const std::vector<double>& pred, const std::vector<double>& gold);

// Accuracy over the positions where ignore[i] is false (padding, special
// tokens); 0 when every position is ignored.
double token_accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold,
                      const std::vector<bool>& ignore);
// The same, ignoring the positions whose gold label is `ignore_label`.
double token_accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold, int64_t ignore_label);

// A chunk [begin, end) of one type.
struct Chunk {
  std::string type;
  int64_t begin = 0, end = 0;
  bool operator==(const Chunk& o) const { return type == o.type && begin == o.begin && end == o.end; }
};

// Chunks of one tagged sentence, as conlleval reads them (its startOfChunk
// and endOfChunk rules, with S- as the single-token chunk of IOBES), so one
// function scores IOB1, BIO (IOB2) and BIOES alike:
//   a chunk starts at B-X and S-X, at I-X or E-X after O, E- or S- (an I-
//   with no B-) and at any tag whose type differs from the previous tag's;
//   a chunk ends after E-X and S-X, before B-, S- and O, and before a tag of
//   another type; the sentence end closes an open chunk.
// Any tag but O and B-, I-, E-, S- followed by -<type> throws.
std::vector<Chunk> conll_chunks(const std::vector<std::string>& tags);
// The same for BIO tags only (anything but O, B-X and I-X throws): "B-X"
// starts a chunk; "I-X" continues the open chunk when it is of type X, else
// starts a new one; "O" closes any open chunk.
std::vector<Chunk> bio_chunks(const std::vector<std::string>& tags);

// Whether a tag is chunk-tagged: B-, I-, E- or S- followed by a type.
bool is_chunk_tag(const std::string& tag);

struct ChunkScores {
  int64_t gold_chunks = 0, pred_chunks = 0, correct_chunks = 0;
  double precision = 0, recall = 0, f1 = 0;  // fractions in [0, 1]; 0 where undefined
};

// Exact-match chunk precision/recall/F1 over sentences (gold[s], pred[s] are
// the tags of sentence s): a predicted chunk is correct when a gold chunk has
// the same type, start and end.
ChunkScores bio_chunk_f1(const std::vector<std::vector<std::string>>& gold,
                         const std::vector<std::vector<std::string>>& pred);
// The same over conll_chunks: entity F1 as conlleval computes it for IOB1,
// BIO and BIOES tags.
ChunkScores conll_chunk_f1(const std::vector<std::vector<std::string>>& gold,
                           const std::vector<std::vector<std::string>>& pred);

}  // namespace attn
