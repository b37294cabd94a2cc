#include "attn/train/cli/spirals.h"

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/nn/linear.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/train/optim/sgd.h"

namespace attn {

SpiralData make_spirals(int64_t per_class, double noise, Generator& gen) {
  SpiralData d{empty({2 * per_class, 2}, DType::F32), empty({2 * per_class}, DType::I64)};
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < per_class; ++i) {
      double t = 0.05 + 0.95 * static_cast<double>(i) / static_cast<double>(per_class);
      double angle = 1.75 * 2 * M_PI * t + static_cast<double>(c) * M_PI;
      int64_t row = c * per_class + i;
      write_element(d.points, 2 * row, t * std::cos(angle) + noise * gen.normal());
      write_element(d.points, 2 * row + 1, t * std::sin(angle) + noise * gen.normal());
      write_element(d.labels, row, static_cast<double>(c));
    }
  }
  return d;
}

SpiralResult train_spiral_mlp(const SpiralConfig& config,
                              const std::function<void(int64_t step, double loss)>& progress) {
  Generator gen(config.seed);
  SpiralData data = make_spirals(config.per_class, config.noise, gen);
  Linear l1(2, config.hidden, gen), l2(config.hidden, config.hidden, gen), l3(config.hidden, 2, gen);
  std::vector<Tensor> params;
  for (const Linear* l : {&l1, &l2, &l3})
    for (const Tensor& p : l->parameters()) params.push_back(p);
  Sgd sgd(params, config.lr);
  auto logits_of = [&](const Tensor& x) { return l3(relu(l2(tanh(l1(x))))); };

  SpiralResult result;
  for (int64_t step = 1; step <= config.steps; ++step) {
    sgd.zero_grad();
    Tensor loss = cross_entropy(logits_of(data.points), data.labels);
    loss.backward();
    sgd.step();
    result.final_loss = loss.item();
    if (progress && step % 100 == 0) progress(step, result.final_loss);
  }
  NoGrad no_grad;
  Tensor predicted = argmax(logits_of(data.points), -1);
  int64_t correct = 0, n = data.labels.numel();
  for (int64_t i = 0; i < n; ++i) correct += read_element(predicted, i) == read_element(data.labels, i);
  result.accuracy = static_cast<double>(correct) / static_cast<double>(n);
  return result;
}

}  // namespace attn
