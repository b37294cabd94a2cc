// Task heads on top of an encoder's outputs (seed 001/002 experiments):
//   classification: sentence vector -> MLP -> class logits
//   sentence pair (NLI): features -> optional highway -> MLP -> 3 logits, the
//       features [u; v; u - v; u * v] (seeds 001, 002: "diff_prod") or
//       [u; v; |u - v|; u - v] (seed 003: "absdiff_diff")
//   relatedness (SICK): [u * v; |u - v|] -> MLP -> K logits; trained with KL to
//       the target distribution, predicted as sum_k k p_k (k = 1..K)
//   tagging: per-token vectors -> linear -> per-token logits (padding ignored by the loss)
// Every MLP is Linear -> act -> dropout -> Linear. Children: "mlp.fc", "mlp.out",
// "highway" (pair head, optional), "proj" (tagging).
#pragma once
#include <memory>

#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/dropout.h"
#include "attn/nn/highway.h"
#include "attn/nn/linear.h"

namespace attn {

class Mlp : public Module {
 public:
  Mlp(int64_t in, int64_t hidden, int64_t out, Activation act, double keep_prob, Generator& init, Generator& noise,
      DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;

 private:
  Activation act_;
  Linear fc_, out_;
  Dropout dropout_;
};

enum class PairFeatures { DiffProd, AbsdiffDiff };
PairFeatures pair_features_from_name(const std::string& name);  // "diff_prod", "absdiff_diff"
const char* pair_features_name(PairFeatures f);

struct HeadOptions {
  int64_t hidden = 300;
  Activation activation = Activation::Relu;
  PairFeatures pair_features = PairFeatures::DiffProd;  // pair head only
  double keep_prob = 1.0;
  bool highway = false;  // pair head only
};

class ClassificationHead : public Module {
 public:
  ClassificationHead(int64_t sentence_dim, int64_t classes, const HeadOptions& o, Generator& init, Generator& noise,
                     DType dtype = DType::F32);
  Tensor forward(const Tensor& sentence) const;  // [B, d] -> [B, classes]

 private:
  Mlp mlp_;
};

class PairHead : public Module {
 public:
  PairHead(int64_t sentence_dim, int64_t classes, const HeadOptions& o, Generator& init, Generator& noise,
           DType dtype = DType::F32);
  Tensor forward(const Tensor& u, const Tensor& v) const;  // [B, d] x2 -> [B, classes]

 private:
  PairFeatures features_;
  std::unique_ptr<Highway> highway_;
  Mlp mlp_;
};

class RelatednessHead : public Module {
 public:
  RelatednessHead(int64_t sentence_dim, int64_t classes, const HeadOptions& o, Generator& init, Generator& noise,
                  DType dtype = DType::F32);
  Tensor forward(const Tensor& u, const Tensor& v) const;  // logits [B, K]

 private:
  Mlp mlp_;
};

// p[floor(y)] = floor(y) - y + 1, p[floor(y) + 1] = y - floor(y), scores 1..K.
// y must lie in [1, K]. Returns [B, K] in `dtype`.
Tensor relatedness_target(const std::vector<double>& scores, int64_t classes, DType dtype = DType::F32);
// sum_k k * p_k with p = softmax(logits) -> [B].
Tensor relatedness_prediction(const Tensor& logits);

class TaggingHead : public Module {
 public:
  TaggingHead(int64_t token_dim, int64_t tags, Generator& init, DType dtype = DType::F32);
  Tensor forward(const Tensor& tokens) const;  // [B, n, d] -> [B, n, tags]

 private:
  Linear proj_;
};

}  // namespace attn
