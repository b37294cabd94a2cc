// The training loop behind `attn train`: data -> vocabulary -> model ->
// optimiser(s) -> epochs of mini-batches with dev evaluation, the best
// checkpoint kept, a resumable checkpoint saved periodically (and on Ctrl-C),
// a JSON-lines metrics log, and final test metrics.
//
// Where the parts are: one optimisation step is TrainingStep::run
// (train/training_step.h); the epochs, dev evaluations and checkpoints are
// train/trainer.cpp; what a model adds to plain training is a
// TrainingExtension (train/training_extension.h), such as ReSAN's REINFORCE
// on a second optimiser (seed 004, Sec. 4; train/reinforce/reinforce_extension.h).
//
// The run folder holds: model.cfg (model config), run.cfg (task and data),
// vocab.txt, labels.txt, best.safetensors (model state of the best dev
// score), last.safetensors (resumable: model + optimiser state + position),
// metrics.jsonl, steps.jsonl (train/step_log.h), test_metrics.json
// (train/run/run_folder.h). `attn train`
// locks it first (train/run/run_lock.h); train_model takes no lock itself.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/config.h"
#include "attn/train/distributed/communicator.h"
#include "attn/train/distributed/gradient_sum_choice.h"
#include "attn/train/evaluate.h"
#include "attn/train/reinforce/reinforce.h"
#include "attn/train/data/task_data.h"

namespace attn {

struct TrainOptions {
  DataSpec data;
  Config model;             // encoder and model keys (models/task_model.h)
  std::string run_dir;      // created when missing
  std::string preset;       // the preset these settings came from (train/presets.h), recorded in run.cfg
  bool resume = false;      // continue from run_dir/last.safetensors
  bool overwrite = false;   // replace an existing run in run_dir (without it or resume, an existing run is an error)
  std::string optimizer = "adam";  // adam, adadelta, sgd
  double lr = 0;                   // 0: the optimiser's default (adam 1e-3, adadelta 0.5, sgd 0.1)
  int64_t epochs = 3;
  int64_t batch_size = 32;
  int64_t max_len = 200;    // longer sequences are truncated
  int64_t max_steps = 0;    // stop after this many steps (0 = no cap)
  int64_t min_count = 1;    // vocabulary: every training word (the papers fine-tune them all)
  int64_t max_vocab = 0;
  // The weights' and activations' type: float32 (the papers), or float64
  // for studies of rounding (data-parallel equivalence, gradient checks).
  DType dtype = DType::F32;    // vocabulary size cap, the most frequent words kept (0 = no cap, as the papers)
  uint64_t seed = 1;
  double weight_decay = 0;  // gamma of the L2 penalty factor * gamma * ||theta||^2
  // What the penalty covers: "all" parameters (seeds 001 and 004: "L2
  // regularization ... to all the model") or weight "matrices" only.
  std::string weight_decay_scope = "all";
  double weight_decay_factor = 1.0;  // 1: gamma ||theta||^2 (the papers); 0.5: TensorFlow's l2_loss
  double clip_norm = 5.0;   // gradient clipping by global norm (0 = off; no paper clips)
  // Steps between dev evaluations (0: none); the end of each epoch and of
  // the run are evaluated whatever it is.
  int64_t eval_every = 0;
  int64_t checkpoint_every = 50;  // steps between resumable checkpoints
  // Steps between steps.jsonl lines (0: none). Like eval_every it is not
  // recorded in run.cfg and may change on --resume.
  int64_t log_every = 10;
  std::string glove;        // GloVe text file for the embeddings (optional)
  // ReSAN (REINFORCE, seed 004 Sec. 4): a supervised warm-up with every token
  // selected, optionally RL-only steps, then theta_r and theta_s together.
  // The warm-up lasts until the dev loss falls by less than
  // rl_warmup_min_decrease between evaluations (rl_warmup_steps = -2), or a
  // fixed number of steps (>= 0; -1: one epoch).
  static constexpr int64_t kWarmupByDevLoss = -2;
  int64_t rl_warmup_steps = kWarmupByDevLoss;
  double rl_warmup_min_decrease = 0.01;
  int64_t rl_only_steps = 0;
  double rl_lambda = 0.01;       // within the paper's {0.005, 0.01, 0.02}
  RewardKind rl_reward = RewardKind::Probability;
  double rl_lr = 0;              // 0: as lr
  bool rl_baseline = false;      // moving-average baseline (off = the paper)
  bool verbose = true;           // progress bar and log lines on stderr
  bool detect_anomaly = false;   // check every kernel's output; stop at the first non-finite value
  Device device = Device::CPU;   // the model moves there (Module::to), each batch too
  // The processes of a data-parallel run (train/distributed/; null: this
  // process alone). Each takes its share of every batch; process 0 writes
  // the run folder. Not recorded in run.cfg: any number may resume a run.
  Communicator* processes = nullptr;
  // How the processes sum their gradients (--sync; gradient_sum_choice.h).
  // Not recorded in run.cfg either: a resumed run may sum another way.
  SumMethod sum_method = SumMethod::Auto;
};

struct TrainResult {
  EvalResult test;
  // The data's reported splits (Dataset::reported), by the best checkpoint too.
  std::vector<std::pair<std::string, EvalResult>> reported;
  double best_dev = 0;
  std::string primary;
  double train_seconds = 0;
  double examples_per_second = 0;
  int64_t steps = 0;
  bool interrupted = false;  // stopped by Ctrl-C; resumable
};

TrainResult train_model(const TrainOptions& options);

}  // namespace attn
