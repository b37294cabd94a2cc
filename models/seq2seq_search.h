// Decoding a Seq2SeqTransformer (models/seq2seq_transformer.h) with its
// cached incremental steps: greedy, and beam search as tensor2tensor's
// beam_search does it, batched over sentences (B sentences x K beams are
// one decoder batch). Both run under NoGrad; set the model to evaluation
// mode first (dropout off). Results are word ids without the final eos_id;
// pad_id is never chosen (its log probability counts as -inf).
//
// Beam search keeps K live hypotheses per sentence. Each step extends every
// live one by every word and takes the 2K best extensions by log
// probability: those ending in eos_id join the finished hypotheses, scored
// log p / lp with the GNMT length penalty lp = ((5 + length) / 6)^alpha (Wu
// et al., 2016), of which the K best are kept; the K best of the others
// stay live (the cache's rows follow their parents). A sentence is done when
// it has K finished hypotheses and the best live one, even at the length
// penalty of max_length, scores below the worst of them, or at max_length.
// The answer is the best finished hypothesis, or the best live one when none
// finished. Beam size 1 is greedy decoding, as in t2t (_fast_decode): the
// search above would keep a sentence that ended early and improbably.
#pragma once
#include <cstdint>
#include <vector>

#include "attn/models/seq2seq_transformer.h"

namespace attn {

using WordIds = std::vector<int64_t>;

// t2t's decode length: the source length plus 50 (decode_hparams extra_length).
int64_t default_max_decode_length(const Tensor& source);

// source int64 [B, ns] -> B sentences of at most max_length words (> 0).
std::vector<WordIds> greedy_decode(const Seq2SeqTransformer& model, const Tensor& source, int64_t max_length);

struct GreedyOptions {
  int64_t max_length = 0;  // > 0
  // false: every step reruns the decoder over the whole prefix (O(t^2) per
  // sentence of t words), the reference the cache is measured against.
  bool use_cache = true;
  // false: decode exactly max_length words (eos_id is never chosen), as the
  // decoding benchmark needs outputs of a set length.
  bool stop_at_eos = true;
};
std::vector<WordIds> greedy_decode(const Seq2SeqTransformer& model, const Tensor& source,
                                   const GreedyOptions& options);

struct BeamSearchOptions {
  int64_t beam_size = 4;  // t2t decode_hparams beam_size
  double alpha = 0.6;     // t2t decode_hparams alpha
  int64_t max_length = 0; // > 0
};
std::vector<WordIds> beam_search(const Seq2SeqTransformer& model, const Tensor& source,
                                 const BeamSearchOptions& options);

// The GNMT length penalty ((5 + length) / 6)^alpha.
double length_penalty(int64_t length, double alpha);

}  // namespace attn
