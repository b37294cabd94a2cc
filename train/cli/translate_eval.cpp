#include "attn/train/cli/translate_eval.h"

#include <cstdio>
#include <set>

#include "attn/engine/error.h"
#include "attn/train/translation_run.h"

namespace attn {

int run_translation_eval(const ArgParser& p, const std::vector<std::string>& args) {
  static const std::set<std::string> allowed = {"run", "data", "split", "weights"};
  for (const std::string& a : args) {
    if (a.rfind("--", 0) != 0) continue;
    const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (!allowed.count(name))
      throw UsageError("attn eval: --" + name + " does not apply to a translation run (it takes --run, --data, "
                       "--split and --weights)");
  }
  const std::string split = p.get("split");
  if (split != "train" && split != "dev" && split != "test")
    throw UsageError("attn eval: a translation run has the splits train, dev and test, got --split '" + split + "'");
  // The run's test BLEU is the last weights', so they are the default here.
  const std::string weights = p.is_set("weights") ? p.get("weights") : "last.safetensors";
  const TranslationRun run = load_translation_run(p.get("run"), weights);
  BeamSearchOptions search;
  search.beam_size = run.run_config.get_int("beam", 4);
  search.alpha = run.run_config.get_double("alpha", 0.6);
  const std::string data = p.is_set("data") ? p.get("data") : run.run_config.get("data", "");
  const SplitBleu r = translation_split_bleu(run, data, split, search);
  std::printf("{\"%s\": %s, \"sentences\": %lld, \"weights\": \"%s\", \"beam\": %lld}\n", split.c_str(),
              bleu_json(r.bleu).c_str(), static_cast<long long>(r.sentences), weights.c_str(),
              static_cast<long long>(search.beam_size));
  return 0;
}

}  // namespace attn
