// One of the papers' encoders inside a loop of one's own. The registry builds
// MTSA (any name from encoder_names() works) from a few config keys; we put an
// embedding in front and a linear head behind, train on variable-length
// sequences with a padding mask, save every weight to a safetensors file, load
// it into a freshly built model and check that it predicts exactly the same.
#include <attn/engine/autograd.h>
#include <attn/engine/random.h>
#include <attn/models/config.h>
#include <attn/models/encoder.h>
#include <attn/nn/embedding.h>
#include <attn/nn/linear.h>
#include <attn/nn/safetensors.h>
#include <attn/ops/loss/loss.h>
#include <attn/ops/reduce/reduce.h>
#include <attn/train/metrics.h>
#include <attn/train/optim/adam.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace attn;

constexpr int64_t kMaxLength = 8, kSymbols = 4, kFirstId = 2;  // ids 0, 1: padding, unknown

// Task: sequences of 3 to 8 symbols over {A, B, C, D} holding an A or a B;
// the label says whether the first of them is an A. Order decides: a bag of
// words cannot tell "B C A" from "A C B" (set encoder = bow below to see it fail).
struct Batch {
  Tensor ids, mask, labels;  // [B, 8] int64, [B, 8] uint8 (1 = token), [B] int64
};

Batch make_batch(int64_t count, Generator& gen) {
  std::vector<int64_t> ids(count * kMaxLength, 0), labels(count, -1);
  Tensor mask = zeros({count, kMaxLength}, DType::U8);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t length = 3 + static_cast<int64_t>(gen.uniform() * (kMaxLength - 2));
    while (labels[i] < 0) {  // draw again when neither A nor B occurs
      for (int64_t t = length - 1; t >= 0; --t) {  // backwards: the first A or B wins
        const int64_t symbol = static_cast<int64_t>(gen.uniform() * kSymbols);
        ids[i * kMaxLength + t] = kFirstId + symbol;
        if (symbol < 2) labels[i] = symbol == 0;
      }
    }
    for (int64_t t = 0; t < length; ++t) write_element(mask, i * kMaxLength + t, 1);
  }
  return {from_indices(ids, {count, kMaxLength}), mask, from_indices(labels, {count})};
}

// MTSA from the registry, small: 16 wide, 2 heads. check_all_used throws on
// a key the encoder did not read (a typo never goes unnoticed).
std::unique_ptr<Encoder> small_mtsa(Generator& gen) {
  Config config = Config::parse("encoder = mtsa\nhidden = 16\nheads = 2\n");
  std::unique_ptr<Encoder> encoder = build_encoder(config, EncoderContext{/*input_dim=*/16, DType::F32, &gen, &gen});
  config.check_all_used("the example's encoder config");
  return encoder;
}

// Embedding -> encoder (its sentence vector) -> linear head. Registered
// children give the names the safetensors file holds ("encoder.mtsa.q.weight").
struct SequenceClassifier : Module {
  Embedding symbols;
  std::unique_ptr<Encoder> encoder;
  Linear head;
  explicit SequenceClassifier(Generator& gen)
      : symbols(kFirstId + kSymbols, 16, gen), encoder(small_mtsa(gen)), head(encoder->sentence_dim(), 2, gen) {
    register_module("symbols", symbols);
    register_module("encoder", *encoder);
    register_module("head", head);
  }
  Tensor forward(const Batch& b) const { return head(encoder->encode(symbols(b.ids), b.mask).sentence); }
};

int main(int argc, char** argv) {
  const std::string weights = argc > 1 ? argv[1] : "sequence_classifier.safetensors";
  Generator gen(11);
  SequenceClassifier model(gen);
  Adam adam(model.parameters(), AdamOptions{/*lr=*/0.01});
  Batch test = make_batch(400, gen);
  double first_loss = 0, loss_value = 0;
  for (int64_t step = 1; step <= 200; ++step) {
    Batch batch = make_batch(64, gen);  // fresh data every step
    adam.zero_grad();
    Tensor loss = cross_entropy(model.forward(batch), batch.labels);
    loss.backward();
    adam.step();
    loss_value = loss.item();
    if (step == 1) first_loss = loss_value;
    if (step % 50 == 0) std::printf("step %3lld  loss %.4f\n", static_cast<long long>(step), loss_value);
  }
  model.set_training(false);
  NoGrad no_grad;
  const Tensor logits = model.forward(test);
  const double trained_accuracy = accuracy(to_indices(argmax(logits, -1)), to_indices(test.labels));
  std::printf("%lld parameters, loss %.4f -> %.4f, test accuracy %.3f\n",
              static_cast<long long>(model.parameter_count()), first_loss, loss_value, trained_accuracy);

  // Save every state tensor by name; load into a model built from another seed.
  save_safetensors(weights, model.named_state(), {{"encoder", "mtsa"}});
  Generator other_seed(99);
  SequenceClassifier restored(other_seed);
  restored.set_training(false);
  const bool differed = logits.to_vector() != restored.forward(test).to_vector();
  load_into_module(restored, load_safetensors(weights));
  const bool same = logits.to_vector() == restored.forward(test).to_vector();  // one code path, run twice
  std::printf("reloaded from %s: logits %s\n", weights.c_str(), same && differed ? "identical" : "DIFFER");

  const bool ok = trained_accuracy > 0.9 && loss_value < 0.5 * first_loss && differed && same;
  std::printf("%s\n", ok ? "03_encoder_safetensors: passed" : "03_encoder_safetensors: FAILED");
  return ok ? 0 : 1;
}
