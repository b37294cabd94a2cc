#include "attn/models/seq2seq_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/index/index.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void check_decode_input(const Tensor& source, int64_t max_length, const char* op) {
  ATTN_CHECK(source.defined() && source.dtype() == DType::I64 && source.dim() == 2 && source.size(0) > 0, op,
             "source must be int64 [B, n] with B > 0, got ",
             source.defined() ? shape_str(source.shape()) : std::string("undefined"));
  ATTN_CHECK(max_length > 0, op, "max_length must be positive, got ", max_length);
}

// logits [R, V] on any device -> float64 log-probabilities on the host,
// row-major, with -inf for pad_id: padding is never a word of the output.
std::vector<double> host_log_probs(const Tensor& logits, int64_t pad_id) {
  const Tensor lp = contiguous(cast(log_softmax(logits, -1), DType::F64).to(Device::CPU));
  const double* p = lp.data<double>();
  std::vector<double> out(p, p + lp.numel());
  for (double v : out)
    ATTN_CHECK(!std::isnan(v), "seq2seq decoding", "the model's log probabilities hold NaN: its weights are not finite");
  const int64_t V = logits.size(-1);
  for (size_t r = 0; r < out.size() / V; ++r) out[r * V + pad_id] = kNegInf;
  return out;
}

Tensor ids_tensor(const std::vector<int64_t>& ids, Device device) {
  return from_indices(ids, {static_cast<int64_t>(ids.size())}).to(device);
}

struct Hypothesis {
  WordIds words;
  double log_prob = kNegInf;
  double score = kNegInf;  // finished: log_prob / length penalty
};

}  // namespace

int64_t default_max_decode_length(const Tensor& source) { return source.size(1) + 50; }

double length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<WordIds> greedy_decode(const Seq2SeqTransformer& model, const Tensor& source, int64_t max_length) {
  GreedyOptions options;
  options.max_length = max_length;
  return greedy_decode(model, source, options);
}

std::vector<WordIds> greedy_decode(const Seq2SeqTransformer& model, const Tensor& source,
                                   const GreedyOptions& options) {
  check_decode_input(source, options.max_length, "greedy_decode");
  NoGrad no_grad;
  const int64_t B = source.size(0), V = model.options().vocab_size, eos = model.options().eos_id;
  const int64_t pad = model.options().pad_id;
  const Tensor memory = model.encode(source);
  DecoderCache cache;
  if (options.use_cache) cache = model.start(memory, source);
  std::vector<WordIds> out(B);
  std::vector<bool> done(B, false);
  std::vector<int64_t> previous(B, 0), prefix;  // prefix: [B, t + 1] row-major, the uncached decoder's input
  for (int64_t t = 0; t < options.max_length; ++t) {
    std::vector<double> lp;
    if (options.use_cache) {
      lp = host_log_probs(model.step(ids_tensor(previous, source.device()), cache), pad);
    } else {
      // Words so far plus a placeholder for the position predicted (the
      // decoder's input is shifted: its last word is never read).
      std::vector<int64_t> rows;
      for (int64_t b = 0; b < B; ++b) {
        rows.insert(rows.end(), prefix.begin() + b * t, prefix.begin() + (b + 1) * t);
        rows.push_back(pad);
      }
      prefix = rows;
      const Tensor target = from_indices(prefix, {B, t + 1}).to(source.device());
      const Tensor last = squeeze(narrow(model.decoder_states(memory, source, target), 1, t, 1), 1);
      lp = host_log_probs(model.logits(last), pad);
    }
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      double* row = lp.data() + b * V;
      if (!options.stop_at_eos) row[eos] = kNegInf;
      const int64_t best = std::max_element(row, row + V) - row;  // the first of equal maxima
      previous[b] = best;
      if (!options.use_cache) prefix[b * (t + 1) + t] = best;
      if (done[b]) continue;
      if (best == eos)
        done[b] = true;
      else
        out[b].push_back(best);
      all_done = all_done && done[b];
    }
    if (all_done) break;
  }
  return out;
}

std::vector<WordIds> beam_search(const Seq2SeqTransformer& model, const Tensor& source,
                                 const BeamSearchOptions& options) {
  const char* op = "beam_search";
  check_decode_input(source, options.max_length, op);
  ATTN_CHECK(options.beam_size >= 1, op, "beam_size must be at least 1, got ", options.beam_size);
  ATTN_CHECK(std::isfinite(options.alpha) && options.alpha >= 0, op, "alpha must be finite and >= 0, got ",
             options.alpha);
  if (options.beam_size == 1) return greedy_decode(model, source, options.max_length);
  NoGrad no_grad;
  const int64_t B = source.size(0), K = options.beam_size, V = model.options().vocab_size;
  const int64_t eos = model.options().eos_id;
  // Row b K + k of the decoder batch is beam k of sentence b.
  std::vector<int64_t> repeat(B * K);
  for (int64_t r = 0; r < B * K; ++r) repeat[r] = r / K;
  const Tensor beams_source = index_select(source, 0, ids_tensor(repeat, source.device()));
  DecoderCache cache = model.start(model.encode(beams_source), beams_source);
  // Only beam 0 is live at first, so the K beams do not start as K copies.
  std::vector<std::vector<Hypothesis>> alive(B, std::vector<Hypothesis>(K)), finished(B);
  for (auto& a : alive) a[0].log_prob = 0;
  std::vector<bool> done(B, false);
  const double max_penalty = length_penalty(options.max_length, options.alpha);
  std::vector<int64_t> previous(B * K, 0), parents(B * K);
  for (int64_t t = 0; t < options.max_length; ++t) {
    const std::vector<double> lp = host_log_probs(model.step(ids_tensor(previous, source.device()), cache), model.options().pad_id);
    const double penalty = length_penalty(t + 1, options.alpha);
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      struct Candidate {
        double log_prob;
        int64_t beam, word;
      };
      std::vector<Candidate> candidates;
      for (int64_t k = 0; k < K; ++k) {
        if (alive[b][k].log_prob == kNegInf) continue;
        const double* row = lp.data() + (b * K + k) * V;
        for (int64_t v = 0; v < V; ++v) candidates.push_back({alive[b][k].log_prob + row[v], k, v});
      }
      const size_t keep = std::min<size_t>(candidates.size(), static_cast<size_t>(2 * K));
      // Ties go to the lower beam, then the lower word: the order greedy takes too.
      std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                        [](const Candidate& x, const Candidate& y) {
                          if (x.log_prob != y.log_prob) return x.log_prob > y.log_prob;
                          return x.beam != y.beam ? x.beam < y.beam : x.word < y.word;
                        });
      std::vector<Hypothesis> next(K);
      std::vector<int64_t> next_parent(K, 0);
      int64_t live = 0;
      for (size_t c = 0; c < keep; ++c) {
        const Candidate& x = candidates[c];
        if (done[b]) break;
        if (x.word == eos) {
          finished[b].push_back({alive[b][x.beam].words, x.log_prob, x.log_prob / penalty});
        } else if (live < K) {
          next[live].words = alive[b][x.beam].words;
          next[live].words.push_back(x.word);
          next[live].log_prob = x.log_prob;
          next_parent[live] = x.beam;
          ++live;
        }
      }
      std::stable_sort(finished[b].begin(), finished[b].end(),
                       [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
      if (static_cast<int64_t>(finished[b].size()) > K) finished[b].resize(K);
      if (!done[b]) alive[b] = next;
      for (int64_t k = 0; k < K; ++k) {
        parents[b * K + k] = b * K + (done[b] ? k : next_parent[k]);
        previous[b * K + k] = alive[b][k].words.empty() ? 0 : alive[b][k].words.back();
      }
      // Live log probabilities only fall, and no penalty exceeds max_length's.
      const double best_alive = alive[b][0].log_prob;
      const bool bound_met = static_cast<int64_t>(finished[b].size()) == K &&
                             (best_alive == kNegInf || best_alive / max_penalty < finished[b].back().score);
      done[b] = done[b] || bound_met;
      all_done = all_done && done[b];
    }
    if (all_done) break;
    cache.select(ids_tensor(parents, source.device()));
  }
  std::vector<WordIds> out(B);
  for (int64_t b = 0; b < B; ++b) out[b] = finished[b].empty() ? alive[b][0].words : finished[b][0].words;
  return out;
}

}  // namespace attn
