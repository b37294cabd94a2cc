// `attn mirrored-sum`: the mirrored summation task of the Multi-Scale
// Transformer paper (seed 003, Fig. 2). Trains each model at each K of a
// grid (train/synthetic/mirrored_sum_training.h) and writes
// DIR/mirrored_sum.csv and DIR/mirrored_sum.svg, both rewritten (atomically)
// after every (model, K), so an interrupted run keeps what it finished.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/train/bench/bench_options.h"
#include "attn/train/cli/commands.h"
#include "attn/train/synthetic/mirrored_sum_models.h"
#include "attn/train/synthetic/mirrored_sum_report.h"
#include "attn/train/synthetic/mirrored_sum_training.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/error.h"

namespace attn {

namespace {

std::string model_help() {
  std::string text = "models (--models):\n";
  for (const MirroredSumModelInfo& m : mirrored_sum_models())
    text += "  " + std::string(m.name) + std::string(22 - std::string(m.name).size(), ' ') + m.summary + "\n";
  return text;
}

std::string all_models() {
  std::string text;
  for (const MirroredSumModelInfo& m : mirrored_sum_models()) text += (text.empty() ? "" : ",") + std::string(m.name);
  return text;
}

std::vector<std::string> chosen_models(const std::string& list) {
  std::vector<std::string> names = parse_model_list(list, "attn mirrored-sum");
  for (const std::string& name : names) {
    bool known = false;
    for (const MirroredSumModelInfo& m : mirrored_sum_models()) known = known || name == m.name;
    if (!known) throw UsageError("attn mirrored-sum: unknown model '" + name + "' in --models (known: " + all_models() + ")");
  }
  return names;
}

}  // namespace

int run_mirrored_sum_command(const std::vector<std::string>& args) {
  ArgParser p("mirrored-sum",
              "The mirrored summation task of the Multi-Scale Transformer paper (seed 003, Fig. 2): N vectors\n"
              "a_1..a_N of d numbers from U(0, 1), target sum_{i=1..K} a_i * a_{N-i+1} (elementwise). Each model\n"
              "(an encoder of the registry and a linear head to d, MSE, Adam) is trained at each K and its MSE\n"
              "on the test split measured. Samples are generated from (seed, split, index), never stored.\n"
              "Writes OUT/mirrored_sum.csv and OUT/mirrored_sum.svg after every model and K.");
  p.option("models", all_models(), "LIST: comma list of models (see below)")
      .option("ks", "10,20,30,40,50,60,70,80,90", "LIST: the grid of K, a list and/or START:STOP:STEP, each in 1..N-1")
      .option("length", "100", "sequence length N (the paper: 100)")
      .option("dim", "50", "vector dimension d (the paper: 50)")
      .option("train-samples", "200000", "training samples (the paper: 200k)")
      .option("test-samples", "200000", "test samples (the paper: 200k)")
      .option("epochs", "10", "FLOAT: passes over the training samples (steps = ceil(epochs * samples / batch))")
      .option("steps", "", "INT: training steps per model and K instead of --epochs")
      .option("batch", "64", "training batch size")
      .option("hidden", "100", "model width (a multiple of 10 for the attention models' 10 heads)")
      .option("lr", "0.001", "Adam learning rate")
      .option("seed", "1", "seed of the data and the initialisation")
      .option("device", "cpu", "DEVICE: cpu or cuda")
      .option("out", "mirrored_sum", "PATH: folder for mirrored_sum.csv and mirrored_sum.svg (created if missing)")
      .flag("overwrite", "replace the results of an earlier run in --out (without it they are never touched)");
  p.epilog(model_help());
  p.example("attn mirrored-sum --models transformer,ms-trans-flex --ks 10,50,90 --train-samples 20000 "
            "--test-samples 2000 --epochs 2 --out ms",
            "two models at three K, a short run; ms/mirrored_sum.svg draws MSE against K");
  p.example("attn mirrored-sum --device cuda --out paper", "the paper's sizes: every model, K = 10..90, 200k/200k");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  MirroredSumSpec spec;
  spec.length = p.get_int("length", 2, 100000);
  spec.dim = p.get_int("dim", 1, 100000);
  spec.seed = p.get_uint64("seed");
  const std::vector<int64_t> ks = parse_length_list(p.get("ks"), "--ks", "attn mirrored-sum");
  for (int64_t k : ks)
    if (k >= spec.length)
      throw UsageError("attn mirrored-sum: --ks holds K = " + std::to_string(k) + ", but K must be in 1..N-1 = 1.." +
                       std::to_string(spec.length - 1) + " (--length " + std::to_string(spec.length) + ")");
  const std::vector<std::string> models = chosen_models(p.get("models"));

  MirroredSumRunOptions o;
  o.train_samples = p.get_int("train-samples", 1);
  o.test_samples = p.get_int("test-samples", 1);
  o.batch = p.get_int("batch", 1, 1 << 20);
  o.hidden = p.get_int("hidden", 1, 65536);
  o.lr = p.get_double("lr", 1e-12, 10);
  o.seed = spec.seed;
  o.device = parse_device(p.get_choice("device", {"cpu", "cuda"}), "attn mirrored-sum");
  if (p.is_set("steps") && p.is_set("epochs"))
    throw UsageError("attn mirrored-sum: --steps and --epochs exclude each other");
  if (p.is_set("steps")) {
    o.steps = p.get_int("steps", 1);
  } else {
    const double epochs = p.get_double("epochs", 1e-9, 1e9);
    o.steps = static_cast<int64_t>(
        std::ceil(epochs * static_cast<double>(o.train_samples) / static_cast<double>(o.batch)));
  }
  // Every model's config is checked (width constraints) before any training.
  for (const std::string& m : models) {
    try {
      (void)mirrored_sum_encoder_config(m, o.hidden);
    } catch (const Error& e) {
      throw UsageError("attn mirrored-sum: --hidden " + std::to_string(o.hidden) + ": " + e.user_message());
    }
  }

  const std::string out_dir = p.get("out");
  make_directories(out_dir);
  if (!is_directory(out_dir)) throw UsageError("attn mirrored-sum: --out '" + out_dir + "' is not a folder");
  const std::string csv = out_dir + "/mirrored_sum.csv", svg = out_dir + "/mirrored_sum.svg";
  for (const std::string& f : {csv, svg}) {
    if (path_exists(f) && !p.is_set("overwrite"))
      throw UsageError("attn mirrored-sum: '" + f + "' holds an earlier run; give --overwrite to replace it, or "
                       "another --out");
    check_output_file("attn mirrored-sum: output", f, {});
  }

  std::ostringstream subtitle;
  // Short enough for the 900 px picture's title line at the paper's sizes.
  subtitle << "N=" << spec.length << ", d=" << spec.dim << ", " << o.train_samples << " train / " << o.test_samples
           << " test, " << o.steps << " steps x " << o.batch << ", width " << o.hidden;
  std::printf("attn mirrored-sum: %zu models x %zu K; %s; device %s\n", models.size(), ks.size(),
              subtitle.str().c_str(), device_name(o.device));
  std::fflush(stdout);
  std::vector<MirroredSumRow> rows;
  const size_t total = models.size() * ks.size();
  for (const std::string& model : models) {
    for (int64_t k : ks) {
      spec.k = k;
      o.model = model;
      const size_t done = rows.size();
      const int64_t every = std::max<int64_t>(1, o.steps / 100);
      MirroredSumRunResult r = train_mirrored_sum(spec, o, [&](int64_t step, double loss) {
        if (step % every == 0 || step == o.steps)
          std::fprintf(stderr, "\r[%zu/%zu] %s K=%lld  step %lld/%lld  batch MSE %.4f   ", done + 1, total,
                       model.c_str(), static_cast<long long>(k), static_cast<long long>(step),
                       static_cast<long long>(o.steps), loss);
      });
      std::fprintf(stderr, "\n");
      MirroredSumRow row{model,         k,       r.test_mse, mirrored_sum_mean_predictor_mse(spec),
                         mirrored_sum_linear_predictor_mse(spec), o.steps, o.train_samples, o.test_samples,
                         o.batch,       r.parameters, r.seconds};
      rows.push_back(row);
      std::printf("%-20s K=%-3lld test MSE %.5f  relative to the constant K/4 %.3f (best linear %.3f)  %.1f s\n",
                  model.c_str(), static_cast<long long>(k), row.test_mse, row.test_mse / row.mean_predictor_mse,
                  row.linear_predictor_mse / row.mean_predictor_mse, row.seconds);
      std::fflush(stdout);
      write_file_atomically(csv, mirrored_sum_csv(rows));
      write_file_atomically(svg, mirrored_sum_svg(rows, subtitle.str()));
    }
  }
  std::printf("wrote %s and %s\n", csv.c_str(), svg.c_str());
  return 0;
}

}  // namespace attn
