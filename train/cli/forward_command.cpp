// `attn forward`: runs an encoder on token embeddings from a safetensors file
// and writes its token and sentence outputs, so a model can be checked
// against another implementation or used from outside the engine.
#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include "attn/engine/anomaly.h"
#include "attn/engine/autograd.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/nn/safetensors.h"
#include "attn/train/finite_check.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"
#include "attn/train/cli/model_commands.h"
#include "attn/train/model_files.h"

namespace attn {

namespace {

constexpr const char* kOp = "forward";

// The [B, n] uint8 validity mask from the input file's "lengths" or "mask"
// (all positions valid when it has neither).
Tensor input_mask(const std::string& path, const std::map<std::string, Tensor>& in, int64_t batch, int64_t n) {
  auto lengths = in.find("lengths");
  auto mask = in.find("mask");
  ATTN_CHECK(lengths == in.end() || mask == in.end(), kOp, path, ": give either 'lengths' or 'mask', not both");
  if (lengths != in.end()) {
    const Tensor& l = lengths->second;
    ATTN_CHECK(l.dtype() == DType::I64, kOp, path, ": 'lengths' must be int64 (I64), got ", dtype_name(l.dtype()));
    ATTN_CHECK(l.shape() == Shape{batch}, kOp, path, ": 'lengths' must have shape [", batch, "] (one per example of ",
               "x), got ", shape_str(l.shape()));
    std::vector<int64_t> values(l.data<int64_t>(), l.data<int64_t>() + batch);
    for (int64_t b = 0; b < batch; ++b)
      ATTN_CHECK(values[b] >= 0 && values[b] <= n, kOp, path, ": lengths[", b, "] = ", values[b],
                 " is out of range [0, ", n, "]");
    return length_mask(values, n);
  }
  if (mask != in.end()) {
    const Tensor& m = mask->second;
    ATTN_CHECK(m.dtype() == DType::U8, kOp, path, ": 'mask' must be uint8 (U8), got ", dtype_name(m.dtype()));
    ATTN_CHECK(m.shape() == (Shape{batch, n}), kOp, path, ": 'mask' must have shape [", batch, ", ", n,
               "] like x's first two axes, got ", shape_str(m.shape()));
    const uint8_t* v = m.data<uint8_t>();
    for (int64_t i = 0; i < batch * n; ++i)
      ATTN_CHECK(v[i] <= 1, kOp, path, ": 'mask' values must be 0 or 1, found ", static_cast<int>(v[i]),
                 " at flat index ", i);
    return m;
  }
  return ones({batch, n}, DType::U8);
}

}  // namespace

int run_forward_command(const std::vector<std::string>& args) {
  ArgParser p("forward",
              "Runs an encoder (evaluation mode, no dropout) on token embeddings read from a safetensors file and "
              "writes its outputs.\nInput tensors: x [B, n, d] float32 or float64; lengths int64 [B] or mask uint8 "
              "[B, n] (optional: all valid).\nOutput tensors: tokens [B, n, token_dim], sentence [B, sentence_dim] "
              "in x's dtype. See docs/forward.md.");
  p.option("model", "", "PATH: model config file (key `encoder` picks the mechanism)")
      .option("weights", "", "FILE: weights file (safetensors) to load, or to create with --init-weights")
      .option("input", "", "FILE: input file (safetensors) with x and lengths or mask")
      .option("output", "", "FILE: output file (safetensors) to write tokens and sentence to")
      .flag("init-weights", "initialise the weights from --seed and save them to --weights (replacing it) first")
      .option("seed", "1", "seed of the initialisation with --init-weights")
      .option("device", "cpu", "cpu or cuda (the model and inputs move there; outputs are written from the host)")
      .flag("detect-anomaly", "check every kernel's output and stop at the first NaN/overflow, naming the op");
  p.example("attn forward --model t.cfg --weights w.safetensors --init-weights --input x.safetensors --output y.safetensors", "creates w.safetensors from the config's initialisation, then writes the outputs for x");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  for (const char* required : {"model", "weights", "input", "output"})
    if (!p.is_set(required) || p.get(required).empty())
      throw UsageError(std::string("attn forward: --") + required + " is required");
  const std::string model_path = p.get("model"), weights_path = p.get("weights");
  const std::string input_path = p.get("input"), output_path = p.get("output");
  check_output_file("attn forward --output", output_path, {input_path, p.get("weights"), p.get("model")});
  const bool init_weights = p.is_set("init-weights");
  const int64_t seed = p.get_int("seed");
  const Device device = parse_device(p.get_choice("device", {"cpu", "cuda"}), "forward");

  // Read and check the inputs before any work, so a bad file fails fast.
  std::map<std::string, Tensor> in = load_safetensors(input_path);
  for (const auto& [name, t] : in)
    ATTN_CHECK(name == "x" || name == "lengths" || name == "mask", kOp, input_path, ": unexpected tensor '", name,
               "' (expected x, and lengths or mask)");
  auto xi = in.find("x");
  ATTN_CHECK(xi != in.end(), kOp, input_path, ": missing tensor 'x' (token embeddings [B, n, d])");
  const Tensor x = xi->second;
  ATTN_CHECK(is_floating(x.dtype()), kOp, input_path, ": 'x' must be float32 or float64, got ",
             dtype_name(x.dtype()));
  ATTN_CHECK(x.dim() == 3, kOp, input_path, ": 'x' must have shape [B, n, d], got ", shape_str(x.shape()));
  ATTN_CHECK(x.size(0) > 0 && x.size(1) > 0 && x.size(2) > 0, kOp, input_path,
             ": 'x' needs at least one example, position and feature, got ", shape_str(x.shape()));
  const Tensor mask = input_mask(input_path, in, x.size(0), x.size(1));
  ATTN_CHECK(all_finite(x), kOp, input_path, ": 'x' holds a NaN or infinite value");

  Config config = Config::load(model_path);
  int64_t input_dim = x.size(2);
  if (config.has(kInputDimKey)) {
    input_dim = input_dim_of(config);
    ATTN_CHECK(input_dim == x.size(2), kOp, input_path, ": 'x' has ", x.size(2),
               " features per token but the model config '", model_path, "' sets ", kInputDimKey, " = ", input_dim);
  }
  const std::string mechanism = encoder_name(config);
  Generator init(static_cast<uint64_t>(seed)), noise(static_cast<uint64_t>(seed) + 1);
  std::unique_ptr<Encoder> encoder =
      build_encoder_from_config(config, model_path, input_dim, x.dtype(), init, noise);

  if (init_weights) {
    save_model_state(weights_path, *encoder, mechanism);
    std::fprintf(stderr, "forward: wrote freshly initialised weights (seed %lld) to %s\n",
                 static_cast<long long>(seed), weights_path.c_str());
  } else {
    ATTN_CHECK(path_exists(weights_path), kOp, "the weights file '", weights_path,
               "' does not exist (pass --init-weights to create it)");
    ATTN_CHECK(text::is_regular_file(weights_path), kOp, "the weights '", weights_path,
               "' are a folder or another non-file; give a safetensors file");
    load_model_state(weights_path, *encoder, mechanism);
  }

  encoder->set_training(false);
  encoder->to(device);
  NoGrad no_grad;
  EncoderOutput out;
  {
    std::unique_ptr<AnomalyDetector> detector;
    if (p.is_set("detect-anomaly")) detector = std::make_unique<AnomalyDetector>();
    out = encoder->encode(x.to(device), mask.to(device));
  }
  // An output nobody can use is an error, not a file: a zero-width layer, or
  // values so large that the encoder's sums overflow the dtype.
  ATTN_CHECK(out.tokens.numel() > 0 && out.sentence.numel() > 0, kOp, "the encoder's outputs are empty (tokens ",
             shape_str(out.tokens.shape()), ", sentence ", shape_str(out.sentence.shape()), "): check ", model_path);
  ATTN_CHECK(all_finite(out.tokens) && all_finite(out.sentence), kOp,
             "the encoder's outputs are not finite: the inputs or weights are too large for ", dtype_name(x.dtype()),
             " (the sums overflow); scale them down or use float64. Nothing was written to '", output_path, "'");
  save_safetensors(output_path, {{"tokens", out.tokens}, {"sentence", out.sentence}}, {{"encoder", mechanism}});
  std::printf("forward: %s on x %s -> tokens %s, sentence %s (%s) written to %s\n", mechanism.c_str(),
              shape_str(x.shape()).c_str(), shape_str(out.tokens.shape()).c_str(),
              shape_str(out.sentence.shape()).c_str(), dtype_name(out.tokens.dtype()), output_path.c_str());
  return 0;
}

}  // namespace attn
