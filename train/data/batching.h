// Turns tokenised examples into padded id tensors, one mini-batch at a time.
// Length bucketing keeps padding small while the batch order stays random.
#pragma once
#include <cstdint>
#include <vector>

#include "attn/engine/random.h"
#include "attn/engine/tensor.h"
#include "attn/train/data/dataset.h"
#include "attn/train/data/vocab.h"

namespace attn {

struct Batch {
  Tensor ids, mask;             // [B, n] int64 / uint8 (1 = valid); n = longest in batch (capped by max_len)
  Tensor ids_b, mask_b;         // second sentence, when present (pair/relatedness)
  Tensor labels;                // [B] int64 (classify/pair), undefined otherwise
  std::vector<double> scores;   // relatedness
  Tensor tags;                  // [B, n] int64 with -100 at padding (tagging)
  // The character ids of each word, [B, n, L] int64 (0: padding; L the
  // longest word of the batch, capped), when the vocabulary has characters.
  Tensor chars, chars_b;
  Tensor predicate;             // [B, n] int64, 1 at the predicate and 0 elsewhere (srl)
  // locate: the passages, [B, S, m] int64 / uint8 (S = most sentences in the
  // batch, m = longest sentence, capped by max_len), and sentences [B, S]
  // uint8 (1 = a real sentence). A padding sentence is one valid <pad>
  // position, so no token mask row is all zero.
  Tensor passage_ids, passage_mask, sentences;
  std::vector<size_t> indices;  // positions of the examples in the source vector
  // The whole mini-batch this one is a process's share of (a data-parallel
  // run; equal to this batch's own in one process): how many examples and
  // how many tagged tokens it has (what the loss is divided by), and the
  // distinct word ids it reads (the embedding rows whose gradient is reduced).
  int64_t global_examples = 0;
  int64_t global_tokens = 0;
  int64_t global_positions = 0;  // valid word positions (both sentences), as tokens_in counts them
  std::vector<int64_t> global_word_ids;
  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

// Which share of every mini-batch this process takes in a data-parallel run
// of `processes` processes: rows [B * rank / processes, B * (rank + 1) /
// processes) of a batch of B, so the shares are disjoint, cover the batch and
// differ in size by at most one. A share may be empty (B < processes); the
// number of steps is the same for every process.
struct BatchShare {
  int rank = 0;
  int processes = 1;
  int64_t begin(int64_t batch) const { return batch * rank / processes; }
  int64_t end(int64_t batch) const { return batch * (rank + 1) / processes; }
};

// Tag id at padded (and truncated-away) positions; cross-entropy ignores it.
constexpr int64_t kIgnoreTag = -100;

struct BatchOptions {
  int64_t batch_size = 64;
  int64_t max_len = 0;  // 0 = no cap; otherwise longer sequences are truncated to max_len
  bool shuffle = true;
  bool bucket_by_length = true;
};

// Iterates over `examples` in mini-batches, epoch after epoch. Token ids are
// looked up once at construction (the iterator keeps no reference to
// `examples` or `vocab`). An empty sentence becomes one <unk> position marked
// valid, so no row of a mask is all zero (softmax over nothing is undefined).
//
// Order: with shuffle, the examples are permuted with `gen`; with
// bucket_by_length, the (possibly permuted) list is cut into chunks of 50
// batches, each chunk is stably sorted by length (the longer of the two
// sentences), cut into batches, and with shuffle the batch order of the whole
// epoch is permuted again. Every example is in exactly one batch per epoch;
// only the last batch may be smaller. Without shuffle the order is fixed
// (sorted within chunks when bucketing, else the source order).
class BatchIterator {
 public:
  // `task` decides which fields are filled and checked: Classify/Pair need
  // label >= 0, Pair/Relatedness use tokens_b, Tag and Srl need one tag per
  // token, Srl a predicate inside the sentence. With vocab.characters(),
  // chars (and chars_b) hold each word's character ids, read from
  // cased_tokens where the example has them.
  // Throws attn::Error naming the example index when one does not fit.
  BatchIterator(const std::vector<Example>& examples, const Vocabulary& vocab, TaskKind task,
                const BatchOptions& options, Generator* gen /*for shuffling; may be null if !shuffle*/);

  // Fills `batch` with the next mini-batch; false at the end of the epoch.
  // The call after a false starts the next epoch (reshuffled when shuffling).
  bool next(Batch& batch);
  // From now on next() fills this process's share of each batch (and the
  // global_* fields of the whole batch).
  void set_share(const BatchShare& share);
  // Abandons the current epoch and starts a new one.
  void reset();

  int64_t batches_per_epoch() const;
  int64_t num_examples() const { return static_cast<int64_t>(items_.size()); }

 private:
  struct Item {
    std::vector<int64_t> ids, ids_b, tags;
    std::vector<std::vector<int64_t>> chars, chars_b;  // per word (vocabulary with characters)
    std::vector<std::vector<int64_t>> passage;
    int64_t label = -1;
    int64_t predicate = -1;
    double score = 0;
  };
  void plan_epoch();
  void describe_whole_batch(const std::vector<size_t>& whole, Batch& batch) const;
  int64_t length_of(const Item& item) const;

  std::vector<Item> items_;
  TaskKind task_;
  BatchOptions options_;
  Generator* gen_;
  bool has_chars_ = false;
  BatchShare share_;
  std::vector<std::vector<size_t>> plan_;  // this epoch's batches, as example positions
  size_t cursor_ = 0;
  bool epoch_done_ = false;
};

}  // namespace attn
