#include "attn/train/bench/bench_decode.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "attn/engine/random.h"
#include "attn/models/seq2seq_search.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 4096)
      throw UsageError("attn bench-decode: --lengths must be a comma-separated list of lengths in [1, 4096], got '" +
                       text + "'");
    out.push_back(v);
    start = comma + 1;
  }
  return out;
}

}  // namespace

int run_bench_decode(const std::vector<std::string>& args) {
  ArgParser p("bench-decode",
              "Times greedy decoding of the translation model (random weights, transformer_base's shape by default) "
              "per sentence against the output length, with and without the per-layer key/value cache; the two "
              "alternate within each repetition.");
  p.option("lengths", "4,8,16,32", "output lengths, comma-separated (each decoded exactly, eos never chosen)")
      .option("source-length", "16", "words per source sentence")
      .option("sentences", "1", "sentences decoded together (the batch)")
      .option("reps", "3", "timed repetitions per length and mode (the median is reported)")
      .option("warmup", "1", "untimed repetitions first")
      .option("hidden", "512", "model width")
      .option("heads", "8", "attention heads")
      .option("layers", "6", "encoder and decoder layers")
      .option("filter", "2048", "feed-forward inner width")
      .option("vocab", "32000", "vocabulary size (the softmax's width)")
      .option("seed", "1", "seed of the weights and the source words");
  p.example("attn bench-decode --lengths 4,8,16,32 --reps 3",
            "transformer_base's shape, one sentence: median ms per sentence at each length, cached and not");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  const std::vector<int64_t> lengths = parse_lengths(p.get("lengths"));
  const int64_t source_length = p.get_int("source-length", 1, 4096), sentences = p.get_int("sentences", 1, 4096);
  const int64_t reps = p.get_int("reps", 1, 1000), warmup = p.get_int("warmup", 0, 1000);
  Seq2SeqOptions o;
  o.hidden = p.get_int("hidden", 1, 65536);
  o.heads = p.get_int("heads", 1, 1024);
  o.encoder_layers = o.decoder_layers = p.get_int("layers", 1, 1000);
  o.filter = p.get_int("filter", 1, 262144);
  o.vocab_size = p.get_int("vocab", 3, 10000000);
  if (o.hidden % o.heads != 0)
    throw UsageError("attn bench-decode: --hidden " + p.get("hidden") + " must be a multiple of --heads " +
                     p.get("heads"));
  Generator init(p.get_uint64("seed")), noise(p.get_uint64("seed") + 1);
  Seq2SeqTransformer model(o, init, noise);
  model.set_training(false);
  std::vector<int64_t> words;
  for (int64_t i = 0; i < sentences * source_length; ++i)
    words.push_back(2 + static_cast<int64_t>(init.uniform() * static_cast<double>(o.vocab_size - 2)));
  const Tensor source = from_indices(words, {sentences, source_length});

  std::printf("attn bench-decode: greedy decoding, %lld sentence(s) of %lld source words, hidden %lld, %lld heads, "
              "%lld+%lld layers, filter %lld, vocabulary %lld, float32, %d OpenMP thread(s); median of %lld reps "
              "after %lld warm-up\n",
              static_cast<long long>(sentences), static_cast<long long>(source_length),
              static_cast<long long>(o.hidden), static_cast<long long>(o.heads),
              static_cast<long long>(o.encoder_layers), static_cast<long long>(o.decoder_layers),
              static_cast<long long>(o.filter), static_cast<long long>(o.vocab_size), omp_get_max_threads(),
              static_cast<long long>(reps), static_cast<long long>(warmup));
  std::printf("%8s  %16s  %18s  %14s  %16s\n", "length", "cached ms/sent", "uncached ms/sent", "uncached/cached",
              "cached ms/word");
  for (int64_t length : lengths) {
    GreedyOptions g;
    g.max_length = length;
    g.stop_at_eos = false;
    std::vector<double> times[2];
    for (int64_t r = 0; r < warmup + reps; ++r)
      for (int cached = 1; cached >= 0; --cached) {
        g.use_cache = cached == 1;
        const auto start = Clock::now();
        greedy_decode(model, source, g);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (r >= warmup) times[cached].push_back(ms / static_cast<double>(sentences));
      }
    const double with = median(times[1]), without = median(times[0]);
    std::printf("%8lld  %16.2f  %18.2f  %14.2f  %16.3f\n", static_cast<long long>(length), with, without,
                without / with, with / static_cast<double>(length));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace attn
