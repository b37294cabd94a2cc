#include "attn/models/heads.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/util/named_values.h"

namespace attn {

Mlp::Mlp(int64_t in, int64_t hidden, int64_t out, Activation act, double keep_prob, Generator& init,
         Generator& noise, DType dtype)
    : act_(act), fc_(in, hidden, init, true, dtype), out_(hidden, out, init, true, dtype), dropout_(keep_prob, noise) {
  register_module("fc", fc_);
  register_module("out", out_);
  register_module("dropout", dropout_);
}

Tensor Mlp::forward(const Tensor& x) const { return out_(dropout_(fc_.forward(x, act_))); }

ClassificationHead::ClassificationHead(int64_t sentence_dim, int64_t classes, const HeadOptions& o, Generator& init,
                                       Generator& noise, DType dtype)
    : mlp_(sentence_dim, o.hidden, classes, o.activation, o.keep_prob, init, noise, dtype) {
  register_module("mlp", mlp_);
}

Tensor ClassificationHead::forward(const Tensor& sentence) const { return mlp_.forward(sentence); }

namespace {
const NamedValue<PairFeatures> kPairFeaturesNames[] = {{PairFeatures::DiffProd, "diff_prod"},
                                                       {PairFeatures::AbsdiffDiff, "absdiff_diff"}};
}  // namespace

PairFeatures pair_features_from_name(const std::string& name) {
  return value_from_name(kPairFeaturesNames, name, "PairHead", "pair_features");
}

const char* pair_features_name(PairFeatures f) { return name_of_value(kPairFeaturesNames, f); }

PairHead::PairHead(int64_t sentence_dim, int64_t classes, const HeadOptions& o, Generator& init, Generator& noise,
                   DType dtype)
    : features_(o.pair_features),
      mlp_(4 * sentence_dim, o.hidden, classes, o.activation, o.keep_prob, init, noise, dtype) {
  if (o.highway) {
    highway_ = std::make_unique<Highway>(4 * sentence_dim, o.activation, init, dtype);
    register_module("highway", *highway_);
  }
  register_module("mlp", mlp_);
}

Tensor PairHead::forward(const Tensor& u, const Tensor& v) const {
  ATTN_CHECK(u.shape() == v.shape(), "PairHead", "sentence vectors differ in shape: ", shape_str(u.shape()), " vs ",
             shape_str(v.shape()));
  const Tensor diff = u - v;
  Tensor features = features_ == PairFeatures::DiffProd ? concat({u, v, diff, u * v}, -1)
                                                        : concat({u, v, abs(diff), diff}, -1);
  if (highway_) features = highway_->forward(features);
  return mlp_.forward(features);
}

RelatednessHead::RelatednessHead(int64_t sentence_dim, int64_t classes, const HeadOptions& o, Generator& init,
                                 Generator& noise, DType dtype)
    : mlp_(2 * sentence_dim, o.hidden, classes, o.activation, o.keep_prob, init, noise, dtype) {
  register_module("mlp", mlp_);
}

Tensor RelatednessHead::forward(const Tensor& u, const Tensor& v) const {
  ATTN_CHECK(u.shape() == v.shape(), "RelatednessHead", "sentence vectors differ in shape: ", shape_str(u.shape()),
             " vs ", shape_str(v.shape()));
  return mlp_.forward(concat({u * v, abs(u - v)}, -1));
}

Tensor relatedness_target(const std::vector<double>& scores, int64_t classes, DType dtype) {
  const int64_t b = static_cast<int64_t>(scores.size());
  Tensor p = zeros({b, classes}, dtype);
  for (int64_t i = 0; i < b; ++i) {
    double y = scores[i];
    ATTN_CHECK(y >= 1 && y <= static_cast<double>(classes), "relatedness_target", "score ", y, " of example ", i,
               " is outside [1, ", classes, "]");
    double fl = std::floor(y);
    int64_t k = static_cast<int64_t>(fl);  // 1-based class of floor(y)
    if (k == classes) {
      write_element(p, i * classes + (k - 1), 1.0);
      continue;
    }
    write_element(p, i * classes + (k - 1), fl - y + 1);
    write_element(p, i * classes + k, y - fl);
  }
  return p;
}

Tensor relatedness_prediction(const Tensor& logits) {
  ATTN_CHECK(logits.dim() == 2, "relatedness_prediction", "expects logits [B, K], got ", shape_str(logits.shape()));
  const int64_t k = logits.size(1);
  Tensor scores = empty({k}, logits.dtype());
  for (int64_t i = 0; i < k; ++i) write_element(scores, i, static_cast<double>(i + 1));
  scores = scores.to(logits.device());
  return sum(softmax(logits, -1) * scores, {1});
}

TaggingHead::TaggingHead(int64_t token_dim, int64_t tags, Generator& init, DType dtype)
    : proj_(token_dim, tags, init, true, dtype) {
  register_module("proj", proj_);
}

Tensor TaggingHead::forward(const Tensor& tokens) const { return proj_(tokens); }

}  // namespace attn
