#include "attn/train/training_step.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "attn/engine/anomaly.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/train/batch_noise.h"
#include "attn/train/evaluate.h"
#include "attn/train/finite_check.h"

namespace attn {

namespace {

// Why a step must not be applied, or "" when its loss and norms are finite.
std::string nonfinite_problem(double loss, const std::vector<double>& norms) {
  std::ostringstream what;
  if (!std::isfinite(loss)) {
    what << "the loss is " << (std::isnan(loss) ? "NaN" : loss > 0 ? "+Inf" : "-Inf");
  } else {
    for (double norm : norms)
      if (!std::isfinite(norm)) {
        what << "the gradient norm is " << (std::isnan(norm) ? "NaN" : "+Inf") << " (loss " << loss << ")";
        break;
      }
  }
  return what.str();
}

std::vector<Tensor> parameters_of(const std::vector<Optimizer*>& optimizers) {
  std::vector<Tensor> params;
  for (const Optimizer* opt : optimizers) params.insert(params.end(), opt->params().begin(), opt->params().end());
  return params;
}

}  // namespace

TrainingStep::TrainingStep(StepParts parts)
    : parts_(std::move(parts)),
      clip_limit_(parts_.clip_norm > 0 ? parts_.clip_norm : std::numeric_limits<double>::infinity()) {
  ATTN_CHECK(parts_.model && parts_.model_optimizer && parts_.extension && parts_.gradient_sync && parts_.noise,
             "TrainingStep", "the model, its optimiser, the extension, the gradient sync and the noise generator "
             "are required");
  optimizers_.push_back(parts_.model_optimizer);
  if (Optimizer* own = parts_.extension->optimizer()) optimizers_.push_back(own);
}

StepResult TrainingStep::run(Batch& batch, const TrainProgress& at) {
  // Batch. The extension may change how the model runs at this step.
  const StepPlan plan = parts_.extension->before_forward(at.step);
  move_batch(batch, parts_.device);

  // Forward, loss, backward.
  const double own_loss = compute_gradients(batch, plan, at.step, /*backward_when_nonfinite=*/false);
  const std::vector<Optimizer*> learning_now = learning(plan);

  // Gradient synchronisation: in a data-parallel run the processes sum their
  // gradients and losses here, so everything below sees the same values.
  const double loss = parts_.gradient_sync->synchronise(parameters_of(learning_now), own_loss);

  // Clip each optimiser's gradients to the global norm limit. The norms are
  // measured with clipping off too: the finite check needs them.
  std::vector<double> norms;
  if (std::isfinite(loss))
    for (Optimizer* opt : learning_now) norms.push_back(clip_grad_norm(opt->params(), clip_limit_));

  // Finite check: a non-finite loss or gradient norm is never applied.
  const std::string problem = nonfinite_problem(loss, norms);
  if (!problem.empty()) {
    if (parts_.before_stopping) parts_.before_stopping();
    stop_on_nonfinite(batch, plan, problem, at);
  }

  // Update.
  for (Optimizer* opt : learning_now) opt->step();
  StepResult result;
  result.loss = loss;
  double squares = 0;
  for (double norm : norms) {
    squares += norm * norm;
    result.clipped = result.clipped || norm > clip_limit_;
  }
  result.grad_norm = std::sqrt(squares);
  return result;
}

// The forward and backward passes of a step (also re-run to find the kernel
// behind a non-finite value); returns the loss. The gradients are left on the
// parameters for clipping and the update.
double TrainingStep::compute_gradients(const Batch& batch, const StepPlan& plan, int64_t step,
                                       bool backward_when_nonfinite) {
  for (Optimizer* opt : optimizers_) opt->zero_grad();
  if (batch.size() == 0) {
    // A data-parallel process whose share of a short last batch is empty
    // computes no gradient, but still its part of the weight decay (only one
    // process has a decay) and of the extension's exchanges.
    parts_.extension->after_loss(batch, Tensor());
    double penalty_value = 0;
    if (parts_.decay && plan.model_learns) {
      Tensor penalty = parts_.decay->penalty();
      penalty.backward();
      penalty_value = penalty.item();
    }
    parts_.extension->after_backward();
    return penalty_value;
  }
  const BatchNoise noise(parts_.noise, parts_.noise_seed, step, batch);
  const Tensor logits = parts_.model->logits(inputs_of(batch));
  Tensor loss = training_loss(parts_.task, logits, batch, parts_.model->crf());
  if (parts_.decay) loss = loss + parts_.decay->penalty();
  const double loss_value = loss.item();
  if (!std::isfinite(loss_value) && !backward_when_nonfinite) return loss_value;
  parts_.extension->after_loss(batch, logits);
  if (plan.model_learns) loss.backward();
  parts_.extension->after_backward();
  return loss_value;
}

std::vector<Optimizer*> TrainingStep::learning(const StepPlan& plan) const {
  std::vector<Optimizer*> out;
  if (plan.model_learns) out.push_back(optimizers_[0]);
  if (plan.extension_learns && optimizers_.size() > 1) out.push_back(optimizers_[1]);
  return out;
}

void TrainingStep::stop_on_nonfinite(const Batch& batch, const StepPlan& plan, const std::string& what,
                                     const TrainProgress& at) {
  std::string cause;
  {
    AnomalyDetector detector;
    try {
      compute_gradients(batch, plan, at.step, /*backward_when_nonfinite=*/true);
      cause = "re-running the step with anomaly detection found no kernel writing a non-finite value";
    } catch (const AnomalyError& e) {
      cause = std::string("the first non-finite value: ") + e.what();
    }
  }
  for (Optimizer* opt : optimizers_) opt->zero_grad();
  const auto params = parts_.model->named_parameters();
  const std::string bad = first_nonfinite(params);
  std::ostringstream weights;
  if (!bad.empty()) {
    weights << "the weight '" << bad << "' was already non-finite before this step";
  } else {
    const auto [largest, where] = largest_magnitude(params);
    weights << "every weight is finite (largest |w| = " << largest << " in '" << where << "')";
    if (largest > 1e4) weights << "; weights this large suggest the learning rate is too high";
  }
  throw Error("train: step " + std::to_string(at.step) + " (epoch " + std::to_string(at.epoch + 1) + ", batch " +
              std::to_string(at.batch_in_epoch + 1) + "): " + what +
              "; the step was not applied and the run stopped (best.safetensors and last.safetensors keep "
              "their earlier, finite weights).\n  " + cause + "\n  " + weights.str());
}

}  // namespace attn
