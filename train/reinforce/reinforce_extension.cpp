#include "attn/train/reinforce/reinforce_extension.h"

#include <cstdio>

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

void ReinforceExtension::after_loss(const Batch& batch, const Tensor& logits) {
  if (!plan_.rl_update) return;
  const PolicySelection selection = encoder_.policy_selection();
  const std::vector<double> losses = task_loss(task_, logits, batch, Reduction::None).detach().to_vector();
  const std::vector<double> fraction = selection.fraction.to_vector();
  const Tensor surrogate = reinforce_surrogate(selection.log_pi, losses, fraction, options_.rl_lambda,
                                               options_.rl_baseline ? &*baseline_ : nullptr, options_.rl_reward);
  surrogate.backward(Tensor(), /*retain_graph=*/plan_.supervised_update);
  policy_grads_.clear();
  for (const Tensor& p : optimizer_->params()) policy_grads_.push_back(p.grad());
  for (const Tensor& p : other_params_) p.zero_grad();
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
