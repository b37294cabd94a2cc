#include "attn/train/bench/efficiency_studies.h"

#include <limits>

#include "attn/engine/error.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// SNLI (Bowman et al. 2015): 550,152 training pairs, 9,842 dev pairs; a
// premise has 14.1 tokens on average and a hypothesis 8.3. Each pair is two
// sentences through the same encoder, so a batch of b pairs is 2b sentences.
constexpr int64_t kSnliTrainPairs = 550152, kSnliDevPairs = 9842;
// The padded length of an SNLI batch, and its sentences' valid lengths
// uniform in [1, 32] (mean 16.5): a batch pads to its longest sentence, and
// with 64 or more pairs that is about 30 tokens.
constexpr int64_t kSnliPaddedLength = 32;

double batches(int64_t items, int64_t per_batch) { return static_cast<double>((items + per_batch - 1) / per_batch); }

// A time column at SNLI's shapes: the median step times the batches of the
// pairs it covers (the training set per epoch, or the dev set).
StudyColumn snli_time(const std::string& name, BenchMode mode, int64_t pairs_per_batch, int64_t pairs,
                      const std::string& batches_are) {
  StudyColumn c{name, "s", mode, false, 2 * pairs_per_batch, kSnliPaddedLength, true,
                batches(pairs, pairs_per_batch) / 1000.0, ""};
  c.how = std::string(mode == BenchMode::Train ? "training" : "inference") + " step at batch " +
          std::to_string(c.batch) + " (" + std::to_string(pairs_per_batch) +
          " pairs), length 32 with random valid lengths, x " +
          std::to_string(static_cast<int64_t>(c.steps * 1000)) + " " + batches_are;
  return c;
}
StudyColumn snli_train_time(int64_t pairs_per_batch) {
  return snli_time("time/epoch (s)", BenchMode::Train, pairs_per_batch, kSnliTrainPairs, "steps");
}
StudyColumn snli_dev_time(int64_t pairs_per_batch) {
  return snli_time("inference (s)", BenchMode::Infer, pairs_per_batch, kSnliDevPairs, "dev batches");
}

StudyColumn train_memory(int64_t batch, int64_t length, bool random_lengths, const std::string& how) {
  return StudyColumn{"memory (MiB)", "MB", BenchMode::Train, true, batch, length, random_lengths, 1, how};
}

StudyEncoder row(const std::string& label, const std::string& model, std::vector<double> paper, bool baseline = false) {
  StudyEncoder e;
  e.label = label;
  e.model = model;
  e.paper = std::move(paper);
  e.baseline = baseline;
  return e;
}

StudyEncoder with(StudyEncoder e, int64_t hidden, std::vector<std::pair<std::string, std::string>> config = {}) {
  e.hidden = hidden;
  e.config = std::move(config);
  return e;
}

const std::vector<std::pair<std::string, std::string>> kMaterialized = {{"materialize_scores", "true"}};

EfficiencyStudy biblosan_fig6() {
  EfficiencyStudy s;
  s.name = "biblosan-fig6";
  s.source = "Bi-BloSAN paper (seed 002), Sec. 4.5, Fig. 6";
  s.figure = "Bi-BloSAN Fig. 6";
  s.what = "inference time and memory against sequence length, every encoder";
  s.shapes = "\"We fix the batch size to 64 and the features number to 300, then change the sequence length from 16 "
             "to 384 with a step size 16\"; the same random inputs here, inference steps (forward, no gradient), "
             "the allocator's peak above the step's start for memory";
  s.sweep = true;
  s.lengths = "16:384:16";
  s.batch = 64;
  s.sweep_mode = BenchMode::Infer;
  s.reference = "biblosan";
  for (const std::string& model : default_bench_models()) {
    const bool baseline = model == "bilstm" || model == "bigru" || model == "bisru" || model == "multicnn" ||
                          model == "hrchycnn";
    s.encoders.push_back(row(model, model, {}, baseline));
  }
  return s;
}

EfficiencyStudy biblosan_table2() {
  EfficiencyStudy s;
  s.name = "biblosan-table2";
  s.source = "Bi-BloSAN paper (seed 002), Sec. 4.1, Table 2";
  s.what = "training time per epoch, training memory and dev inference time on SNLI";
  s.shapes = "the paper trains the SNLI model at batch 64 and infers the dev set at batch 100 on a GPU; here the "
             "encoder alone at SNLI's shapes (a pair is two sentences), random inputs of 300 features";
  s.columns = {snli_train_time(64),
               train_memory(128, kSnliPaddedLength, true, "peak of the training step at batch 128, length 32"),
               snli_dev_time(100)};
  s.reference = "480D Bi-BloSAN";
  s.encoders = {row("Bi-LSTM", "bilstm", {2080, 1245, 9.2}, true),
                row("Bi-GRU", "bigru", {1728, 1259, 9.3}, true),
                row("Bi-SRU", "bisru", {1630, 731, 8.2}, true),
                row("Multi-CNN", "multicnn", {284, 529, 2.4}, true),
                row("Hrchy-CNN", "hrchycnn", {343, 2341, 2.9}, true),
                row("Multi-head", "transformer", {345, 1245, 3.0}),
                with(row("DiSAN", "disan", {587, 2267, 7.0}), 0, kMaterialized),
                row("DiSAN, fused (ours)", "disan", {kNone, kNone, kNone}),
                with(row("480D Bi-BloSAN", "biblosan", {508, 1243, 3.4}), 240)};
  return s;
}

EfficiencyStudy mtsa_table1() {
  EfficiencyStudy s;
  s.name = "mtsa-table1";
  s.source = "MTSA paper (seed 001), Sec. 4.1, Table 1";
  s.what = "time per epoch, dev inference time and memory on SNLI";
  s.shapes = "\"Time/Epoch: averaged training time per epoch with batch size 128; Inf. Time: averaged dev inference "
             "time with batch size 128; Memory: memory load on synthetic data of sequence length 64 and batch size 64 "
             "with back-propagation considered\"; here the encoder alone at those shapes, random inputs of 300 "
             "features";
  s.columns = {snli_train_time(128), snli_dev_time(128),
               train_memory(64, 64, false, "peak of the training step at batch 64, length 64")};
  s.reference = "MTSA";
  s.encoders = {row("Bi-LSTM", "bilstm", {854, 9.1, 942}, true),
                row("Bi-GRU", "bigru", {850, 9.4, 810}, true),
                row("Multi-CNN", "multicnn", {137, 1.4, 208}, true),
                row("Hrchy-CNN", "hrchycnn", {195, 1.8, 309}, true),
                row("Multi-head", "transformer", {179, 1.5, 466}),
                with(row("DiSA", "disan", {390, 5.2, 6682}), 0, kMaterialized),
                row("DiSA, fused (ours)", "disan", {kNone, kNone, kNone}),
                row("Bi-BloSA", "biblosan", {303, 3.2, 1600}),
                row("MTSA", "mtsa", {180, 1.6, 558})};
  return s;
}

}  // namespace

const std::vector<EfficiencyStudy>& efficiency_studies() {
  static const std::vector<EfficiencyStudy> studies = {biblosan_fig6(), biblosan_table2(), mtsa_table1()};
  return studies;
}

const EfficiencyStudy& find_efficiency_study(const std::string& name) {
  std::vector<std::string> names;
  for (const EfficiencyStudy& s : efficiency_studies()) {
    if (s.name == name) return s;
    names.push_back(s.name);
  }
  throw UsageError("attn study: unknown study " + text::unknown_word_hint(name, names));
}

}  // namespace attn
