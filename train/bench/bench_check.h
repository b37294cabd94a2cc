// The numeric check behind scripts/bench_vs_torch.py (`attn bench
// --save-check`): one encoder of `attn bench`, built in float64 from the
// bench's seed, run once in the bench's mode on a padded batch, and written
// with its weights to a safetensors file, so another implementation can load
// the weights by name, run the same input and compare.
//
// The file holds (float64 unless said otherwise):
//   param.<name>          every parameter, named as Module::named_parameters
//   input.x               [B, n, features] ~ U(-1, 1); padded rows keep their
//                         random values (the encoder must select them out)
//   input.mask            uint8 [B, n]: example 0 is full length, the others
//                         have random lengths in [1, n]
//   output.tokens, output.sentence   the encoder's outputs
//   grad.input.x          (train) d loss / d x, loss = sum(tokens) + sum(sentence)
//   grad.param.<name>     (train) d loss / d parameter, for every parameter the
//                         loss reaches (ReSAN's RSS modules are trained by
//                         REINFORCE, not by this loss: they have none)
//   selection.z_head, selection.z_dep   uint8 [B, n] (an encoder with a
//                         selection policy, ReSAN): the tokens its RSS chose
// and metadata: format, model, mode, training, loss, config (the --set keys),
// batch, length, features, seed.
// Train mode runs the encoder in training mode: dropout with keep_prob < 1 is
// random and its masks are not in the file, so a check that another program
// can reproduce sets keep_prob = 1 (ReSAN's RSS sampling is in the file).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/train/bench/bench_runner.h"

namespace attn {

struct BenchCheck {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;
};

// Runs the check for `point` (its dtype is replaced by float64, its mask by
// the padded one above). CPU only.
BenchCheck make_bench_check(const BenchPoint& point);

// make_bench_check, written atomically to `path`.
void save_bench_check(const BenchPoint& point, const std::string& path);

}  // namespace attn
