// A model of one's own: a character-level MLP that tells whether a 5-letter
// word over a..h has its letters in ascending order ("abdgh" yes, "abgdh" no).
// Embedding -> concatenate the 5 vectors -> Linear -> tanh -> Linear -> 2 logits,
// trained with Adam on cross-entropy, then scored on a fresh sample of words.
#include <attn/engine/autograd.h>
#include <attn/engine/random.h>
#include <attn/nn/embedding.h>
#include <attn/nn/linear.h>
#include <attn/nn/module.h>
#include <attn/ops/loss/loss.h>
#include <attn/ops/reduce/reduce.h>
#include <attn/ops/unary/unary.h>
#include <attn/ops/view/view.h>
#include <attn/train/metrics.h>
#include <attn/train/optim/adam.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace attn;

constexpr int64_t kLength = 5, kLetters = 8;
constexpr int64_t kFirstId = 2;  // ids 0 and 1 are the embedding's padding and unknown rows

// Child modules are members registered by name, so the parameters are
// "letters.weight", "hidden.weight", ... for Adam and for saving.
struct SortedWordClassifier : Module {
  Embedding letters;
  Linear hidden, out;
  explicit SortedWordClassifier(Generator& gen)
      : letters(kFirstId + kLetters, 8, gen), hidden(kLength * 8, 64, gen), out(64, 2, gen) {
    register_module("letters", letters);
    register_module("hidden", hidden);
    register_module("out", out);
  }
  Tensor forward(const Tensor& ids) const {  // ids [B, 5] -> logits [B, 2]
    Tensor x = flatten(letters(ids), 1);     // [B, 5, 8] -> [B, 40]: position matters
    return out(tanh(hidden(x)));
  }
};

struct Words {
  Tensor ids;     // [B, 5] int64
  Tensor labels;  // [B] int64: 1 when the letters ascend
};

// Every other word is sorted (a random word, sorted); the rest are random
// words drawn again until they are not.
Words make_words(int64_t count, Generator& gen) {
  std::vector<int64_t> ids, labels;
  std::vector<int64_t> word(kLength);
  for (int64_t i = 0; i < count; ++i) {
    const bool sorted = i % 2 == 0;
    do {
      for (int64_t& c : word) c = kFirstId + static_cast<int64_t>(gen.uniform() * kLetters);
    } while (!sorted && std::is_sorted(word.begin(), word.end()));
    if (sorted) std::sort(word.begin(), word.end());
    ids.insert(ids.end(), word.begin(), word.end());
    labels.push_back(sorted ? 1 : 0);
  }
  return {from_indices(ids, {count, kLength}), from_indices(labels, {count})};
}

int main() {
  Generator gen(2024);
  Words train = make_words(20000, gen), test = make_words(500, gen);
  SortedWordClassifier model(gen);
  Adam adam(model.parameters(), AdamOptions{/*lr=*/0.01});
  std::printf("%lld parameters\n", static_cast<long long>(model.parameter_count()));

  double first_loss = 0, loss_value = 0;
  for (int64_t step = 1; step <= 1000; ++step) {
    int64_t start = (step * 100) % 20000;  // minibatches of 100, in order
    Tensor ids = narrow(train.ids, 0, start, 100), labels = narrow(train.labels, 0, start, 100);
    adam.zero_grad();
    Tensor loss = cross_entropy(model.forward(ids), labels);
    loss.backward();
    adam.step();
    loss_value = loss.item();
    if (step == 1) first_loss = loss_value;
    if (step % 200 == 0) std::printf("step %4lld  loss %.4f\n", static_cast<long long>(step), loss_value);
  }
  NoGrad no_grad;  // evaluation records nothing on the tape
  Tensor predicted = argmax(model.forward(test.ids), -1);
  double test_accuracy = accuracy(to_indices(predicted), to_indices(test.labels));
  std::printf("loss %.4f -> %.4f, accuracy on 500 fresh words %.3f\n", first_loss, loss_value, test_accuracy);
  bool ok = loss_value < 0.25 * first_loss && test_accuracy > 0.95;
  std::printf("%s\n", ok ? "02_char_mlp: passed" : "02_char_mlp: FAILED (loss did not fall or accuracy too low)");
  return ok ? 0 : 1;
}
