// `attn bpe`: learns joint BPE codes from text files, or applies codes to a
// file (train/text/bpe.h), so data can be prepared and inspected outside
// training, and the codes compared with subword-nmt's.
#include <cstdio>
#include <iostream>

#include "attn/train/cli/commands.h"
#include "attn/train/text/bpe.h"
#include "attn/train/text/pretokenize.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

std::vector<std::string> input_lines(const std::string& path, const std::string& flag, bool pretokenized) {
  if (!text::is_regular_file(path)) throw UsageError("attn bpe: " + flag + " " + text::quote(path) + " is not a file");
  std::vector<std::string> lines = text::read_lines("attn bpe", path);
  if (!pretokenized) return lines;
  for (std::string& line : lines) {
    std::string joined;
    for (const std::string& w : pretokenize(line)) joined += (joined.empty() ? "" : " ") + w;
    line.swap(joined);
  }
  return lines;
}

void check_new_output(const ArgParser& p, const std::string& flag, const std::vector<std::string>& inputs) {
  const std::string path = p.get(flag);
  if (path_exists(path) && !p.is_set("overwrite"))
    throw UsageError("attn bpe: --" + flag + " '" + path + "' exists; give --overwrite to replace it");
  check_output_file("attn bpe: --" + flag, path, inputs);
}

}  // namespace

int run_bpe_command(const std::vector<std::string>& args) {
  ArgParser p("bpe",
              "Joint byte-pair encoding (Sennrich et al. 2016, as subword-nmt learns and applies it). --learn\n"
              "reads the words (whitespace-separated) of every line of the files and writes --codes; --apply\n"
              "writes each line of a file as subword units ('@@' marks a unit continued by the next) to --out.\n"
              "With --pretokenize, lines are first split as the translation loader splits them (punctuation\n"
              "off words; docs/data.md, Translation).");
  p.option("learn", "", "LIST: comma list of text files to learn from (source and target together)")
      .option("merges", "32000", "the most merges to learn (fewer when no pair occurs twice)")
      .option("apply", "", "PATH: a text file to encode with --codes")
      .option("codes", "", "PATH: the codes file written by --learn, read by --apply")
      .option("out", "", "PATH: where --apply writes the encoded lines")
      .flag("pretokenize", "split punctuation off words first, as the parallel-text loader does")
      .flag("overwrite", "replace an existing --codes (with --learn) or --out (with --apply)");
  p.example("attn bpe --learn train.en,train.de --merges 32000 --codes codes.bpe --pretokenize",
            "learn joint codes for English and German");
  p.example("attn bpe --apply newstest2014.en --codes codes.bpe --out newstest2014.bpe.en --pretokenize",
            "encode a file with them");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  const bool learn = p.is_set("learn"), apply = p.is_set("apply");
  if (learn == apply) throw UsageError("attn bpe: give exactly one of --learn and --apply");
  if (!p.is_set("codes")) throw UsageError("attn bpe: --codes is required");
  const bool pretokenized = p.is_set("pretokenize");
  if (learn) {
    if (p.is_set("out")) throw UsageError("attn bpe: --out goes with --apply; --learn writes --codes");
    const int64_t merges = p.get_int("merges", 0, 10000000);
    std::vector<std::string> files, lines;
    const std::string list = p.get("learn");
    for (size_t start = 0, comma; start <= list.size(); start = comma + 1) {
      comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string f = list.substr(start, comma - start);
      if (f.empty()) throw UsageError("attn bpe: --learn has an empty file name in '" + p.get("learn") + "'");
      files.push_back(f);
      for (std::string& line : input_lines(f, "--learn", pretokenized)) lines.push_back(std::move(line));
    }
    check_new_output(p, "codes", files);
    const Bpe bpe = Bpe::learn(lines, merges);
    bpe.save(p.get("codes"));
    std::printf("attn bpe: learned %lld merges from %zu lines of %zu files into %s\n",
                static_cast<long long>(bpe.merges()), lines.size(), files.size(), p.get("codes").c_str());
    return 0;
  }
  if (p.is_set("merges")) throw UsageError("attn bpe: --merges goes with --learn");
  if (!p.is_set("out")) throw UsageError("attn bpe: --apply needs --out");
  const std::vector<std::string> lines = input_lines(p.get("apply"), "--apply", pretokenized);
  if (!text::is_regular_file(p.get("codes")))
    throw UsageError("attn bpe: --codes " + text::quote(p.get("codes")) + " is not a file");
  const Bpe bpe = Bpe::load(p.get("codes"));
  check_new_output(p, "out", {p.get("apply"), p.get("codes")});
  std::string out;
  for (const std::string& line : lines) {
    std::string encoded;
    for (const std::string& u : bpe.encode(line)) encoded += (encoded.empty() ? "" : " ") + u;
    out += encoded + "\n";
  }
  write_file_atomically(p.get("out"), out);
  std::printf("attn bpe: encoded %zu lines with %lld merges into %s\n", lines.size(),
              static_cast<long long>(bpe.merges()), p.get("out").c_str());
  return 0;
}

}  // namespace attn
