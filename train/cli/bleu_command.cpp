// `attn bleu`: corpus BLEU of one or two systems' outputs against a
// reference file, as sacreBLEU prints it, and with two systems the paired
// bootstrap test of their difference (train/metrics_significance.h).
#include <cstdio>
#include <iostream>

#include "attn/train/cli/commands.h"
#include "attn/train/metrics_bleu.h"
#include "attn/train/metrics_significance.h"
#include "attn/util/cli_args.h"
#include "attn/util/error.h"
#include "attn/util/text.h"

namespace attn {

namespace {

// The lines of a --flag's file, refusing what cannot be a test set's output.
std::vector<std::string> read_segments(const ArgParser& p, const std::string& flag) {
  const std::string path = p.get(flag);
  if (!text::is_regular_file(path))
    throw UsageError("attn bleu: --" + flag + " " + text::quote(path) + " is not a file");
  std::vector<std::string> lines = text::read_lines("attn bleu", path);
  if (lines.empty()) throw Error("attn bleu: --" + flag + " " + path + " is empty");
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find('\0') != std::string::npos) text::fail_at("attn bleu", path, i + 1, "NUL byte: not a text file");
  return lines;
}

void check_same_count(const ArgParser& p, const std::string& flag, size_t n, size_t refs) {
  if (n != refs)
    throw Error("attn bleu: --" + flag + " " + p.get(flag) + " has " + std::to_string(n) + " lines but --ref " +
                p.get("ref") + " has " + std::to_string(refs) + "; line i of each must be the same sentence");
}

}  // namespace

int run_bleu_command(const std::vector<std::string>& args) {
  ArgParser p("bleu",
              "Corpus BLEU of detokenised outputs against one reference, exactly as sacreBLEU computes it by\n"
              "default (13a tokenisation, mixed case, 'exp' smoothing, 4-grams): one sentence a line, line i of\n"
              "each file the same sentence. With --hyp2, also a paired bootstrap test (Koehn 2004) of whether\n"
              "the two systems differ.");
  p.option("ref", "", "PATH: the reference translations")
      .option("hyp", "", "PATH: a system's output")
      .option("hyp2", "", "PATH: a second system's output, compared with --hyp")
      .option("samples", "1000", "bootstrap samples (with --hyp2)")
      .option("seed", "12345", "seed of the bootstrap draws (sacreBLEU's default seed)");
  p.example("attn bleu --ref newstest2014.de --hyp out.de", "BLEU of one output");
  p.example("attn bleu --ref newstest2014.de --hyp base.de --hyp2 mtsa.de --samples 1000",
            "both BLEUs and the bootstrap p-value of their difference");
  p.epilog(
      "The p-value is Koehn's: the share of bootstrap samples in which the system with the higher BLEU on the\n"
      "whole test set does not score higher. The line after it gives sacreBLEU's --paired-bs p-value of the\n"
      "same samples for comparison.");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  for (const char* required : {"ref", "hyp"})
    if (!p.is_set(required)) throw UsageError(std::string("attn bleu: --") + required + " is required");
  const int64_t samples = p.get_int("samples", 1, 1000000);
  const uint64_t seed = p.get_uint64("seed");
  if (!p.is_set("hyp2") && (p.is_set("samples") || p.is_set("seed")))
    throw UsageError("attn bleu: --samples and --seed set up the bootstrap test, which needs --hyp2");

  const std::vector<std::string> refs = read_segments(p, "ref");
  const std::vector<std::string> hyps = read_segments(p, "hyp");
  check_same_count(p, "hyp", hyps.size(), refs.size());
  std::printf("hyp:  %s\n", format_bleu(corpus_bleu(hyps, refs)).c_str());
  if (!p.is_set("hyp2")) return 0;
  const std::vector<std::string> hyps2 = read_segments(p, "hyp2");
  check_same_count(p, "hyp2", hyps2.size(), refs.size());
  std::printf("hyp2: %s\n", format_bleu(corpus_bleu(hyps2, refs)).c_str());
  const BootstrapResult r = paired_bootstrap(hyps, hyps2, refs, samples, seed);
  std::printf("paired bootstrap (%lld samples of %zu sentences, seed %llu): hyp2 - hyp = %+.2f BLEU; "
              "hyp wins %lld, hyp2 wins %lld, ties %lld\n",
              static_cast<long long>(samples), refs.size(), static_cast<unsigned long long>(seed),
              r.bleu_b - r.bleu_a, static_cast<long long>(r.wins_a), static_cast<long long>(r.wins_b),
              static_cast<long long>(r.ties));
  std::printf("p = %.4f (Koehn 2004)\n", r.p_value);
  std::printf("p = %.4f (sacreBLEU --paired-bs)\n", r.p_value_centred);
  return 0;
}

}  // namespace attn
