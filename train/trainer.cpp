#include "attn/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_set>

#include "attn/engine/anomaly.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/models/model_config_check.h"
#include "attn/nn/safetensors.h"
#include "attn/train/checkpoint.h"
#include "attn/train/distributed/run_agreement.h"
#include "attn/train/distributed/gradient_sum_choice.h"
#include "attn/train/distributed/process_gpu.h"
#include "attn/train/interrupt.h"
#include "attn/train/optim/gradient_sync.h"
#include "attn/train/optim/make_optimizer.h"
#include "attn/train/optim/weight_decay.h"
#include "attn/train/pictures/training_curves.h"
#include "attn/train/progress.h"
#include "attn/train/reinforce/reinforce_extension.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/run/run_settings.h"
#include "attn/train/step_log.h"
#include "attn/train/training_step.h"
#include "attn/util/atomic_file.h"

namespace attn {

namespace {

WeightDecayOptions weight_decay_options(const TrainOptions& o) {
  WeightDecayOptions w;
  w.factor = o.weight_decay_factor;
  if (o.weight_decay_scope == "all") {
    w.all_parameters = true;
  } else {
    ATTN_CHECK(o.weight_decay_scope == "matrices", "train", "unknown weight decay scope '", o.weight_decay_scope,
               "' (known: all, matrices)");
  }
  return w;
}

int64_t classes_for(const Dataset& data, const Config& model) {
  if (data.task == TaskKind::Relatedness) return relatedness_classes(model);
  return static_cast<int64_t>(data.label_names.size());
}

std::string indent(const std::string& lines) {
  std::string out;
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    out += "  " + lines.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

class Clock {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One run, from its folder to its test metrics. The constructor sets it up
// (data, vocabulary, model, optimisers, the position a resumed run continues
// from); train() runs the epochs and tests the best checkpoint.
class Trainer {
 public:
  explicit Trainer(const TrainOptions& o);
  TrainResult train();

 private:
  void log(const std::string& line) const;
  void check_splits_not_empty() const;
  void read_or_build_vocabulary();
  void log_dropped_words() const;
  void build_model();
  void build_optimisers();
  void restore_position();
  TrainingStep make_step(ProgressBar& bar);
  bool train_epochs(TrainingStep& step, ProgressBar& bar);
  bool end_epoch(ProgressBar& bar);
  bool end_run(ProgressBar& bar);
  void stop_on_interrupt(ProgressBar& bar);
  void log_step(const StepResult& result, int64_t examples, int64_t tokens);
  double mean_train_loss() const;
  void evaluate_dev_once(ProgressBar& bar);
  void evaluate_dev(double train_loss);
  bool keep_as_best(double score);
  void report_best_without_a_finite_score() const;
  void save_checkpoint();
  void check_processes_agree_at_start();
  void choose_gpu();
  SumChoice choose_gradient_sum();
  bool stop_requested();
  bool writer() const { return processes_.writes_run_folder(); }

  const TrainOptions& o_;
  SingleProcess alone_;
  Communicator& processes_;  // o_.processes, or alone_
  const RunFiles run_;
  Dataset data_;
  Vocabulary vocab_;
  Config model_config_;  // from the run folder when resuming
  Generator init_, noise_, shuffle_;
  std::unique_ptr<TaskModel> model_;
  // What the model's training adds to the plain loop: ReSAN's REINFORCE when
  // the encoder has a selection policy, nothing otherwise.
  std::unique_ptr<TrainingExtension> extension_;
  std::unique_ptr<Optimizer> model_optimizer_;
  std::vector<Optimizer*> optimizers_;  // as checkpoints save them: the model's, then the extension's
  std::unique_ptr<WeightDecay> decay_;
  SingleProcessSync single_sync_;
  // With more than one process, or NCCL asked for (gradient_sum_choice.h).
  SumChoice sum_choice_;
  std::unique_ptr<DataParallelSync> summed_sync_;
  TrainProgress progress_;
  BatchOptions batch_options_;
  EvalOptions eval_options_;
  StepLog step_log_;
  int64_t total_steps_ = 0;
  // The step of the last dev evaluation. A checkpoint is only ever saved once
  // every evaluation due at its position is done, so a resumed run starts
  // with its position evaluated.
  int64_t evaluated_step_ = -1;
  int64_t examples_ = 0;
  // What this process sent to sum gradients, and what dense sums would have sent.
  int64_t sync_bytes_ = 0, sync_dense_bytes_ = 0, sync_steps_ = 0;
  std::vector<double> sync_seconds_;  // per step
  TrainResult result_;
};

Trainer::Trainer(const TrainOptions& o)
    : o_(o),
      processes_(o.processes ? *o.processes : static_cast<Communicator&>(alone_)),
      run_{o.run_dir},
      model_config_(o.model),
      init_(o.seed),
      noise_(o.seed + 1),
      shuffle_(o.seed + 2),
      step_log_(run_.steps(), processes_.writes_run_folder() ? o.log_every : 0, o.device) {
  ATTN_CHECK(!o.run_dir.empty(), "train", "no run folder given");
  ATTN_CHECK(o.log_every >= 0, "train", "--log-every must be 0 (no step log) or positive, got ", o.log_every);
  ATTN_CHECK(o.epochs > 0 && o.batch_size > 0, "train", "--epochs and --batch must be positive");
  // Process 0 alone checks and writes the run folder (the others would see
  // the files it is writing).
  if (writer()) check_run_folder(o_);
  if (processes_.size() > 1) log("data-parallel: " + processes_.describe());
  choose_gpu();  // before the first CUDA tensor
  sum_choice_ = choose_gradient_sum();  // an impossible --sync stops the run before any work
  // A bad model config stops the run before the data is read.
  check_model_config(o_.model, "the model config");
  data_ = load_task_data(o_.data);
  log(dataset_summary(data_));
  check_splits_not_empty();
  read_or_build_vocabulary();
  build_model();
  build_optimisers();
  restore_position();
  if (processes_.size() > 1) check_processes_agree_at_start();
  summed_sync_ = make_data_parallel_sync(sum_choice_, processes_);
  log("gradient sums: " + (summed_sync_ ? summed_sync_->describe() + " (" + sum_choice_.why + ")"
                                         : std::string("none: one process")));
}

// One GPU per process: processes on one machine take its GPUs by local rank.
void Trainer::choose_gpu() {
  if (o_.device != Device::CUDA || processes_.size() == 1) return;
  const int gpus = cuda_device_count();
  const int gpu = gpu_for_process(local_processes_from_environment(), processes_.rank(), gpus);
  cuda_use_device(gpu);
  log("GPUs: one per process by local rank; process 0 on GPU " + std::to_string(gpu) + " of " +
      std::to_string(gpus));
}

// NCCL or MPI (gradient_sum_choice.h); every process makes the same choice.
SumChoice Trainer::choose_gradient_sum() {
  SumSituation situation;
  situation.asked = o_.sum_method;
  situation.device = o_.device;
  situation.processes = processes_.size();
  situation.local = local_processes_from_environment();
  situation.gpus = o_.device == Device::CUDA ? cuda_device_count() : 0;
  situation.nccl_built = built_with_nccl();
  SumChoice choice = choose_sum(situation);
  if (processes_.size() > 1)
    choice = agree_on_sum(choice, o_.sum_method,
                          processes_.gather_to_all(choice.method == SumMethod::Nccl ? 1 : 0, "gradient sum choice"));
  return choice;
}

// Every process hashes its settings, data, vocabulary and initial weights;
// any difference stops every process with the same error.
void Trainer::check_processes_agree_at_start() {
  std::string settings = run_settings(o_).to_text() + model_config_.to_text();
  check_processes_agree(processes_, {{"the settings (run.cfg, model.cfg)", Fingerprint().add(settings).value()},
                                     {"the training data", fingerprint_of(data_.train)},
                                     {"the dev data", fingerprint_of(data_.dev)},
                                     {"the test data", fingerprint_of(data_.test)},
                                     {"the vocabulary", fingerprint_of(vocab_.words())},
                                     {"the initial weights", fingerprint_of(model_->named_parameters())},
                                     {"the position in training", Fingerprint()
                                                                      .add(progress_.step)
                                                                      .add(progress_.epoch)
                                                                      .add(progress_.batch_in_epoch)
                                                                      .value()}});
}

// Ctrl-C (or the launcher's SIGTERM) reaches the processes at different
// moments: they stop together when any of them was asked to.
bool Trainer::stop_requested() {
  if (processes_.size() == 1) return interrupt_requested();
  uint64_t asked = 0;
  for (uint64_t flag : processes_.gather_to_all(interrupt_requested() ? 1 : 0, "stop check")) asked |= flag;
  return asked != 0;
}

// An empty split would train on nothing or select and report on nothing; the
// error names the split, the data and what empties one.
void Trainer::check_splits_not_empty() const {
  const std::string data = o_.data.data.empty() ? std::string("the default data") : "'" + o_.data.data + "'";
  auto check = [&](const char* split, const std::vector<Example>& examples, const std::string& cause) {
    ATTN_CHECK(!examples.empty(), "train", "the ", split, " split of ", data, " (", data_.name, ") is empty: ", cause,
               "; every split needs at least one example");
  };
  check("train", data_.train, "its file has no example lines");
  check("dev", data_.dev,
        "its file has no example lines, or, where the data has no dev file, the " +
            std::to_string(data_.train.size()) + " training example(s) are too few to carve one from");
  check("test", data_.test, "its file has no example lines");
}

void Trainer::log(const std::string& line) const {
  if (o_.verbose) std::fprintf(stderr, "%s\n", line.c_str());
}

// The vocabulary comes from the run folder when resuming.
void Trainer::read_or_build_vocabulary() {
  if (o_.resume) {
    ATTN_CHECK(path_exists(run_.last()), "train", "--resume: no checkpoint at '", run_.last(), "'");
    vocab_ = Vocabulary::load(run_.vocab());
    ATTN_CHECK(read_labels(run_) == data_.label_names, "train", "--resume: the labels in '", run_.labels(),
               "' differ from the data's");
  } else {
    vocab_ = Vocabulary::build(data_.train, o_.min_count, o_.max_vocab);
    log_dropped_words();
  }
  log("vocabulary: " + std::to_string(vocab_.size()) + " words; run folder: " + o_.run_dir);
  if (task_model_config_keys().get_bool(model_config_, "char_cnn")) {
    vocab_.set_characters(o_.resume ? CharVocabulary::load(run_.chars()) : CharVocabulary::build(data_.train));
    log("characters: " + std::to_string(vocab_.characters()->size()) + " (padding and unknown included)");
  }
}

// The training words that got no row of their own (--min-count, --max-vocab)
// and read as the unknown word: said, never silent.
void Trainer::log_dropped_words() const {
  std::unordered_set<std::string> distinct;
  for (const Example& e : data_.train) {
    distinct.insert(e.tokens.begin(), e.tokens.end());
    distinct.insert(e.tokens_b.begin(), e.tokens_b.end());
    for (const auto& sentence : e.passage) distinct.insert(sentence.begin(), sentence.end());
  }
  int64_t dropped = 0;
  for (const std::string& word : distinct)
    if (vocab_.id(word) == Vocabulary::kUnk && word != vocab_.word(Vocabulary::kUnk)) ++dropped;
  if (dropped > 0)
    log("vocabulary: " + std::to_string(dropped) + " of " + std::to_string(distinct.size()) +
        " training words read as the unknown word (--min-count " + std::to_string(o_.min_count) + ", --max-vocab " +
        std::to_string(o_.max_vocab) + ")");
}

void Trainer::build_model() {
  model_ = std::make_unique<TaskModel>(model_config_, data_.task, vocab_.size(), classes_for(data_, model_config_),
                                       o_.dtype, init_, noise_,
                                       vocab_.characters() ? vocab_.characters()->size() : 0);
  model_config_.check_all_used("the model config");
  if (!o_.glove.empty() && !o_.resume) {
    int64_t found = model_->embedding().load_glove(o_.glove, vocab_.words());
    log("GloVe: " + std::to_string(found) + " of " + std::to_string(vocab_.size()) + " words found");
  }
  if (!o_.resume && writer()) write_run_files(o_, vocab_, data_.label_names);  // nothing is written before the model is valid
  // The whole resolved configuration, as run.cfg and model.cfg record it.
  log("configuration" + (o_.preset.empty() ? std::string() : " (preset " + o_.preset + ")") + ":\n" +
      indent(run_settings(o_).to_text()) + indent(model_config_.to_text()));
  log("model: " + encoder_name(model_config_) + ", " + std::to_string(model_->parameter_count()) +
      " parameters");
  model_->to(o_.device);  // before the optimisers, whose state follows each parameter's device
}

// The model's optimiser and weight decay cover every parameter the
// extension does not train itself.
void Trainer::build_optimisers() {
  extension_ = make_training_extension(*model_, data_.task, o_);
  const ParameterSplit split = split_parameters(
      model_->named_parameters(), [&](const std::string& name) { return extension_->trains(name); });
  model_optimizer_ = make_optimizer(o_.optimizer, tensors_of(split.rest), o_.lr);
  optimizers_ = {model_optimizer_.get()};
  if (Optimizer* own = extension_->optimizer()) {
    optimizers_.push_back(own);
    check_disjoint({model_optimizer_.get(), own});
  }
  if (o_.weight_decay > 0)
    decay_ = std::make_unique<WeightDecay>(split.rest, o_.weight_decay, weight_decay_options(o_));
}

// Where the loop starts: step 0, or the checkpoint a resumed run continues.
void Trainer::restore_position() {
  if (o_.resume) {
    progress_ = load_training_checkpoint(run_.last(), *model_, optimizers_);
    noise_.set_state(progress_.noise_state);
    shuffle_.set_state(progress_.epoch_shuffle_state);  // the order of the epoch it stopped in
    log("resumed at epoch " + std::to_string(progress_.epoch + 1) + ", step " + std::to_string(progress_.step));
  }
  batch_options_.batch_size = o_.batch_size;
  batch_options_.max_len = o_.max_len;
  eval_options_.batch_size = o_.batch_size;
  eval_options_.max_len = o_.max_len;
  eval_options_.processes = &processes_;
  eval_options_.noise = &noise_;
  eval_options_.noise_seed = static_cast<uint64_t>(o_.seed) + 2;
  const int64_t per_epoch = (static_cast<int64_t>(data_.train.size()) + o_.batch_size - 1) / o_.batch_size;
  ATTN_CHECK(o_.epochs <= std::numeric_limits<int64_t>::max() / std::max<int64_t>(per_epoch, 1), "train",
             "--epochs ", o_.epochs, " times ", per_epoch, " batches per epoch overflows the step counter");
  if (o_.resume) {
    check_progress_fits_run(progress_, per_epoch, o_.epochs, run_.last());
    // Lines a killed run wrote after its checkpoint: the steps they log are trained again.
    if (writer()) {
      keep_metrics_up_to(run_.metrics(), progress_.step);
      keep_metrics_up_to(run_.steps(), progress_.step);
    }
    evaluated_step_ = progress_.step;
  }
  total_steps_ = per_epoch * o_.epochs;
  if (o_.max_steps > 0) total_steps_ = std::min(total_steps_, o_.max_steps);
  extension_->begin(progress_, per_epoch);
}

TrainResult Trainer::train() {
  install_interrupt_handler();
  const Clock clock;
  ProgressBar bar("train", total_steps_);
  model_->set_training(true);
  TrainingStep step = make_step(bar);
  std::unique_ptr<AnomalyDetector> detector;
  if (o_.detect_anomaly) detector = std::make_unique<AnomalyDetector>();
  try {
    if (!train_epochs(step, bar)) return result_;
  } catch (const AnomalyError& e) {
    if (o_.verbose) bar.finish();
    throw AnomalyError("train --detect-anomaly: stopped at step " + std::to_string(progress_.step) + " (epoch " +
                       std::to_string(progress_.epoch + 1) + ", batch " +
                       std::to_string(progress_.batch_in_epoch + 1) + "): " + e.what());
  }
  detector.reset();
  result_.train_seconds = clock.seconds();
  result_.examples_per_second = result_.train_seconds > 0 ? examples_ / result_.train_seconds : 0;
  result_.steps = progress_.step;
  if (sync_steps_ > 0) {
    // The fastest step's sum is close to the exchange alone; the others also
    // wait for the slowest process (shares of other lengths, a busy core).
    std::vector<double> seconds = sync_seconds_;
    std::sort(seconds.begin(), seconds.end());
    const double total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
    char line[512];
    std::snprintf(line, sizeof line,
                  "gradient sums: each process sent %.3f MB per step (the embedding rows of each batch's words; "
                  "with every row: %.3f MB) in %.1f ms per step: median %.1f ms, fastest %.1f ms (%.1f%% of "
                  "the training time)",
                  static_cast<double>(sync_bytes_) / 1e6 / static_cast<double>(sync_steps_),
                  static_cast<double>(sync_dense_bytes_) / 1e6 / static_cast<double>(sync_steps_),
                  1e3 * total / static_cast<double>(sync_steps_), 1e3 * seconds[seconds.size() / 2],
                  1e3 * seconds.front(), result_.train_seconds > 0 ? 100 * total / result_.train_seconds : 0.0);
    log(line);
  }

  // Test metrics of the best dev checkpoint, evaluated as it was on dev.
  extension_->end_training();
  if (progress_.best_step < 0 && writer()) report_best_without_a_finite_score();
  // Process 0 may still be writing best.safetensors (atomically): every
  // process reads it once all have arrived here.
  if (processes_.size() > 1) processes_.gather_to_all(0, "before reading the best checkpoint");
  if (path_exists(run_.best())) load_best_weights(run_.best(), *model_);
  result_.test = evaluate(*model_, data_.test, vocab_, data_.label_names, eval_options_);
  result_.reported.clear();
  for (const NamedSplit& split : data_.reported)
    result_.reported.emplace_back(split.name,
                                  evaluate(*model_, split.examples, vocab_, data_.label_names, eval_options_));
  result_.primary = result_.test.primary;  // set even when a finished run is resumed and trains no step
  result_.best_dev = progress_.best_dev;
  return result_;
}

TrainingStep Trainer::make_step(ProgressBar& bar) {
  StepParts parts;
  parts.model = model_.get();
  parts.task = data_.task;
  parts.model_optimizer = model_optimizer_.get();
  parts.decay = writer() ? decay_.get() : nullptr;  // the penalty's gradient is added once
  parts.extension = extension_.get();
  parts.gradient_sync = summed_sync_ ? static_cast<GradientSync*>(summed_sync_.get()) : &single_sync_;
  parts.noise = &noise_;
  parts.noise_seed = static_cast<uint64_t>(o_.seed) + 1;
  parts.clip_norm = o_.clip_norm;
  parts.device = o_.device;
  parts.before_stopping = [this, &bar] {
    if (o_.verbose) bar.finish();
  };
  return TrainingStep(std::move(parts));
}

// Epochs of mini-batches from the current position, with dev evaluations and
// resumable checkpoints. False when Ctrl-C stopped it (after a checkpoint).
// A step that ends the epoch or the run leaves its evaluation, checkpoint and
// Ctrl-C to end_epoch / end_run, so no checkpoint is ever taken at an epoch's
// end before the epoch's evaluation or between the epochs.
bool Trainer::train_epochs(TrainingStep& step, ProgressBar& bar) {
  // The epoch's running mean of the training loss lives in the checkpoint.
  double& loss_sum = progress_.train_loss_sum;
  int64_t& loss_count = progress_.train_loss_count;
  bool done = progress_.step >= total_steps_;
  while (progress_.epoch < o_.epochs && !done) {
    // The state before this epoch's permutation is drawn: a checkpoint taken
    // anywhere in the epoch restores it and redraws the same order.
    progress_.epoch_shuffle_state = shuffle_.state();
    BatchIterator it(data_.train, vocab_, data_.task, batch_options_, &shuffle_);
    it.set_share({processes_.rank(), processes_.size()});
    Batch batch;
    const int64_t batches = it.batches_per_epoch();
    for (int64_t skip = 0; skip < progress_.batch_in_epoch; ++skip) it.next(batch);
    while (!done) {
      step_log_.step_begins();
      if (!it.next(batch)) break;
      const int64_t tokens = step_log_.on() ? batch.global_positions : 0;
      if (summed_sync_ && model_->embedding().weight.requires_grad())
        summed_sync_->set_sparse_rows(model_->embedding().weight, batch.global_word_ids);
      const StepResult result = step.run(batch, progress_);
      if (summed_sync_) {
        sync_bytes_ += summed_sync_->bytes_sent_last_step();
        sync_dense_bytes_ += summed_sync_->dense_bytes_last_step();
        sync_seconds_.push_back(summed_sync_->seconds_last_step());
        ++sync_steps_;
      }
      loss_sum += result.loss;
      ++loss_count;
      examples_ += batch.global_examples;
      ++progress_.step;
      ++progress_.batch_in_epoch;
      // Before the step's evaluation and checkpoint: a checkpoint never
      // covers a step whose line is not written yet.
      log_step(result, batch.global_examples, tokens);
      if (o_.verbose) bar.update(progress_.step, mean_train_loss(), examples_);
      done = progress_.step >= total_steps_;
      if (o_.eval_every > 0 && progress_.step % o_.eval_every == 0) evaluate_dev_once(bar);
      if (done || progress_.batch_in_epoch == batches) break;
      if (stop_requested()) {
        stop_on_interrupt(bar);
        return false;
      }
      if (o_.checkpoint_every > 0 && progress_.step % o_.checkpoint_every == 0) save_checkpoint();
    }
    if (progress_.batch_in_epoch < batches) break;  // stopped mid-epoch by --max-steps
    if (!end_epoch(bar)) return false;
  }
  return end_run(bar);
}

// The epoch's evaluation, then the position of the next epoch's first batch,
// saved. False when Ctrl-C stopped the run.
bool Trainer::end_epoch(ProgressBar& bar) {
  if (o_.verbose) bar.finish();
  evaluate_dev_once(bar);
  ++progress_.epoch;
  progress_.batch_in_epoch = 0;
  progress_.epoch_shuffle_state = shuffle_.state();
  progress_.train_loss_sum = 0;
  progress_.train_loss_count = 0;
  if (stop_requested()) {
    stop_on_interrupt(bar);
    return false;
  }
  save_checkpoint();
  return true;
}

// The run's last steps are evaluated (they may end mid-epoch, or between two
// --eval-every evaluations) and the final position saved. False when Ctrl-C
// stopped it: the checkpoint is then final, and --resume only tests it.
bool Trainer::end_run(ProgressBar& bar) {
  evaluate_dev_once(bar);
  if (stop_requested()) {
    stop_on_interrupt(bar);
    return false;
  }
  save_checkpoint();
  return true;
}

void Trainer::stop_on_interrupt(ProgressBar& bar) {
  save_checkpoint();
  if (o_.verbose) bar.finish();
  // Said even with --quiet: it answers the user's Ctrl-C.
  if (writer())
    std::fprintf(stderr, "interrupted: saved a resumable checkpoint to %s (continue with --resume)\n",
               run_.last().c_str());
  result_.interrupted = true;
  result_.steps = progress_.step;
}

void Trainer::log_step(const StepResult& result, int64_t examples, int64_t tokens) {
  StepLine line;
  line.step = progress_.step;
  line.epoch = progress_.epoch + 1;
  line.loss = result.loss;
  line.mean_loss = mean_train_loss();
  line.grad_norm = result.grad_norm;
  line.clipped = result.clipped;
  line.lr = model_optimizer_->lr();
  step_log_.step_ends(line, examples, tokens);
}

double Trainer::mean_train_loss() const {
  const int64_t count = progress_.train_loss_count;
  return count ? progress_.train_loss_sum / static_cast<double>(count) : 0.0;
}

// The dev evaluation of the current step, unless it has had one.
void Trainer::evaluate_dev_once(ProgressBar& bar) {
  if (evaluated_step_ == progress_.step) return;
  if (o_.verbose) bar.finish();
  evaluate_dev(mean_train_loss());
}

// Logs a dev evaluation to metrics.jsonl (and curves.svg), and keeps the
// model as best.safetensors when its score is the best so far.
void Trainer::evaluate_dev(double train_loss) {
  evaluated_step_ = progress_.step;
  const EvalResult dev = evaluate(*model_, data_.dev, vocab_, data_.label_names, eval_options_);
  result_.primary = dev.primary;
  std::map<std::string, double> line = dev.metrics;
  line["step"] = static_cast<double>(progress_.step);
  line["epoch"] = static_cast<double>(progress_.epoch + 1);
  line["train_loss"] = train_loss;
  extension_->add_dev_metrics(line);
  if (writer()) {
    append_line(run_.metrics(), metrics_json(line));
    write_run_curves(run_.dir);
  }
  const bool better = keep_as_best(dev.primary_value());
  extension_->after_dev_evaluation(dev, progress_.step);
  if (o_.verbose)
    std::fprintf(stderr, "dev %s %.4f%s\n", dev.primary.c_str(), dev.primary_value(), better ? " (best)" : "");
}

// Saves best.safetensors when `score` is the best so far. A non-finite score
// (a relatedness model with constant predictions has no Pearson r) never
// beats a finite one; until a finite one is seen the latest evaluated weights
// are kept, so a run always leaves a best checkpoint. True when `score` is
// the new best.
bool Trainer::keep_as_best(double score) {
  if (std::isfinite(score) && score > progress_.best_dev) {
    progress_.best_dev = score;
    progress_.best_step = progress_.step;
    if (writer()) save_best_weights(run_.best(), *model_, progress_.step);
    return true;
  }
  if (progress_.best_step < 0 && writer()) save_best_weights(run_.best(), *model_, progress_.step);
  return false;
}

// Said even with --quiet: the best checkpoint was not chosen by its score.
void Trainer::report_best_without_a_finite_score() const {
  if (!path_exists(run_.best())) return;
  std::map<std::string, std::string> metadata;
  load_safetensors(run_.best(), &metadata);
  const auto step = metadata.find("step");
  std::fprintf(stderr, "no finite dev %s; best.safetensors holds the weights of step %s\n",
               result_.primary.empty() ? "score" : result_.primary.c_str(),
               step == metadata.end() ? "?" : step->second.c_str());
}

// last.safetensors: the model, every optimiser and the loop position.
void Trainer::save_checkpoint() {
  progress_.noise_state = noise_.state();
  extension_->save_state(progress_);
  if (!writer()) return;
  save_training_checkpoint(run_.last(), *model_, {optimizers_.begin(), optimizers_.end()}, progress_);
}

}  // namespace

TrainResult train_model(const TrainOptions& options) { return Trainer(options).train(); }

}  // namespace attn
