#include "attn/train/optim/weight_decay.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"

namespace attn {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

bool weight_decay_covers(const std::string& name, const Tensor& param, const WeightDecayOptions& options) {
  if (!options.all_parameters) {
    const std::string& suffix = options.weight_suffix;
    const bool bare = !suffix.empty() && suffix[0] == '.' && name == suffix.substr(1);
    if (!bare && !ends_with(name, suffix)) return false;
    if (param.dim() < options.min_rank) return false;
    for (const std::string& s : options.exclude_substrings)
      if (name.find(s) != std::string::npos) return false;
  }
  for (const std::string& s : options.exclude_suffixes)
    if (ends_with(name, s)) return false;
  if (options.exclude && options.exclude(name)) return false;
  return true;
}

WeightDecay::WeightDecay(const NamedTensors& named_params, double gamma, const WeightDecayOptions& options)
    : gamma_(gamma), factor_(options.factor) {
  ATTN_CHECK(std::isfinite(gamma) && gamma >= 0, "WeightDecay", "gamma must be finite and >= 0, got ", gamma);
  ATTN_CHECK(std::isfinite(factor_) && factor_ > 0, "WeightDecay", "the factor must be finite and > 0, got ", factor_);
  for (const auto& kv : named_params) {
    ATTN_CHECK(kv.second.defined(), "WeightDecay", "parameter '", kv.first, "' is undefined");
    if (!weight_decay_covers(kv.first, kv.second, options)) continue;
    ATTN_CHECK(is_floating(kv.second.dtype()), "WeightDecay", "parameter '", kv.first,
               "' must be float32 or float64, got ", dtype_name(kv.second.dtype()));
    names_.push_back(kv.first);
    params_.push_back(kv.second);
  }
}

Tensor WeightDecay::penalty() const {
  if (params_.empty() || gamma_ == 0.0) return scalar(0.0, DType::F32, params_.empty() ? Device::CPU : params_[0].device());
  const DType dtype = params_[0].dtype();
  Tensor total;
  for (const Tensor& w : params_) {
    Tensor sq = sum(mul(w, w));
    if (sq.dtype() != dtype) sq = cast(sq, dtype);
    total = total.defined() ? add(total, sq) : sq;
  }
  return mul_scalar(total, factor_ * gamma_);
}

}  // namespace attn
