#include "attn/ops/loss/loss_label_smoothing.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/registry.h"
#include "attn/ops/unary/unary.h"

namespace attn {

Tensor label_smoothed_cross_entropy(const Tensor& logits, const Tensor& target, double smoothing,
                                    int64_t ignore_index) {
  const char* op = "label_smoothed_cross_entropy";
  ATTN_CHECK(logits.defined() && logits.dim() >= 1 && logits.size(-1) >= 2, op,
             "logits must be [..., V] with V >= 2, got ", logits.defined() ? shape_str(logits.shape()) : "undefined");
  ATTN_CHECK(std::isfinite(smoothing) && smoothing >= 0 && smoothing < 1, op, "smoothing must lie in [0, 1), got ",
             smoothing);
  const int64_t V = logits.size(-1);
  const double low = smoothing / static_cast<double>(V - 1), confidence = 1.0 - smoothing;
  // H(q), with 0 log 0 = 0.
  const double entropy = -(confidence * std::log(confidence) + (low > 0 ? (V - 1) * low * std::log(low) : 0.0));
  CrossEntropyOptions none;
  none.reduction = Reduction::None;
  none.ignore_index = ignore_index;
  const Tensor nll = cross_entropy(logits, target, none);  // checks target's shape and range; 0 where ignored
  const Tensor minus_sum_log_p = mul_scalar(logsumexp(logits, {-1}), static_cast<double>(V)) - sum(logits, {-1});
  const Tensor per_position =
      add_scalar(mul_scalar(nll, confidence - low) + mul_scalar(minus_sum_log_p, low), -entropy);
  const Tensor valid = ne(target, full({}, static_cast<double>(ignore_index), DType::I64, target.device()));
  const Tensor kept = where(valid, per_position, zeros({}, logits.dtype(), logits.device()));
  const double count = sum(cast(valid, DType::F64)).to(Device::CPU).item();
  return mul_scalar(sum(kept), 1.0 / std::max(count, 1.0));
}

void register_label_smoothing_samples(OpRegistry& r) {
  r.add(op_spec("label_smoothed_cross_entropy", "loss", [] {
    Generator gen(57);
    auto with = [](Tensor target, double smoothing) {
      return [target, smoothing](const std::vector<Tensor>& in) {
        return label_smoothed_cross_entropy(in[0], samples::like(target, in[0]), smoothing, 0);
      };
    };
    std::vector<OpCase> cases;
    cases.push_back({"2x3x5, smoothing 0.1, two padded targets", {samples::input({2, 3, 5}, gen, -2, 2)},
                     with(from_indices({1, 3, 0, 4, 2, 0}, {2, 3}), 0.1)});
    cases.push_back({"4x6, smoothing 0.3", {samples::input({4, 6}, gen, -3, 3)},
                     with(from_indices({5, 1, 2, 3}, {4}), 0.3)});
    cases.push_back({"transposed 4x5, no smoothing", {samples::transposed_input({4, 5}, gen, -2, 2)},
                     with(from_indices({4, 1, 2, 1}, {4}), 0.0)});
    return cases;
  }));
}

}  // namespace attn
