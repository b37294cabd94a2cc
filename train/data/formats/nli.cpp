// SNLI and MultiNLI jsonl.
#include "attn/engine/error.h"
#include "attn/util/json.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;

const std::vector<std::string> kNliLabels = {"entailment", "neutral", "contradiction"};

std::vector<Example> read_nli(const char* loader, const std::string& file) {
  std::vector<Example> out;
  if (file.empty()) return out;
  std::vector<std::string> lines = loader_util::read_lines(loader, file);
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t line_no = i + 1;
    if (loader_util::is_blank(lines[i])) continue;
    Json record;
    try {
      record = Json::parse(lines[i]);
    } catch (const Error& e) {
      fail_at(loader, file, line_no, e.what());
    }
    if (!record.is_object()) fail_at(loader, file, line_no, "expected a JSON object");
    auto field = [&](const char* key) -> const std::string& {
      const Json* v = record.find(key);
      if (!v) fail_at(loader, file, line_no, std::string("missing \"") + key + "\"");
      if (!v->is_string()) fail_at(loader, file, line_no, std::string("\"") + key + "\" is not a string");
      return v->as_string();
    };
    const std::string& gold = field("gold_label");
    if (gold == "-") continue;  // no annotator majority
    Example e;
    for (size_t k = 0; k < kNliLabels.size(); ++k)
      if (gold == kNliLabels[k]) e.label = static_cast<int64_t>(k);
    if (e.label < 0) fail_at(loader, file, line_no, "unknown gold_label " + loader_util::quote(gold));
    e.tokens = tokenize(field("sentence1"));
    e.tokens_b = tokenize(field("sentence2"));
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Dataset load_snli_jsonl(const std::string& train, const std::string& dev, const std::string& test) {
  Dataset d;
  d.name = "snli";
  d.task = TaskKind::Pair;
  d.label_names = kNliLabels;
  const char* loader = "load_snli_jsonl";
  d.train = read_nli(loader, train);
  d.dev = read_nli(loader, dev);
  d.test = read_nli(loader, test);
  return d;
}

Dataset load_multinli_jsonl(const std::string& train, const std::string& dev_matched,
                            const std::string& dev_mismatched) {
  const char* loader = "load_multinli_jsonl";
  Dataset d;
  d.name = "multinli";
  d.task = TaskKind::Pair;
  d.label_names = kNliLabels;
  d.train = read_nli(loader, train);
  std::vector<Example> matched = read_nli(loader, dev_matched);
  std::vector<Example> mismatched = read_nli(loader, dev_mismatched);
  d.dev = matched;
  d.test = mismatched;
  d.reported = {{"matched", std::move(matched)}, {"mismatched", std::move(mismatched)}};
  return d;
}

}  // namespace attn
