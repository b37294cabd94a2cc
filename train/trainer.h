// The training loop behind `attn train`: data -> vocabulary -> model ->
// optimiser(s) -> epochs of mini-batches with dev evaluation, the best
// checkpoint kept, a resumable checkpoint saved periodically (and on Ctrl-C),
// a JSON-lines metrics log, and final test metrics. ReSAN trains its RSS
// modules with REINFORCE on a second optimiser (seed 004, Sec. 4).
//
// The run folder holds: model.cfg (model config), run.cfg (task and data),
// vocab.txt, labels.txt, best.safetensors (model state of the best dev
// score), last.safetensors (resumable: model + optimiser state + position),
// metrics.jsonl, test_metrics.json.
#pragma once
#include <functional>
#include <string>

#include "attn/models/config.h"
#include "attn/train/evaluate.h"
#include "attn/train/data/task_data.h"

namespace attn {

struct TrainOptions {
  DataSpec data;
  Config model;             // encoder and model keys (models/task_model.h)
  std::string run_dir;      // created when missing
  bool resume = false;      // continue from run_dir/last.safetensors
  bool overwrite = false;   // replace an existing run in run_dir (without it or resume, an existing run is an error)
  std::string optimizer = "adam";  // adam, adadelta, sgd
  double lr = 0;                   // 0: the optimiser's default (adam 1e-3, adadelta 0.5, sgd 0.1)
  int64_t epochs = 3;
  int64_t batch_size = 32;
  int64_t max_len = 200;    // longer sequences are truncated
  int64_t max_steps = 0;    // stop after this many steps (0 = no cap)
  int64_t min_count = 2;    // vocabulary
  int64_t max_vocab = 50000;
  uint64_t seed = 1;
  double weight_decay = 0;  // gamma of the L2 penalty on weight matrices
  double clip_norm = 5.0;   // gradient clipping by global norm (0 = off)
  int64_t eval_every = 0;   // steps between dev evaluations (0 = at the end of each epoch)
  int64_t checkpoint_every = 50;  // steps between resumable checkpoints
  std::string glove;        // GloVe text file for the embeddings (optional)
  // ReSAN (REINFORCE): supervised warm-up with every token selected, then
  // RL-only steps, then both each step; reward -(loss + lambda * fraction).
  int64_t rl_warmup_steps = -1;  // -1: one epoch
  int64_t rl_only_steps = 20;
  double rl_lambda = 0.05;
  double rl_lr = 0;              // 0: as lr
  bool rl_baseline = false;      // moving-average baseline (off = the paper)
  bool verbose = true;           // progress bar and log lines on stderr
  bool detect_anomaly = false;   // check every kernel's output; stop at the first non-finite value
  Device device = Device::CPU;   // the model moves there (Module::to), each batch too
};

struct TrainResult {
  EvalResult test;
  double best_dev = 0;
  std::string primary;
  double train_seconds = 0;
  double examples_per_second = 0;
  int64_t steps = 0;
  bool interrupted = false;  // stopped by Ctrl-C; resumable
};

TrainResult train_model(const TrainOptions& options);

}  // namespace attn
