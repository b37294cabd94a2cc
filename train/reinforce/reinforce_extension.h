// ReSAN's REINFORCE as a training extension (train/training_extension.h),
// on when the model's encoder has a selection policy: the policy parameters
// (theta_r, the RSS modules) learn on the REINFORCE surrogate with their own
// optimiser, the rest (theta_s) on the task loss, following the schedule of
// seed 004 Sec. 4 (train/reinforce/reinforce.h): a supervised warm-up with
// every token selected, optional RL-only steps, then both together.
#pragma once
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attn/models/task_model.h"
#include "attn/train/reinforce/reinforce.h"
#include "attn/train/trainer.h"
#include "attn/train/training_extension.h"

namespace attn {

// The extension `model` trains with: REINFORCE when its encoder has a
// selection policy, plain training (the base class) otherwise.
std::unique_ptr<TrainingExtension> make_training_extension(TaskModel& model, TaskKind task,
                                                           const TrainOptions& options);

class ReinforceExtension final : public TrainingExtension {
 public:
  // The policy optimiser is `options.optimizer` with rl_lr (0: lr).
  ReinforceExtension(TaskModel& model, TaskKind task, const TrainOptions& options);

  bool trains(const std::string& parameter_name) const override;
  Optimizer* optimizer() override { return optimizer_.get(); }
  void begin(const TrainProgress& start, int64_t batches_per_epoch) override;

  // The schedule's phase: the warm-up selects every token and trains theta_s only.
  StepPlan before_forward(int64_t step) override;
  // With an RL update: backpropagates the surrogate into theta_r, keeps its
  // gradients and drops what it left on theta_s (the surrogate also reaches
  // the layers below the RSS, through the input it reads).
  void after_loss(const Batch& batch, const Tensor& logits) override;
  // Puts theta_r's surrogate gradients back over whatever the task loss left.
  void after_backward() override;

  // "select_all": whether the evaluation ran with every token selected.
  void add_dev_metrics(std::map<std::string, double>& line) const override;
  // The default warm-up ends once the dev loss stops falling significantly.
  void after_dev_evaluation(const EvalResult& dev, int64_t step) override;
  // The moving baseline and where the warm-up ended.
  void save_state(TrainProgress& progress) const override;
  // The test (and any later use) runs the learned policy unless the best
  // checkpoint says otherwise.
  void end_training() override;

 private:
  void update_baseline(const std::vector<double>& rewards);
  Encoder& encoder_;
  const TaskKind task_;
  const Crf* crf_;  // the tagger's CRF, whose NLL is a tagged sentence's loss (null: none)
  const TrainOptions& options_;
  const bool warmup_by_dev_loss_;
  std::set<std::string> policy_names_;
  std::vector<Tensor> other_params_;  // theta_s
  std::unique_ptr<Optimizer> optimizer_;
  std::optional<ReinforceSchedule> schedule_;
  std::optional<DevLossWarmup> warmup_;
  std::optional<MovingBaseline> baseline_;
  int64_t warmup_end_step_ = -1;
  ReinforceStepPlan plan_;
  std::vector<Tensor> policy_grads_;  // theta_r's surrogate gradients between after_loss and after_backward
};

}  // namespace attn
