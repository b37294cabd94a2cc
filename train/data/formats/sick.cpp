// SICK sentence relatedness (SemEval 2014 task 1).
#include <cmath>
#include <cstdlib>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

using loader_util::fail_at;

const char* const kLoader = "load_sick";

std::vector<Example> read_sick(const std::string& file) {
  std::vector<Example> out;
  std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  if (lines.empty()) fail_at(kLoader, file, 1, "empty file (expected a header)");
  std::vector<std::string> header = loader_util::split_tabs(lines[0]);
  auto column = [&](const char* name) -> size_t {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    fail_at(kLoader, file, 1, std::string("header has no column ") + name);
  };
  size_t col_a = column("sentence_A"), col_b = column("sentence_B"), col_score = column("relatedness_score");
  for (size_t i = 1; i < lines.size(); ++i) {
    if (loader_util::is_blank(lines[i])) continue;
    std::vector<std::string> fields = loader_util::split_tabs(lines[i]);
    if (fields.size() != header.size())
      fail_at(kLoader, file, i + 1,
              "expected " + std::to_string(header.size()) + " tab-separated fields, found " +
                  std::to_string(fields.size()));
    const std::string& s = fields[col_score];
    char* end = nullptr;
    double score = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(score))
      fail_at(kLoader, file, i + 1, "relatedness_score " + loader_util::quote(s) + " is not a number");
    if (score < 1 || score > 5) fail_at(kLoader, file, i + 1, "relatedness_score " + loader_util::quote(s) + " is outside [1, 5]");
    Example e;
    e.tokens = tokenize(fields[col_a]);
    e.tokens_b = tokenize(fields[col_b]);
    e.score = score;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Dataset load_sick(const std::string& train, const std::string& dev, const std::string& test) {
  Dataset d;
  d.name = "sick";
  d.task = TaskKind::Relatedness;
  d.label_names = {"1", "2", "3", "4", "5"};
  d.train = read_sick(train);
  d.dev = read_sick(dev);
  d.test = read_sick(test);
  return d;
}

}  // namespace attn
