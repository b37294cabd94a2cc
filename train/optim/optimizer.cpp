#include "attn/train/optim/optimizer.h"

#include <cmath>
#include <set>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"

namespace attn {

Optimizer::Optimizer(std::string name, std::vector<Tensor> params, double lr, std::vector<std::string> slot_names)
    : name_(std::move(name)),
      params_(std::move(params)),
      lr_(lr),
      slot_names_(std::move(slot_names)),
      slots_(params_.size()),
      param_steps_(params_.size(), 0) {
  std::set<const TensorImpl*> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    ATTN_CHECK(p.defined(), name_.c_str(), "parameter ", i, " is undefined");
    ATTN_CHECK(p.is_leaf() && p.requires_grad(), name_.c_str(), "parameter ", i, " (shape ", shape_str(p.shape()),
               ") must be a leaf that requires grad");
    ATTN_CHECK(is_floating(p.dtype()), name_.c_str(), "parameter ", i, " must be float32 or float64, got ",
               dtype_name(p.dtype()));
    ATTN_CHECK(seen.insert(p.impl()).second, name_.c_str(), "parameter ", i, " (shape ", shape_str(p.shape()),
               ") is listed twice");
  }
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  ATTN_CHECK(std::isfinite(lr) && lr >= 0, name_.c_str(), "learning rate must be finite and >= 0, got ", lr);
  lr_ = lr;
}


void Optimizer::step() {
  NoGrad no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    ATTN_CHECK(g.shape() == p.shape() && g.dtype() == p.dtype() && g.device() == p.device(), name_.c_str(),
               "gradient of parameter ", i, " is ", shape_str(g.shape()), " ", dtype_name(g.dtype()),
               " but the parameter is ", shape_str(p.shape()), " ", dtype_name(p.dtype()));
    std::vector<Tensor>& slots = slots_[i];
    if (slots.empty())
      for (size_t s = 0; s < slot_names_.size(); ++s) slots.push_back(zeros(p.shape(), p.dtype(), p.device()));
    update(p, g, slots, ++param_steps_[i]);
  }
  ++step_count_;
}

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) p.zero_grad();
}

NamedTensors Optimizer::state() const {
  NamedTensors out;
  out.emplace_back("step", scalar(static_cast<double>(step_count_), DType::F64));
  for (size_t i = 0; i < params_.size(); ++i) {
    if (param_steps_[i] == 0) continue;
    const std::string prefix = std::to_string(i) + ".";
    out.emplace_back(prefix + "step", scalar(static_cast<double>(param_steps_[i]), DType::F64));
    // Copies: the slots are updated in place by later steps, and a caller
    // (a checkpoint, a test) keeps what the state was when it asked.
    for (size_t s = 0; s < slots_[i].size(); ++s) out.emplace_back(prefix + slot_names_[s], clone(slots_[i][s]));
  }
  return out;
}

void Optimizer::load_state(const NamedTensors& state) {
  const char* op = name_.c_str();
  auto find = [&](const std::string& key) -> const Tensor* {
    for (const auto& kv : state)
      if (kv.first == key) return &kv.second;
    return nullptr;
  };
  auto count = [&](const std::string& key) -> int64_t {
    const Tensor* t = find(key);
    if (!t) return 0;
    ATTN_CHECK(t->numel() == 1, op, "state entry '", key, "' must be a scalar, got ", shape_str(t->shape()));
    return static_cast<int64_t>(t->item());
  };
  size_t used = 0;
  if (find("step")) ++used;
  std::vector<std::vector<Tensor>> slots(params_.size());
  std::vector<int64_t> steps(params_.size(), 0);
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string prefix = std::to_string(i) + ".";
    if (!find(prefix + "step")) continue;
    ++used;
    steps[i] = count(prefix + "step");
    for (const std::string& slot : slot_names_) {
      const Tensor* t = find(prefix + slot);
      ATTN_CHECK(t != nullptr, op, "state lacks '", prefix + slot, "'");
      const Tensor& p = params_[i];
      ATTN_CHECK(t->shape() == p.shape(), op, "state '", prefix + slot, "' is ", shape_str(t->shape()),
                 " but parameter ", i, " is ", shape_str(p.shape()));
      Tensor copy = empty(p.shape(), p.dtype(), p.device());
      copy_into(copy, t->to(p.device()));  // casts and moves as needed; never aliases the caller's tensor
      slots[i].push_back(copy);
      ++used;
    }
  }
  ATTN_CHECK(used == state.size(), op, "state has ", state.size() - used,
             " entries this optimiser does not know (different parameter list or optimiser?)");
  step_count_ = count("step");
  slots_ = std::move(slots);
  param_steps_ = std::move(steps);
}

void check_disjoint(const std::vector<const Optimizer*>& optimizers) {
  // owner[impl] = (optimiser index, parameter index)
  std::vector<std::pair<const TensorImpl*, std::pair<size_t, size_t>>> seen;
  for (size_t o = 0; o < optimizers.size(); ++o) {
    ATTN_CHECK(optimizers[o] != nullptr, "check_disjoint", "null optimiser");
    for (size_t o2 = 0; o2 < o; ++o2)
      ATTN_CHECK(optimizers[o2] != optimizers[o], "check_disjoint", "optimiser ", o, " (",
                 optimizers[o]->name(), ") is given twice");
    const std::vector<Tensor>& ps = optimizers[o]->params();
    for (size_t i = 0; i < ps.size(); ++i) {
      for (const auto& s : seen) {
        ATTN_CHECK(s.first != ps[i].impl(), "check_disjoint", "parameter ", s.second.second, " of optimiser ",
                   s.second.first, " (", optimizers[s.second.first]->name(), ") is also parameter ", i,
                   " of optimiser ", o, " (", optimizers[o]->name(), "), shape ", shape_str(ps[i].shape()),
                   ": parameter groups must be disjoint");
      }
    }
    for (size_t i = 0; i < ps.size(); ++i) seen.push_back({ps[i].impl(), {o, i}});
  }
}

ParameterSplit split_parameters(const NamedTensors& named, const std::function<bool(const std::string&)>& predicate) {
  ATTN_CHECK(static_cast<bool>(predicate), "split_parameters", "empty predicate");
  ParameterSplit split;
  for (const auto& kv : named) (predicate(kv.first) ? split.selected : split.rest).push_back(kv);
  return split;
}

std::vector<Tensor> tensors_of(const NamedTensors& named) {
  std::vector<Tensor> out;
  out.reserve(named.size());
  for (const auto& kv : named) out.push_back(kv.second);
  return out;
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  ATTN_CHECK(max_norm > 0, "clip_grad_norm", "max_norm must be positive, got ", max_norm);
  NoGrad no_grad;
  std::vector<Tensor> with_grad;  // each parameter once, even if listed twice
  std::set<const TensorImpl*> seen;
  for (const Tensor& p : params)
    if (p.defined() && p.grad().defined() && seen.insert(p.impl()).second) with_grad.push_back(p);
  double sq = 0;
  for (const Tensor& p : with_grad) sq += squared_norm(p.grad()).item();  // in double, float32 gradients too
  const double norm = std::sqrt(sq);
  if (!std::isfinite(norm) || norm <= max_norm) return norm;
  const double scale = max_norm / norm;
  for (const Tensor& p : with_grad) p.set_grad(mul_scalar(p.grad(), scale));
  return norm;
}

}  // namespace attn
