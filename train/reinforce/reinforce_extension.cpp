#include "attn/train/reinforce/reinforce_extension.h"

#include <cmath>
#include <cstdio>
#include <numeric>

#include "attn/engine/error.h"
#include "attn/train/optim/make_optimizer.h"

namespace attn {

std::unique_ptr<TrainingExtension> make_training_extension(TaskModel& model, TaskKind task,
                                                           const TrainOptions& options) {
  if (model.encoder().has_selection_policy()) return std::make_unique<ReinforceExtension>(model, task, options);
  return std::make_unique<TrainingExtension>();
}

ReinforceExtension::ReinforceExtension(TaskModel& model, TaskKind task, const TrainOptions& options)
    : encoder_(model.encoder()),
      task_(task),
      crf_(model.crf()),
      options_(options),
      warmup_by_dev_loss_(options.rl_warmup_steps == TrainOptions::kWarmupByDevLoss) {
  const NamedTensors named = model.named_parameters();
  for (const auto& [name, p] : named)
    if (encoder_.is_policy_parameter(p)) policy_names_.insert(name);
  const ParameterSplit split = split_parameters(named, [&](const std::string& name) { return trains(name); });
  other_params_ = tensors_of(split.rest);
  optimizer_ = make_optimizer(options.optimizer, tensors_of(split.selected),
                              options.rl_lr > 0 ? options.rl_lr : options.lr);
}

bool ReinforceExtension::trains(const std::string& parameter_name) const {
  return policy_names_.count(parameter_name) > 0;
}

void ReinforceExtension::begin(const TrainProgress& start, int64_t batches_per_epoch) {
  const int64_t fixed_warmup = options_.rl_warmup_steps >= 0 ? options_.rl_warmup_steps : batches_per_epoch;
  schedule_.emplace(warmup_by_dev_loss_ ? ReinforceSchedule::kOpenEnded : fixed_warmup, options_.rl_only_steps);
  if (warmup_by_dev_loss_ && start.warmup_end_step >= 0) schedule_->end_warmup_at(start.warmup_end_step);
  warmup_.emplace(options_.rl_warmup_min_decrease);
  warmup_->set_previous(start.warmup_dev_loss);
  baseline_.emplace(0.9, start.baseline);
  warmup_end_step_ = start.warmup_end_step;
}

StepPlan ReinforceExtension::before_forward(int64_t step) {
  plan_ = schedule_->plan(step);
  encoder_.set_select_all(plan_.select_all);
  StepPlan plan;
  plan.model_learns = plan_.supervised_update;
  plan.extension_learns = plan_.rl_update;
  return plan;
}

// In a data-parallel run every process calls this at every step, also with
// an empty share of the batch (no logits): the baseline's mean reward is
// taken over the whole batch, which every process must contribute to.
void ReinforceExtension::after_loss(const Batch& batch, const Tensor& logits) {
  policy_grads_.clear();
  if (!plan_.rl_update) return;
  std::vector<double> rewards;
  PolicySelection selection;
  if (batch.size() > 0) {
    selection = encoder_.policy_selection();
    const std::vector<double> losses = task_loss(task_, logits, batch, Reduction::None, crf_).detach().to_vector();
    rewards = reinforce_rewards(losses, selection.fraction.to_vector(), options_.rl_lambda, options_.rl_reward);
    for (size_t i = 0; i < rewards.size(); ++i)
      ATTN_CHECK(std::isfinite(rewards[i]), "reinforce_surrogate", "reward ", i, " is not finite (loss ", losses[i],
                 ")");
  }
  const double b = options_.rl_baseline ? baseline_->value() : 0.0;
  if (options_.rl_baseline) update_baseline(rewards);
  if (batch.size() == 0) return;
  const int64_t whole_batch = batch.global_examples > 0 ? batch.global_examples : batch.size();
  const Tensor surrogate = reinforce_surrogate_of_rewards(selection.log_pi, rewards, b, whole_batch);
  surrogate.backward(Tensor(), /*retain_graph=*/plan_.supervised_update);
  for (const Tensor& p : optimizer_->params()) policy_grads_.push_back(p.grad());
  for (const Tensor& p : other_params_) p.zero_grad();
}

// The mean reward of the whole batch: the processes' sums and counts summed.
void ReinforceExtension::update_baseline(const std::vector<double>& rewards) {
  if (!options_.processes || options_.processes->size() == 1) {
    baseline_->update(rewards);
    return;
  }
  std::vector<double> sum_and_count{std::accumulate(rewards.begin(), rewards.end(), 0.0),
                                    static_cast<double>(rewards.size())};
  options_.processes->sum_in_rank_order(sum_and_count, "reward baseline");
  if (sum_and_count[1] > 0) baseline_->update_with_mean(sum_and_count[0] / sum_and_count[1]);
}

void ReinforceExtension::after_backward() {
  if (!plan_.rl_update) return;
  for (size_t i = 0; i < policy_grads_.size(); ++i) optimizer_->params()[i].set_grad(policy_grads_[i]);
  policy_grads_.clear();
}

void ReinforceExtension::add_dev_metrics(std::map<std::string, double>& line) const {
  line["select_all"] = encoder_.select_all() ? 1 : 0;
}

void ReinforceExtension::after_dev_evaluation(const EvalResult& dev, int64_t step) {
  if (!warmup_by_dev_loss_ || !schedule_->warmup_open()) return;
  const double before = warmup_->previous();
  const double loss = dev.metrics.at("loss");
  if (!warmup_->observe(loss)) return;
  schedule_->end_warmup_at(step);
  warmup_end_step_ = step;
  if (options_.verbose)
    std::fprintf(stderr, "%s\n",
                 ("warm-up over after step " + std::to_string(step) + ": the dev loss went from " +
                  std::to_string(before) + " to " + std::to_string(loss) + " (less than " +
                  std::to_string(100 * options_.rl_warmup_min_decrease) + "% lower); REINFORCE starts")
                     .c_str());
}

void ReinforceExtension::save_state(TrainProgress& progress) const {
  progress.baseline = baseline_->value();
  progress.warmup_end_step = warmup_end_step_;
  progress.warmup_dev_loss = warmup_->previous();
}

void ReinforceExtension::end_training() { encoder_.set_select_all(false); }

}  // namespace attn
