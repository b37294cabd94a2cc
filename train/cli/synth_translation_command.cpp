// `attn synth-translation`: writes the synthetic SVO -> SOV translation task
// (train/synthetic/svo_translation.h) as parallel text in the layout
// load_parallel_text_dir reads, so `--data DIR` runs the translation path
// end to end without WMT.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "attn/train/cli/commands.h"
#include "attn/train/synthetic/svo_translation.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

std::string language_code(const ArgParser& p, const std::string& flag) {
  const std::string code = p.get(flag);
  for (char c : code)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      throw UsageError("attn synth-translation: --" + flag + " " + text::quote(code) +
                       " is not a language code (letters, digits, - and _; it names the files)");
  return code;
}

bool is_empty_folder(const std::string& dir) {
  return std::filesystem::directory_iterator(dir) == std::filesystem::directory_iterator();
}

}  // namespace

int run_synth_translation_command(const std::vector<std::string>& args) {
  ArgParser p("synth-translation",
              "Writes a synthetic translation task: English-like subject-verb-object sentences and their\n"
              "German-like subject-object-verb translations, with a one-to-one lexicon, optional adjectives\n"
              "(placed after the noun in the target) and a verb suffix agreeing with the subject's number\n"
              "(docs/data.md, \"Translation\"). All sentences are distinct, within and across splits.\n"
              "Writes OUT/{train,dev,test}.SRC and .TGT, one sentence a line, for load_parallel_text_dir.");
  p.option("out", "", "PATH: the folder to write (created if missing; refused when not empty unless --overwrite)")
      .option("sentences", "10000", "training sentence pairs")
      .option("dev-sentences", "500", "dev sentence pairs")
      .option("test-sentences", "500", "test sentence pairs")
      .option("seed", "1", "seed of the sentences")
      .option("src-lang", "en", "VALUE: the source files' extension")
      .option("tgt-lang", "de", "VALUE: the target files' extension")
      .flag("overwrite", "write into a folder that is not empty, replacing the six files");
  p.example("attn synth-translation --out data/synth --sentences 20000 --seed 7",
            "20000 training pairs and 500 each for dev and test in data/synth/{train,dev,test}.{en,de}");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (!p.is_set("out")) throw UsageError("attn synth-translation: --out is required");
  const std::string out = p.get("out");
  const int64_t train = p.get_int("sentences", 1, 800000);
  const int64_t dev = p.get_int("dev-sentences", 1, 100000);
  const int64_t test = p.get_int("test-sentences", 1, 100000);
  const uint64_t seed = p.get_uint64("seed");
  const std::string src = language_code(p, "src-lang"), tgt = language_code(p, "tgt-lang");
  if (src == tgt) throw UsageError("attn synth-translation: --src-lang and --tgt-lang are both '" + src + "'");

  if (path_exists(out) && !is_directory(out))
    throw UsageError("attn synth-translation: --out '" + out + "' exists and is not a folder");
  if (is_directory(out) && !is_empty_folder(out) && !p.is_set("overwrite"))
    throw UsageError("attn synth-translation: --out '" + out +
                     "' is not empty; give --overwrite to write into it, or another folder");
  make_directories(out);

  const auto pairs = svo_to_sov_pairs(train + dev + test, seed);
  const std::pair<const char*, int64_t> splits[] = {{"train", train}, {"dev", dev}, {"test", test}};
  size_t next = 0;
  for (const auto& [split, count] : splits) {
    std::string source, target;
    for (int64_t i = 0; i < count; ++i, ++next) {
      source += pairs[next].first + "\n";
      target += pairs[next].second + "\n";
    }
    write_file_atomically(text::join_path(out, std::string(split) + "." + src), source);
    write_file_atomically(text::join_path(out, std::string(split) + "." + tgt), target);
  }
  std::printf("attn synth-translation: wrote %lld train, %lld dev and %lld test pairs (seed %llu) to %s as "
              "{train,dev,test}.{%s,%s}\n",
              static_cast<long long>(train), static_cast<long long>(dev), static_cast<long long>(test),
              static_cast<unsigned long long>(seed), out.c_str(), src.c_str(), tgt.c_str());
  return 0;
}

}  // namespace attn
