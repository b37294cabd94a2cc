// The sampled gradient check of a whole task model (word embeddings ->
// encoder -> head) through its training loss, in float64 at a small size, on
// a batch with padding and an empty sentence: what `attn gradcheck --model`
// runs, and what a test runs for every registered encoder.
#pragma once
#include <string>

#include "attn/engine/device.h"
#include "attn/models/config.h"
#include "attn/nn/gradcheck_module.h"
#include "attn/util/task_kind.h"

namespace attn {

struct ModelGradcheckSpec {
  Config config;  // the model config: small_model_config() or a file's
  TaskKind task = TaskKind::Classify;
  int64_t tokens = 8;   // the longest sentence; the batch is 3 sentences, one empty
  int64_t vocab = 8;    // word embedding rows (0 is padding)
  int64_t classes = 3;  // classify, pair and tag heads (relatedness takes the config's K)
  uint64_t seed = 1;    // initialisation, batch and the check's sample
  int64_t samples = 8;  // elements per parameter tensor
  // atol far below an op's default 1e-5: at the initial weights many
  // gradients are far below 1e-5 (MTSA's q and k: ~1e-7), and an absolute
  // bound above them would pass a backward off by any factor. The error of a
  // float64 central difference at step eps = 1e-6 is ~1e-16 |loss| / eps
  // from rounding (~1e-10 here, 100 times below atol) plus eps^2 |f'''| / 6
  // from truncation, which layer norms of the small initial embeddings make
  // large (the Multi-Scale Transformer's embedding: f''' ~ 2e6, a relative
  // error up to ~2e-5): rtol 1e-4.
  Tolerance tolerance{1e-6, 1e-8, 1e-4};
  Device device = Device::CPU;
};

// A registered encoder at a small width: embedding_dim = width, head_hidden
// = 4 * width (a head of few relu units can be dead for every sentence of the
// batch, and then nothing below it gets a gradient), and where the encoder
// has them hidden = hidden, heads = heads, filters = hidden, ffn_dim =
// 4 * hidden and at most 3 layers. Dropout keep probability 1.
Config small_model_config(const std::string& encoder, int64_t width = 4, int64_t hidden = 4, int64_t heads = 2);

// Builds the model in float64 in evaluation mode (no dropout, no sampling),
// redraws its zero-initialised parameters (biases) from [0.05, 0.15] so no
// relu sits exactly on its kink, and checks every parameter tensor against
// central differences of the training loss. A selection policy trained by
// REINFORCE (ReSAN's RSS) is skipped (the loss does not reach it) and selects
// every valid token; a parameter the head's loss does not use passes when its
// central differences are zero too (SampledGradcheckOptions::allow_unreached).
// Throws attn::Error on a bad config.
ModuleGradcheckResult gradcheck_task_model(const ModelGradcheckSpec& spec);

}  // namespace attn
