// Data-parallel training without MPI: the share arithmetic, the whole-batch
// counts every share carries, losses of shares that add up to the whole
// batch's, the gradient sum's packing (sparse embedding rows against dense,
// parameters without a gradient) and the start-up agreement check. The
// processes themselves are tested by the CTests mpi.* (scripts/check_data_parallel*.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/models/task_model.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/train/data/batching.h"
#include "attn/train/distributed/run_agreement.h"
#include "attn/train/distributed/summed_gradient_sync.h"
#include "attn/train/evaluate.h"

namespace attn {
namespace {

// Plays one process of `size`: a sum adds what the other processes sent
// (`others`, packed as this process packs), a gather returns `gathered`.
class FakeProcesses final : public Communicator {
 public:
  FakeProcesses(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum_in_rank_order(std::vector<double>& values, const char*) override {
    sent.push_back(values);
    if (others.empty()) return;
    if (others.size() != values.size()) throw Error("FakeProcesses: the other process packed a different length");
    for (size_t i = 0; i < values.size(); ++i) values[i] += others[i];
  }
  void sum_in_rank_order(std::vector<float>& values, const char*) override {
    sent_narrow.push_back(values);
    if (others_narrow.empty()) return;
    if (others_narrow.size() != values.size()) throw Error("FakeProcesses: the other process packed a different length");
    // As the processes do: float64 sums in rank order, one rounding.
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(static_cast<double>(values[i]) + static_cast<double>(others_narrow[i]));
  }
  std::vector<uint64_t> gather_to_all(uint64_t value, const char*) override {
    std::vector<uint64_t> all(static_cast<size_t>(size_), value);
    if (!gathered.empty()) all = gathered.front(), gathered.erase(gathered.begin());
    return all;
  }
  void broadcast(void*, size_t, int, const char*) override {}
  [[noreturn]] void abort_all(const std::string& message) override { throw Error(message); }
  std::string describe() const override { return "fake"; }

  std::vector<double> others;
  std::vector<float> others_narrow;
  std::vector<std::vector<double>> sent;
  std::vector<std::vector<float>> sent_narrow;
  std::vector<std::vector<uint64_t>> gathered;

 private:
  int rank_, size_;
};

TEST(BatchShare, SharesAreDisjointCoverTheBatchAndDifferByAtMostOne) {
  for (int processes = 1; processes <= 5; ++processes)
    for (int64_t batch = 0; batch <= 40; ++batch) {
      int64_t covered = 0, smallest = batch, largest = 0;
      for (int rank = 0; rank < processes; ++rank) {
        const BatchShare share{rank, processes};
        EXPECT_EQ(share.begin(batch), covered) << "share " << rank << " of " << processes << ", batch " << batch;
        const int64_t size = share.end(batch) - share.begin(batch);
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
        covered = share.end(batch);
      }
      EXPECT_EQ(covered, batch);
      EXPECT_LE(largest - smallest, 1);
    }
}

Example tagged(std::vector<std::string> tokens, std::vector<int64_t> tags) {
  Example e;
  e.tokens = std::move(tokens);
  e.tags = std::move(tags);
  return e;
}

std::vector<Example> tagging_examples() {
  std::vector<Example> out;
  const std::vector<std::string> words = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 23; ++i) {
    std::vector<std::string> tokens;
    std::vector<int64_t> tags;
    for (int j = 0; j < i % 7; ++j) {  // lengths 0..6; an empty sentence is one <unk> with no tag
      tokens.push_back(words[static_cast<size_t>((i + j) % 5)]);
      tags.push_back((i * j) % 3);
    }
    out.push_back(tagged(tokens, tags));
  }
  return out;
}

TEST(BatchShare, EveryShareCarriesTheWholeBatchsCountsAndTheSharesMakeTheBatch) {
  const std::vector<Example> examples = tagging_examples();
  const Vocabulary vocab = Vocabulary::build(examples, 1);
  BatchOptions options;
  options.batch_size = 8;
  options.max_len = 5;  // truncates the sentences of 6 words
  Generator whole_gen(3);
  BatchIterator whole(examples, vocab, TaskKind::Tag, options, &whole_gen);
  Batch expected;
  for (int batches = 0; whole.next(expected); ++batches) {
    int64_t tagged_tokens = 0;
    for (double t : expected.tags.to_vector()) tagged_tokens += t != kIgnoreTag;
    EXPECT_EQ(expected.global_tokens, tagged_tokens);
    EXPECT_EQ(expected.global_examples, expected.size());
    std::set<int64_t> ids;
    const std::vector<double> id_values = expected.ids.to_vector(), mask = expected.mask.to_vector();
    for (size_t i = 0; i < id_values.size(); ++i)
      if (mask[i] != 0) ids.insert(static_cast<int64_t>(id_values[i]));
    EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.end()), expected.global_word_ids);
    EXPECT_EQ(expected.global_positions, static_cast<int64_t>(std::accumulate(mask.begin(), mask.end(), 0.0)));

    std::vector<size_t> joined;
    for (int rank = 0; rank < 3; ++rank) {
      Generator gen(3);
      BatchIterator shared(examples, vocab, TaskKind::Tag, options, &gen);
      shared.set_share({rank, 3});
      Batch share;
      for (int skip = 0; skip <= batches; ++skip) ASSERT_TRUE(shared.next(share));
      EXPECT_EQ(share.global_examples, expected.global_examples);
      EXPECT_EQ(share.global_tokens, expected.global_tokens);
      EXPECT_EQ(share.global_word_ids, expected.global_word_ids);
      // Padded to the whole batch's length: an example's tensors have the
      // shapes of a one-process run (its keyed noise draws by position).
      EXPECT_EQ(share.ids.size(1), expected.ids.size(1)) << "share " << rank;
      EXPECT_EQ(share.tags.size(1), expected.tags.size(1)) << "share " << rank;
      joined.insert(joined.end(), share.indices.begin(), share.indices.end());
    }
    EXPECT_EQ(joined, expected.indices);
  }
}

TEST(BatchShare, ImpossibleShareIsRefused) {
  const std::vector<Example> examples = tagging_examples();
  const Vocabulary vocab = Vocabulary::build(examples, 1);
  BatchOptions options;
  options.shuffle = false;
  BatchIterator it(examples, vocab, TaskKind::Tag, options, nullptr);
  EXPECT_THROW(it.set_share({2, 2}), Error);
  EXPECT_THROW(it.set_share({0, 0}), Error);
}

// The shares' training losses add up to the whole batch's: per example
// (classification) and per token (tagging), in float64 where the only
// difference is the order of the additions.
TEST(BatchShare, TheSharesLossesAddUpToTheWholeBatchsLoss) {
  const std::vector<Example> examples = tagging_examples();
  const Vocabulary vocab = Vocabulary::build(examples, 1);
  Generator init(5), noise(6);
  TaskModel model(Config::parse("encoder = bow\nembedding_dim = 6\nhead_hidden = 5\nkeep_prob = 1.0\n"), TaskKind::Tag,
                  vocab.size(), 3, DType::F64, init, noise);
  BatchOptions options;
  options.batch_size = 10;
  options.shuffle = false;
  BatchIterator whole(examples, vocab, TaskKind::Tag, options, nullptr);
  Batch batch;
  ASSERT_TRUE(whole.next(batch));
  const double expected = training_loss(TaskKind::Tag, model.logits(inputs_of(batch)), batch).item();
  double summed = 0;
  for (int rank = 0; rank < 3; ++rank) {
    BatchIterator shared(examples, vocab, TaskKind::Tag, options, nullptr);
    shared.set_share({rank, 3});
    Batch share;
    ASSERT_TRUE(shared.next(share));
    summed += training_loss(TaskKind::Tag, model.logits(inputs_of(share)), share).item();
  }
  // ~10 tokens' losses of magnitude ~1 added in two groupings: |error| <= 2 * 10 * u.
  EXPECT_NEAR(summed, expected, 20 * 1.2e-16 * std::abs(expected) + 1e-300);
  EXPECT_GT(expected, 0.0);
}

Tensor parameter(const std::vector<double>& values, const Shape& shape) {
  Tensor p = from_vector(values, shape, DType::F64);
  p.set_requires_grad(true);
  return p;
}

// Gradients set by hand: the table's are non-zero on `rows` only.
void set_gradients(const Tensor& table, const Tensor& bias, const std::vector<int64_t>& rows, double scale) {
  std::vector<double> g(static_cast<size_t>(table.numel()), 0.0);
  for (int64_t r : rows)
    for (int64_t j = 0; j < table.size(1); ++j) g[static_cast<size_t>(r * table.size(1) + j)] = scale * (r + 0.25 * j);
  table.set_grad(from_vector(g, table.shape(), DType::F64));
  bias.set_grad(from_vector({scale, -scale}, bias.shape(), DType::F64));
}

TEST(SummedGradientSync, SparseRowsGiveTheDenseSumAndSendLess) {
  const Tensor table = parameter(std::vector<double>(40, 0.0), {10, 4});
  const Tensor bias = parameter({0, 0}, {2});
  const Tensor unreached = parameter({0, 0, 0}, {3});  // no process computes its gradient
  const std::vector<Tensor> params = {table, bias, unreached};
  const std::vector<int64_t> mine = {1, 4}, theirs = {4, 7}, whole = {1, 4, 7};

  // What the other process sends, packed by its own sync.
  set_gradients(table, bias, theirs, 3.0);
  FakeProcesses other(1, 2);
  SummedGradientSync other_sync(other);
  other_sync.set_sparse_rows(table, whole);
  other_sync.synchronise(params, 0.5);

  for (const bool sparse : {true, false}) {
    FakeProcesses processes(0, 2);
    processes.others = other.sent.back();
    if (!sparse) {  // the dense layout: the other process packs every row
      set_gradients(table, bias, theirs, 3.0);
      FakeProcesses dense_other(1, 2);
      SummedGradientSync(dense_other).synchronise(params, 0.5);
      processes.others = dense_other.sent.back();
    }
    set_gradients(table, bias, mine, 1.0);
    SummedGradientSync sync(processes);
    if (sparse) sync.set_sparse_rows(table, whole);
    const double loss = sync.synchronise(params, 0.25);
    EXPECT_DOUBLE_EQ(loss, 0.75);
    const std::vector<double> got = table.grad().to_vector();
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t j = 0; j < 4; ++j) {
        const double one = std::count(mine.begin(), mine.end(), r) ? (r + 0.25 * j) : 0.0;
        const double three = std::count(theirs.begin(), theirs.end(), r) ? 3.0 * (r + 0.25 * j) : 0.0;
        EXPECT_EQ(got[static_cast<size_t>(r * 4 + j)], one + three) << (sparse ? "sparse" : "dense") << " row " << r;
      }
    EXPECT_EQ(bias.grad().to_vector(), (std::vector<double>{4.0, -4.0}));
    EXPECT_FALSE(unreached.grad().defined()) << "a parameter no process reached must keep no gradient";
    // 1 loss + 3 flags + 2 bias values + 3 unreached, and 3 rows x 4 or 40 table values.
    const int64_t packed = 1 + 3 + 2 + 3 + (sparse ? 12 : 40);
    EXPECT_EQ(static_cast<int64_t>(processes.sent.back().size()), packed);
    EXPECT_EQ(sync.bytes_sent_last_step(), bytes_sent_to_sum(packed, 2, 8));
    EXPECT_EQ(sync.dense_bytes_last_step(), bytes_sent_to_sum(1 + 3 + 2 + 3 + 40, 2, 8));
  }
}

TEST(SummedGradientSync, BadSparseRowsAreRefused) {
  FakeProcesses processes(0, 2);
  SummedGradientSync sync(processes);
  const Tensor table = parameter(std::vector<double>(8, 0.0), {4, 2});
  EXPECT_THROW(sync.set_sparse_rows(table, {0, 4}), Error);
  EXPECT_THROW(sync.set_sparse_rows(table, {2, 1}), Error);
  EXPECT_THROW(sync.set_sparse_rows(parameter({0, 0}, {2}), {0}), Error);
}

// float32 gradients travel as float32: the loss and the flags stay float64,
// the gradient's sum is the float64 sum rounded once.
TEST(SummedGradientSync, Float32GradientsTravelAsFloat32) {
  Tensor weight = from_vector({0, 0, 0}, {3}, DType::F32);
  weight.set_requires_grad(true);
  const std::vector<double> mine = {1.0, 0x1p-30, -3.5}, theirs = {0x1p-25, 1.0, 3.5};
  FakeProcesses processes(0, 2);
  processes.others = {0.5, 1.0};  // the other process's loss and flag
  processes.others_narrow.assign(theirs.begin(), theirs.end());
  weight.set_grad(from_vector(mine, {3}, DType::F32));
  SummedGradientSync sync(processes);
  EXPECT_DOUBLE_EQ(sync.synchronise({weight}, 0.25), 0.75);
  ASSERT_EQ(processes.sent.back().size(), 2u);  // loss and flag only
  ASSERT_EQ(processes.sent_narrow.back().size(), 3u);
  const std::vector<double> got = weight.grad().to_vector();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], static_cast<double>(static_cast<float>(mine[i] + theirs[i])));
  EXPECT_EQ(sync.bytes_sent_last_step(), bytes_sent_to_sum(2, 2, 8) + bytes_sent_to_sum(3, 2, 4));
}

TEST(BytesSentToSum, IsTwoTimesNMinusOneOverNOfTheValues) {
  EXPECT_EQ(bytes_sent_to_sum(1000, 1, 8), 0);
  EXPECT_EQ(bytes_sent_to_sum(1000, 2, 8), 1000 * 8);
  EXPECT_EQ(bytes_sent_to_sum(900, 3, 4), 2 * 2 * 900 / 3 * 4);
}

TEST(RunAgreement, FingerprintsSeeEveryField) {
  std::vector<Example> a = tagging_examples(), b = a;
  EXPECT_EQ(fingerprint_of(a), fingerprint_of(b));
  b[3].tags[1] += 1;
  EXPECT_NE(fingerprint_of(a), fingerprint_of(b));
  b = a;
  b[5].tokens.back() += "x";
  EXPECT_NE(fingerprint_of(a), fingerprint_of(b));
  EXPECT_NE(fingerprint_of(std::vector<std::string>{"ab", "c"}), fingerprint_of(std::vector<std::string>{"a", "bc"}));
}

TEST(RunAgreement, ADifferenceNamesTheItemAndTheProcesses) {
  FakeProcesses processes(0, 3);
  processes.gathered = {{7, 7, 7}, {1, 2, 1}, {5, 6, 6}};
  try {
    check_processes_agree(processes, {{"the settings", 7}, {"the data", 1}, {"the vocabulary", 5}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.user_message();
    EXPECT_NE(message.find("do not agree on: the data (process 1 differs from process 0); the vocabulary "
                           "(processes 1, 2 differ from process 0)"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("the settings"), std::string::npos) << message;
  }
  processes.gathered = {{4, 4, 4}};
  EXPECT_NO_THROW(check_processes_agree(processes, {{"the settings", 4}}));
}

}  // namespace
}  // namespace attn
