#include "attn/train/trainer.h"

#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <limits>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "attn/engine/anomaly.h"
#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/models/model_config_check.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/train/optim/adadelta.h"
#include "attn/train/optim/adam.h"
#include "attn/util/atomic_file.h"
#include "attn/train/checkpoint.h"
#include "attn/train/run_folder.h"
#include "attn/train/finite_check.h"
#include "attn/train/interrupt.h"
#include "attn/train/progress.h"
#include "attn/train/reinforce/reinforce.h"
#include "attn/train/run_settings.h"
#include "attn/train/reinforce/selection_policy.h"
#include "attn/train/pictures/training_curves.h"
#include "attn/train/optim/sgd.h"
#include "attn/train/optim/weight_decay.h"

namespace attn {

namespace {

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr) {
  if (name == "adam") {
    AdamOptions o;
    if (lr > 0) o.lr = lr;
    return std::make_unique<Adam>(std::move(params), o);
  }
  if (name == "adadelta") {
    AdadeltaOptions o;
    if (lr > 0) o.lr = lr;
    return std::make_unique<Adadelta>(std::move(params), o);
  }
  if (name == "sgd") return std::make_unique<Sgd>(std::move(params), lr > 0 ? lr : 0.1, 0.9);
  ATTN_CHECK(false, "train", "unknown optimizer '", name, "' (known: adam, adadelta, sgd)");
  return nullptr;
}

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

// Everything a run folder pins down so `--resume`, `attn eval` and
// `attn predict` rebuild the same model.
// Called only once the configuration has proved valid (the model was built).
void write_run_files(const TrainOptions& o, const Dataset& data, const Vocabulary& vocab) {
  const RunFiles run{o.run_dir};
  make_directories(o.run_dir);
  if (o.overwrite)  // what the old run produced; the files below are replaced
    for (const std::string& path : {run.metrics(), run.curves(), run.best(), run.last(), run.test_metrics()})
      std::remove(path.c_str());
  write_file_atomically(run.model_config(), o.model.to_text());
  write_file_atomically(run.run_config(), run_settings(o).to_text());
  vocab.save(run.vocab());
  write_labels(run, data.label_names);
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

}  // namespace

TrainResult train_model(const TrainOptions& o) {
  ATTN_CHECK(!o.run_dir.empty(), "train", "no run folder given");
  ATTN_CHECK(o.epochs > 0 && o.batch_size > 0, "train", "--epochs and --batch must be positive");
  auto log = [&](const std::string& line) {
    if (o.verbose) std::fprintf(stderr, "%s\n", line.c_str());
  };
  const RunFiles run{o.run_dir};
  remove_stale_temporaries(o.run_dir);
  const std::string existing = existing_run_file(run);
  ATTN_CHECK(o.resume || o.overwrite || existing.empty(), "train", "'", o.run_dir, "' already holds a run ('",
             existing, "'); continue it with --resume, replace it with --overwrite, or choose another --run");
  if (o.resume) {
    ATTN_CHECK(!existing.empty(), "train", "--resume: no checkpoint at '", run.last(),
               "' (the folder holds no run)");
    std::vector<std::string> diffs =
        run_differences(Config::load(run.run_config()), Config::load(run.model_config()), o);
    std::string listed;
    for (const std::string& d : diffs) listed += "\n  " + d;
    ATTN_CHECK(diffs.empty(), "train", "--resume: these settings differ from the run in '", o.run_dir,
               "' (only --epochs, --max-steps, --eval-every, --checkpoint-every, --device, --quiet and "
               "--detect-anomaly may change; start a new --run instead):", listed);
  }

  // A bad model config stops the run before the data is read.
  check_model_config(o.model, "the model config");
  Dataset data = load_task_data(o.data);
  log(dataset_summary(data));
  ATTN_CHECK(!data.dev.empty() && !data.test.empty(), "train", "the data needs dev and test splits");

  // The vocabulary and model config come from the run folder when resuming.
  Config model_config = o.model;
  Vocabulary vocab;
  const std::string last_path = run.last(), best_path = run.best();
  if (o.resume) {
    ATTN_CHECK(file_exists(last_path), "train", "--resume: no checkpoint at '", last_path, "'");
    vocab = Vocabulary::load(run.vocab());
    ATTN_CHECK(read_labels(run) == data.label_names, "train", "--resume: the labels in '", run.labels(),
               "' differ from the data's");
  } else {
    vocab = Vocabulary::build(data.train, o.min_count, o.max_vocab);
  }
  log("vocabulary: " + std::to_string(vocab.size()) + " words; run folder: " + o.run_dir);

  Generator init(o.seed), noise(o.seed + 1), shuffle(o.seed + 2);
  TaskModel model(model_config, data.task, vocab.size(), classes_for(data, model_config), DType::F32, init, noise);
  model_config.check_all_used("the model config");
  if (!o.glove.empty() && !o.resume) {
    int64_t found = model.embedding().load_glove(o.glove, vocab.words());
    log("GloVe: " + std::to_string(found) + " of " + std::to_string(vocab.size()) + " words found");
  }
  if (!o.resume) write_run_files(o, data, vocab);  // nothing is written before the configuration is valid
  // The whole resolved configuration, as run.cfg and model.cfg record it.
  log("configuration" + (o.preset.empty() ? std::string() : " (preset " + o.preset + ")") + ":\n" +
      indent(run_settings(o).to_text()) + indent(model_config.to_text()));
  log("model: " + encoder_name(model_config) + ", " + std::to_string(model.parameter_count()) +
      " parameters");
  model.to(o.device);  // before the optimisers, whose state follows each parameter's device

  // An encoder's selection policy (ReSAN's RSS modules) learns by REINFORCE
  // on its own optimiser.
  Encoder& encoder = model.encoder();
  const bool has_policy = encoder.has_selection_policy();
  std::set<std::string> policy_names;
  for (const auto& [name, p] : model.named_parameters())
    if (encoder.is_policy_parameter(p)) policy_names.insert(name);
  ParameterSplit split = split_parameters(model.named_parameters(), [&](const std::string& name) {
    return policy_names.count(name) > 0;
  });
  std::unique_ptr<Optimizer> main_opt = make_optimizer(o.optimizer, tensors_of(split.rest), o.lr);
  std::unique_ptr<Optimizer> rss_opt;
  std::vector<Optimizer*> optimizers{main_opt.get()};
  if (has_policy) {
    rss_opt = make_optimizer(o.optimizer, tensors_of(split.selected), o.rl_lr > 0 ? o.rl_lr : o.lr);
    optimizers.push_back(rss_opt.get());
    check_disjoint({main_opt.get(), rss_opt.get()});
  }
  std::unique_ptr<WeightDecay> decay;
  if (o.weight_decay > 0) decay = std::make_unique<WeightDecay>(split.rest, o.weight_decay, weight_decay_options(o));

  TrainProgress progress;
  if (o.resume) {
    progress = load_training_checkpoint(last_path, model, optimizers);
    noise.set_state(progress.noise_state);
    shuffle.set_state(progress.epoch_shuffle_state);  // the order of the epoch it stopped in
    log("resumed at epoch " + std::to_string(progress.epoch + 1) + ", step " + std::to_string(progress.step));
  }

  BatchOptions bo;
  bo.batch_size = o.batch_size;
  bo.max_len = o.max_len;
  EvalOptions eo;
  eo.batch_size = o.batch_size;
  eo.max_len = o.max_len;
  const int64_t per_epoch = (static_cast<int64_t>(data.train.size()) + o.batch_size - 1) / o.batch_size;
  ATTN_CHECK(o.epochs <= std::numeric_limits<int64_t>::max() / std::max<int64_t>(per_epoch, 1), "train", "--epochs ",
             o.epochs, " times ", per_epoch, " batches per epoch overflows the step counter");
  if (o.resume) {
    check_progress_fits_run(progress, per_epoch, o.epochs, last_path);
    keep_metrics_up_to(run.metrics(), progress.step);  // lines a killed run wrote after its checkpoint
  }
  int64_t total_steps = per_epoch * o.epochs;
  if (o.max_steps > 0) total_steps = std::min(total_steps, o.max_steps);
  const bool warmup_by_dev_loss = o.rl_warmup_steps == TrainOptions::kWarmupByDevLoss;
  ReinforceSchedule schedule(warmup_by_dev_loss ? ReinforceSchedule::kOpenEnded
                                                : (o.rl_warmup_steps >= 0 ? o.rl_warmup_steps : per_epoch),
                             o.rl_only_steps);
  if (warmup_by_dev_loss && progress.warmup_end_step >= 0) schedule.end_warmup_at(progress.warmup_end_step);
  DevLossWarmup warmup(o.rl_warmup_min_decrease);
  warmup.set_previous(progress.warmup_dev_loss);
  MovingBaseline baseline(0.9, progress.baseline);

  auto save_last = [&] {
    progress.noise_state = noise.state();
    progress.baseline = baseline.value();
    save_training_checkpoint(last_path, model, {optimizers.begin(), optimizers.end()}, progress);
  };
  TrainResult result;
  auto evaluate_dev = [&](double train_loss) {
    EvalResult dev = evaluate(model, data.dev, vocab, data.label_names, eo);
    result.primary = dev.primary;
    std::map<std::string, double> line = dev.metrics;
    line["step"] = static_cast<double>(progress.step);
    line["epoch"] = static_cast<double>(progress.epoch + 1);
    line["train_loss"] = train_loss;
    if (has_policy) line["select_all"] = encoder.select_all() ? 1 : 0;
    append_line(run.metrics(), metrics_json(line));
    write_run_curves(run.dir);
    bool better = dev.primary_value() > progress.best_dev;
    if (better) {
      progress.best_dev = dev.primary_value();
      progress.best_step = progress.step;
      const auto state = model.named_state();
      require_finite(state, "train: saving '" + best_path + "'");
      std::map<std::string, std::string> meta = selection_policy_metadata(encoder);
      meta["step"] = std::to_string(progress.step);
      save_model_weights(best_path, state, meta);
    }
    // The paper's warm-up ends once the dev loss stops falling significantly.
    if (has_policy && warmup_by_dev_loss && schedule.warmup_open()) {
      const double before = warmup.previous();
      if (warmup.observe(dev.metrics.at("loss"))) {
        schedule.end_warmup_at(progress.step);
        progress.warmup_end_step = progress.step;
        log("warm-up over after step " + std::to_string(progress.step) + ": the dev loss went from " +
            std::to_string(before) + " to " + std::to_string(dev.metrics.at("loss")) + " (less than " +
            std::to_string(100 * o.rl_warmup_min_decrease) + "% lower); REINFORCE starts");
      }
      progress.warmup_dev_loss = warmup.previous();
    }
    if (o.verbose) std::fprintf(stderr, "dev %s %.4f%s\n", dev.primary.c_str(), dev.primary_value(), better ? " (best)" : "");
  };

  // One step's forward and backward passes; returns the loss. The gradients
  // are left on the parameters for clipping and the optimiser steps.
  auto compute_gradients = [&](const Batch& batch, const ReinforceStepPlan& plan, bool backward_when_nonfinite) {
    for (Optimizer* opt : optimizers) opt->zero_grad();
    Tensor logits = model.logits(inputs_of(batch));
    Tensor loss = training_loss(data.task, logits, batch);
    if (decay) loss = loss + decay->penalty();
    const double loss_value = loss.item();
    if (!std::isfinite(loss_value) && !backward_when_nonfinite) return loss_value;
    if (plan.rl_update) {
      // The policy gradient reaches the RSS parameters only: take their
      // gradients from the surrogate, then the supervised ones for the rest.
      const PolicySelection sel = encoder.policy_selection();
      std::vector<double> losses = task_loss(data.task, logits, batch, Reduction::None).detach().to_vector();
      std::vector<double> fraction = sel.fraction.to_vector();
      Tensor surrogate = reinforce_surrogate(sel.log_pi, losses, fraction, o.rl_lambda,
                                             o.rl_baseline ? &baseline : nullptr, o.rl_reward);
      surrogate.backward(Tensor(), /*retain_graph=*/plan.supervised_update);
      std::vector<Tensor> rss_grads;
      for (const Tensor& p : rss_opt->params()) rss_grads.push_back(p.grad());
      main_opt->zero_grad();
      if (plan.supervised_update) loss.backward();
      for (size_t i = 0; i < rss_grads.size(); ++i) rss_opt->params()[i].set_grad(rss_grads[i]);
    } else if (plan.supervised_update) {
      loss.backward();
    }
    return loss_value;
  };

  // A non-finite loss or gradient norm: the step is not applied (no weight
  // changes) and the run stops naming the first kernel that wrote a
  // non-finite value, found by re-running the step under anomaly detection
  // with the same dropout noise.
  auto stop_on_nonfinite = [&](const Batch& batch, const ReinforceStepPlan& plan, const std::string& what,
                               const std::array<uint64_t, 4>& noise_before) {
    std::string cause;
    {
      noise.set_state(noise_before);
      AnomalyDetector detector;
      try {
        compute_gradients(batch, plan, /*backward_when_nonfinite=*/true);
        cause = "re-running the step with anomaly detection found no kernel writing a non-finite value";
      } catch (const AnomalyError& e) {
        cause = std::string("the first non-finite value: ") + e.what();
      }
    }
    for (Optimizer* opt : optimizers) opt->zero_grad();
    const auto params = model.named_parameters();
    const std::string bad = first_nonfinite(params);
    std::ostringstream weights;
    if (!bad.empty()) {
      weights << "the weight '" << bad << "' was already non-finite before this step";
    } else {
      const auto [largest, where] = largest_magnitude(params);
      weights << "every weight is finite (largest |w| = " << largest << " in '" << where << "')";
      if (largest > 1e4) weights << "; weights this large suggest the learning rate is too high";
    }
    throw Error("train: step " + std::to_string(progress.step) + " (epoch " + std::to_string(progress.epoch + 1) +
                ", batch " + std::to_string(progress.batch_in_epoch + 1) + "): " + what +
                "; the step was not applied and the run stopped (best.safetensors and last.safetensors keep "
                "their earlier, finite weights).\n  " + cause + "\n  " + weights.str());
  };
  const double clip_limit = o.clip_norm > 0 ? o.clip_norm : std::numeric_limits<double>::infinity();

  install_interrupt_handler();
  Clock clock;
  int64_t examples = 0;
  // The epoch's running mean of the training loss lives in the checkpoint.
  double& loss_sum = progress.train_loss_sum;
  int64_t& loss_count = progress.train_loss_count;
  ProgressBar bar("train", total_steps);
  model.set_training(true);
  bool done = progress.step >= total_steps;
  std::unique_ptr<AnomalyDetector> detector;
  if (o.detect_anomaly) detector = std::make_unique<AnomalyDetector>();
  try {
  while (progress.epoch < o.epochs && !done) {
    // The state before this epoch's permutation is drawn: a checkpoint taken
    // anywhere in the epoch restores it and redraws the same order.
    progress.epoch_shuffle_state = shuffle.state();
    BatchIterator it(data.train, vocab, data.task, bo, &shuffle);
    Batch batch;
    for (int64_t skip = 0; skip < progress.batch_in_epoch; ++skip) it.next(batch);
    while (!done && it.next(batch)) {
      ReinforceStepPlan plan;
      plan.supervised_update = true;
      if (has_policy) {
        plan = schedule.plan(progress.step);
        encoder.set_select_all(plan.select_all);
      }
      move_batch(batch, o.device);
      const std::array<uint64_t, 4> noise_before = noise.state();
      const double loss_value = compute_gradients(batch, plan, /*backward_when_nonfinite=*/false);
      double rss_norm = 0, main_norm = 0;
      if (std::isfinite(loss_value)) {
        if (plan.rl_update) rss_norm = clip_grad_norm(rss_opt->params(), clip_limit);
        if (plan.supervised_update) main_norm = clip_grad_norm(main_opt->params(), clip_limit);
      }
      if (!std::isfinite(loss_value) || !std::isfinite(rss_norm) || !std::isfinite(main_norm)) {
        std::ostringstream what;
        if (!std::isfinite(loss_value)) what << "the loss is " << loss_value;
        else what << "the gradient norm is " << (std::isfinite(main_norm) ? rss_norm : main_norm) << " (loss " << loss_value << ")";
        if (o.verbose) bar.finish();
        stop_on_nonfinite(batch, plan, what.str(), noise_before);
      }
      if (plan.rl_update) rss_opt->step();
      if (plan.supervised_update) main_opt->step();
      loss_sum += loss_value;
      ++loss_count;
      examples += batch.size();
      ++progress.step;
      ++progress.batch_in_epoch;
      if (o.verbose) bar.update(progress.step, loss_sum / static_cast<double>(loss_count), examples);
      done = progress.step >= total_steps;
      if (o.eval_every > 0 && progress.step % o.eval_every == 0) {
        if (o.verbose) bar.finish();
        evaluate_dev(loss_sum / static_cast<double>(loss_count));
      }
      if (interrupt_requested()) {
        save_last();
        if (o.verbose) bar.finish();
        // Said even with --quiet: it answers the user's Ctrl-C.
        std::fprintf(stderr, "interrupted: saved a resumable checkpoint to %s (continue with --resume)\n",
                     last_path.c_str());
        result.interrupted = true;
        result.steps = progress.step;
        return result;
      }
      if (o.checkpoint_every > 0 && progress.step % o.checkpoint_every == 0) save_last();
    }
    if (o.verbose) bar.finish();
    if (o.eval_every == 0) evaluate_dev(loss_count ? loss_sum / static_cast<double>(loss_count) : 0.0);
    if (progress.batch_in_epoch < it.batches_per_epoch()) break;  // stopped mid-epoch by --max-steps
    ++progress.epoch;
    progress.batch_in_epoch = 0;
    progress.epoch_shuffle_state = shuffle.state();
    loss_sum = 0;
    loss_count = 0;
    save_last();
  }
  if (progress.best_step < 0) evaluate_dev(loss_count ? loss_sum / static_cast<double>(loss_count) : 0.0);
  save_last();
  } catch (const AnomalyError& e) {
    if (o.verbose) bar.finish();
    throw AnomalyError("train --detect-anomaly: stopped at step " + std::to_string(progress.step) + " (epoch " +
                       std::to_string(progress.epoch + 1) + ", batch " + std::to_string(progress.batch_in_epoch + 1) +
                       "): " + e.what());
  }
  detector.reset();
  result.train_seconds = clock.seconds();
  result.examples_per_second = result.train_seconds > 0 ? examples / result.train_seconds : 0;
  result.steps = progress.step;

  // Test metrics of the best dev checkpoint, evaluated as it was on dev.
  if (has_policy) encoder.set_select_all(false);
  if (file_exists(best_path)) {
    std::map<std::string, std::string> meta;
    load_into_module(model, load_model_weights(best_path, &meta), true);
    apply_selection_policy(encoder, meta, best_path);
  }
  result.test = evaluate(model, data.test, vocab, data.label_names, eo);
  result.primary = result.test.primary;  // set even when a finished run is resumed and trains no step
  result.best_dev = progress.best_dev;
  return result;
}

}  // namespace attn
