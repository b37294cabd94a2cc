#include "attn/train/data/batching.h"

#include <algorithm>

#include "attn/engine/error.h"

namespace attn {

namespace {

constexpr int64_t kBucketBatches = 50;  // batches per sorting chunk

// Uniform in [0, n) without modulo bias.
size_t uniform_below(Generator& gen, size_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = gen.next_u64();
  while (r >= limit);
  return static_cast<size_t>(r % n);
}

template <class T>
void shuffle_in_place(std::vector<T>& v, Generator& gen) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_below(gen, i)]);
}

bool uses_second(TaskKind task) { return task == TaskKind::Pair || task == TaskKind::Relatedness; }
bool uses_label(TaskKind task) {
  return task == TaskKind::Classify || task == TaskKind::Pair || task == TaskKind::Locate;
}

// The padded length of a batch of `seqs`: the longest (at least 1), capped
// by max_len.
int64_t padded_width(const std::vector<const std::vector<int64_t>*>& seqs, int64_t max_len) {
  int64_t n = 1;
  for (const auto* s : seqs) n = std::max(n, static_cast<int64_t>(s->size()));
  return max_len > 0 ? std::min(n, max_len) : n;
}

// Pads (and truncates to n) sequences into [B, n] ids and a uint8 mask.
void pad_into(const std::vector<const std::vector<int64_t>*>& seqs, int64_t n, Tensor& ids, Tensor& mask) {
  int64_t b = static_cast<int64_t>(seqs.size());
  ids = zeros({b, n}, DType::I64);
  mask = zeros({b, n}, DType::U8);
  int64_t* id = ids.data<int64_t>();
  uint8_t* m = mask.data<uint8_t>();
  for (int64_t r = 0; r < b; ++r) {
    const std::vector<int64_t>& s = *seqs[static_cast<size_t>(r)];
    int64_t len = std::min(n, static_cast<int64_t>(s.size()));
    for (int64_t j = 0; j < len; ++j) {
      id[r * n + j] = s[static_cast<size_t>(j)];
      m[r * n + j] = 1;
    }
    if (s.empty()) {  // an empty sentence is one valid <unk>
      id[r * n] = Vocabulary::kUnk;
      m[r * n] = 1;
    }
  }
}

// The character ids of `words` ([B, n, L] as pad_into lays out their ids):
// L is the longest word of `whole` (at least 1), rows of `members` filled.
Tensor pad_chars(const std::vector<const std::vector<std::vector<int64_t>>*>& whole,
                 const std::vector<const std::vector<std::vector<int64_t>>*>& members, int64_t n) {
  int64_t longest = 1;
  for (const auto* words : whole)
    for (size_t j = 0; j < std::min(words->size(), static_cast<size_t>(n)); ++j)
      longest = std::max(longest, static_cast<int64_t>((*words)[j].size()));
  const int64_t b = static_cast<int64_t>(members.size());
  Tensor chars = zeros({b, n, longest}, DType::I64);
  int64_t* c = chars.data<int64_t>();
  for (int64_t r = 0; r < b; ++r) {
    const auto& words = *members[static_cast<size_t>(r)];
    for (int64_t j = 0; j < std::min(n, static_cast<int64_t>(words.size())); ++j) {
      const std::vector<int64_t>& w = words[static_cast<size_t>(j)];
      std::copy(w.begin(), w.end(), c + (r * n + j) * longest);
    }
  }
  return chars;
}

std::vector<std::vector<int64_t>> character_ids(const CharVocabulary& chars, const std::vector<std::string>& words) {
  std::vector<std::vector<int64_t>> out;
  out.reserve(words.size());
  for (const std::string& w : words) out.push_back(chars.word_ids(w));
  return out;
}

// Pads passages into [B, S, m] ids and token mask and a [B, S] sentence mask.
// S and m are the widest of `whole` (the whole batch a share belongs to), so a
// share has the shapes of a one-process run. A padding sentence is one valid
// <pad> position (selected out by the sentence mask), an empty sentence one
// valid <unk>, as for pad_into.
void pad_passages(const std::vector<const std::vector<std::vector<int64_t>>*>& whole,
                  const std::vector<const std::vector<std::vector<int64_t>>*>& members, int64_t max_len,
                  Tensor& ids, Tensor& mask, Tensor& sentences) {
  int64_t s = 1;
  std::vector<const std::vector<int64_t>*> all_sentences;
  for (const auto* p : whole) {
    s = std::max(s, static_cast<int64_t>(p->size()));
    for (const auto& sentence : *p) all_sentences.push_back(&sentence);
  }
  const int64_t m = padded_width(all_sentences, max_len);
  const int64_t b = static_cast<int64_t>(members.size());
  ids = zeros({b, s, m}, DType::I64);
  mask = zeros({b, s, m}, DType::U8);
  sentences = zeros({b, s}, DType::U8);
  int64_t* id = ids.data<int64_t>();
  uint8_t* tm = mask.data<uint8_t>();
  uint8_t* sm = sentences.data<uint8_t>();
  for (int64_t r = 0; r < b; ++r) {
    const auto& passage = *members[static_cast<size_t>(r)];
    for (int64_t k = 0; k < s; ++k) {
      const int64_t row = (r * s + k) * m;
      tm[row] = 1;
      if (k >= static_cast<int64_t>(passage.size())) continue;  // id 0 = <pad>
      sm[r * s + k] = 1;
      const std::vector<int64_t>& words = passage[static_cast<size_t>(k)];
      if (words.empty()) id[row] = Vocabulary::kUnk;
      const int64_t len = std::min(m, static_cast<int64_t>(words.size()));
      for (int64_t j = 0; j < len; ++j) {
        id[row + j] = words[static_cast<size_t>(j)];
        tm[row + j] = 1;
      }
    }
  }
}

}  // namespace

BatchIterator::BatchIterator(const std::vector<Example>& examples, const Vocabulary& vocab, TaskKind task,
                             const BatchOptions& options, Generator* gen)
    : task_(task), options_(options), gen_(gen), has_chars_(vocab.characters() != nullptr) {
  ATTN_CHECK(options.batch_size >= 1, "BatchIterator", "batch_size must be >= 1, got ", options.batch_size);
  ATTN_CHECK(options.max_len >= 0, "BatchIterator", "max_len must be >= 0 (0 = no cap), got ", options.max_len);
  ATTN_CHECK(!options.shuffle || gen != nullptr, "BatchIterator", "shuffle needs a Generator");
  items_.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    const Example& e = examples[i];
    Item item;
    item.ids = vocab.ids(e.tokens);
    if (uses_second(task)) item.ids_b = vocab.ids(e.tokens_b);
    if (const CharVocabulary* chars = vocab.characters()) {
      ATTN_CHECK(e.cased_tokens.empty() || e.cased_tokens.size() == e.tokens.size(), "BatchIterator", "example ", i,
                 " has ", e.cased_tokens.size(), " cased tokens for ", e.tokens.size(), " tokens");
      item.chars = character_ids(*chars, character_words(e));
      if (uses_second(task)) item.chars_b = character_ids(*chars, e.tokens_b);
    }
    if (uses_label(task)) {
      ATTN_CHECK(e.label >= 0, "BatchIterator", "example ", i, " has no label (", e.label, ") for task ",
                 task_name(task));
      item.label = e.label;
    }
    if (task == TaskKind::Relatedness) item.score = e.score;
    if (task == TaskKind::Locate) {
      ATTN_CHECK(!e.passage.empty(), "BatchIterator", "example ", i, " has no passage sentences");
      ATTN_CHECK(e.label < static_cast<int64_t>(e.passage.size()), "BatchIterator", "example ", i,
                 " names answer sentence ", e.label, " of a passage with ", e.passage.size(), " sentences");
      for (const auto& sentence : e.passage) item.passage.push_back(vocab.ids(sentence));
    }
    if (tags_tokens(task)) {
      ATTN_CHECK(e.tags.size() == e.tokens.size(), "BatchIterator", "example ", i, " has ", e.tags.size(),
                 " tags for ", e.tokens.size(), " tokens");
      item.tags = e.tags;
    }
    if (task == TaskKind::Srl) {
      ATTN_CHECK(e.predicate >= 0 && e.predicate < static_cast<int64_t>(e.tokens.size()), "BatchIterator", "example ",
                 i, " has its predicate at ", e.predicate, ", outside its ", e.tokens.size(), " tokens");
      item.predicate = e.predicate;
    }
    items_.push_back(std::move(item));
  }
  plan_epoch();
}

int64_t BatchIterator::length_of(const Item& item) const {
  // A locate example also counts its passage's sentences, the passage's
  // widest padding.
  int64_t len = static_cast<int64_t>(std::max({item.ids.size(), item.ids_b.size(), item.passage.size()}));
  return options_.max_len > 0 ? std::min(len, options_.max_len) : len;
}

void BatchIterator::plan_epoch() {
  plan_.clear();
  cursor_ = 0;
  epoch_done_ = false;
  std::vector<size_t> order(items_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (options_.shuffle) shuffle_in_place(order, *gen_);
  size_t bs = static_cast<size_t>(options_.batch_size);
  if (options_.bucket_by_length) {
    size_t chunk = bs * static_cast<size_t>(kBucketBatches);
    for (size_t start = 0; start < order.size(); start += chunk) {
      auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
      auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + chunk));
      std::stable_sort(first, last, [&](size_t a, size_t b) { return length_of(items_[a]) < length_of(items_[b]); });
    }
  }
  for (size_t start = 0; start < order.size(); start += bs)
    plan_.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                       order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + bs)));
  if (options_.shuffle && options_.bucket_by_length) shuffle_in_place(plan_, *gen_);
}

void BatchIterator::reset() { plan_epoch(); }

void BatchIterator::set_share(const BatchShare& share) {
  ATTN_CHECK(share.processes >= 1 && share.rank >= 0 && share.rank < share.processes, "BatchIterator",
             "share ", share.rank, " of ", share.processes, " processes does not exist");
  share_ = share;
}

// The loss's divisor and the embedding rows of the whole batch, the same for
// every process's share: example count, tagged tokens (the truncated and
// padded positions carry no tag) and the distinct word ids.
void BatchIterator::describe_whole_batch(const std::vector<size_t>& whole, Batch& batch) const {
  batch.global_examples = static_cast<int64_t>(whole.size());
  std::vector<int64_t> ids;
  for (size_t i : whole) {
    const Item& item = items_[i];
    const auto keep = [&](const std::vector<int64_t>& seq) {
      const size_t kept = options_.max_len > 0 ? std::min(seq.size(), static_cast<size_t>(options_.max_len))
                                               : seq.size();
      // An empty sentence is read as one <unk>.
      if (kept == 0) ids.push_back(Vocabulary::kUnk);
      ids.insert(ids.end(), seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(kept));
      return static_cast<int64_t>(kept);
    };
    const int64_t length = keep(item.ids);
    if (uses_second(task_)) keep(item.ids_b);
    for (const auto& sentence : item.passage) keep(sentence);
    if (tags_tokens(task_))
      for (int64_t j = 0; j < std::min(length, static_cast<int64_t>(item.tags.size())); ++j)
        batch.global_tokens += item.tags[static_cast<size_t>(j)] != kIgnoreTag;
  }
  batch.global_positions = static_cast<int64_t>(ids.size());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  batch.global_word_ids = std::move(ids);
}

int64_t BatchIterator::batches_per_epoch() const {
  int64_t n = num_examples();
  return (n + options_.batch_size - 1) / options_.batch_size;
}

bool BatchIterator::next(Batch& batch) {
  if (epoch_done_) plan_epoch();
  if (cursor_ >= plan_.size()) {
    epoch_done_ = true;
    return false;
  }
  const std::vector<size_t>& whole = plan_[cursor_++];
  batch = Batch();
  describe_whole_batch(whole, batch);
  const int64_t whole_size = static_cast<int64_t>(whole.size());
  const std::vector<size_t> members(whole.begin() + share_.begin(whole_size), whole.begin() + share_.end(whole_size));
  batch.indices = members;
  // A share is padded to the whole batch's length, so every tensor of an
  // example has the shape it has in a one-process run (example-keyed noise
  // draws by position in the example's row).
  const auto pad_side = [&](const std::vector<int64_t> Item::*side, Tensor& ids, Tensor& mask) {
    std::vector<const std::vector<int64_t>*> seqs;
    for (size_t i : whole) seqs.push_back(&(items_[i].*side));
    const int64_t width = padded_width(seqs, options_.max_len);
    seqs.clear();
    for (size_t i : members) seqs.push_back(&(items_[i].*side));
    pad_into(seqs, width, ids, mask);
  };
  pad_side(&Item::ids, batch.ids, batch.mask);
  int64_t b = static_cast<int64_t>(members.size());
  if (uses_second(task_)) pad_side(&Item::ids_b, batch.ids_b, batch.mask_b);
  if (has_chars_) {
    const auto pad_char_side = [&](const std::vector<std::vector<int64_t>> Item::*side, const Tensor& ids) {
      std::vector<const std::vector<std::vector<int64_t>>*> all, mine;
      for (size_t i : whole) all.push_back(&(items_[i].*side));
      for (size_t i : members) mine.push_back(&(items_[i].*side));
      return pad_chars(all, mine, ids.size(1));
    };
    batch.chars = pad_char_side(&Item::chars, batch.ids);
    if (uses_second(task_)) batch.chars_b = pad_char_side(&Item::chars_b, batch.ids_b);
  }
  if (task_ == TaskKind::Locate) {
    std::vector<const std::vector<std::vector<int64_t>>*> all, mine;
    for (size_t i : whole) all.push_back(&items_[i].passage);
    for (size_t i : members) mine.push_back(&items_[i].passage);
    pad_passages(all, mine, options_.max_len, batch.passage_ids, batch.passage_mask, batch.sentences);
  }
  if (uses_label(task_)) {
    std::vector<int64_t> labels;
    for (size_t i : members) labels.push_back(items_[i].label);
    batch.labels = from_indices(labels, {b});
  }
  if (task_ == TaskKind::Relatedness)
    for (size_t i : members) batch.scores.push_back(items_[i].score);
  if (task_ == TaskKind::Srl) {
    const int64_t n = batch.ids.size(1);
    std::vector<int64_t> indicator(static_cast<size_t>(b * n), 0);
    for (int64_t r = 0; r < b; ++r) {
      const int64_t at = items_[members[static_cast<size_t>(r)]].predicate;
      if (at < n) indicator[static_cast<size_t>(r * n + at)] = 1;  // a predicate cut off by max_len marks nothing
    }
    batch.predicate = from_indices(indicator, {b, n});
  }
  if (tags_tokens(task_)) {
    int64_t n = batch.ids.size(1);
    batch.tags = full({b, n}, static_cast<double>(kIgnoreTag), DType::I64);
    int64_t* t = batch.tags.data<int64_t>();
    for (int64_t r = 0; r < b; ++r) {
      const std::vector<int64_t>& tags = items_[members[static_cast<size_t>(r)]].tags;
      int64_t len = std::min(n, static_cast<int64_t>(tags.size()));
      for (int64_t j = 0; j < len; ++j) t[r * n + j] = tags[static_cast<size_t>(j)];
    }
  }
  return true;
}

}  // namespace attn
