// `attn predict`: reads sentences from standard input (one per line; for
// pair and relatedness tasks the two sentences separated by a tab; for the
// locate task the question, a tab and the passage) and writes one prediction
// per line.
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <iterator>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/util/cli_args.h"
#include "attn/util/json.h"
#include "attn/util/task_kind.h"
#include "attn/util/text.h"
#include "attn/train/cli/commands.h"
#include "attn/train/evaluate.h"
#include "attn/train/run/saved_run.h"
#include "attn/train/data/sentence_splitter.h"
#include "attn/train/data/srl_input.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

// One output line for a prediction: plain text, or a JSON object with --json.
std::string format_prediction(const SavedRun& run, const Prediction& pr, bool probabilities, bool json) {
  auto label_name = [&](int64_t id) { return run.labels.at(static_cast<size_t>(id)); };
  char number[32];
  switch (run.task) {
    case TaskKind::Translate:
      ATTN_CHECK(false, "predict", "a translate run is used with attn translate, not attn predict");
      break;
    case TaskKind::Classify:
    case TaskKind::Pair: {
      if (!json) {
        std::string out = label_name(pr.label);
        if (probabilities)
          for (size_t c = 0; c < pr.probabilities.size(); ++c) {
            std::snprintf(number, sizeof number, "%.4f", pr.probabilities[c]);
            out += (c == 0 ? "\t" : " ") + run.labels.at(c) + "=" + number;
          }
        return out;
      }
      std::string out = "{\"label\": " + json_quote(label_name(pr.label));
      if (probabilities) {
        out += ", \"probabilities\": {";
        for (size_t c = 0; c < pr.probabilities.size(); ++c) {
          std::snprintf(number, sizeof number, "%.6g", pr.probabilities[c]);
          out += (c == 0 ? "" : ", ") + json_quote(run.labels.at(c)) + ": " + number;
        }
        out += "}";
      }
      return out + "}";
    }
    case TaskKind::Relatedness:
      std::snprintf(number, sizeof number, json ? "%.6g" : "%.4f", pr.score);
      return json ? std::string("{\"score\": ") + number + "}" : std::string(number);
    case TaskKind::Locate:  // the answer sentence's index in the passage, from 0
      return json ? "{\"sentence\": " + std::to_string(pr.label) + "}" : std::to_string(pr.label);
    case TaskKind::Tag:
    case TaskKind::Srl: {
      std::string out;
      for (int64_t t : pr.tags)
        out += (out.empty() ? "" : json ? ", " : " ") + (json ? json_quote(label_name(t)) : label_name(t));
      return json ? "{\"tags\": [" + out + "]}" : out;
    }
  }
  return "";
}

}  // namespace

int run_predict_command(const std::vector<std::string>& args) {
  ArgParser p("predict",
              "Reads one input per line from stdin and prints one prediction per line: the label (classify, pair),\n"
              "the score (relatedness), the space-separated tags (tag, srl) or the answer sentence's index from 0 (locate).\n"
              "Pair inputs: two sentences separated by a tab; locate inputs: the question, a tab, the passage (split\n"
              "into sentences as --format squad splits a context).\n"
              "A tagging run with character features (char_cnn) reads each line as whitespace-separated tokens, case kept.\n"
              "SRL inputs: the words, a tab, and the predicate's word number (1 = the first word); the words are split at\n"
              "whitespace and lowercased, as the conll05 loader reads them.\n"
              "Lines end at LF, CRLF or a lone CR, as the data loaders read them; a blank line gives a blank output\n"
              "line. A sentence longer than the run's --max-len is cut to it (said on stderr).");
  p.option("run", "", "PATH: run folder written by attn train (required)")
      .option("weights", "best.safetensors", "FILE: weights file inside the run folder (best.safetensors, or last.safetensors: the latest checkpoint)")
      .option("device", "cpu", "cpu or cuda (the model moves there; batches follow it)")
      .flag("probabilities", "classify, pair: also print each class's probability (label<TAB>class=p ...)")
      .flag("json", "one JSON object per line: {\"label\": ...} ({\"probabilities\": {...}} too with --probabilities), "
                    "{\"score\": ...}, {\"tags\": [...]} or {\"sentence\": K}; a blank input line gives {}");
  p.example("echo \"free money, click now\" | attn predict --run runs/mtsa-spam --probabilities", "the label and each class's probability");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.get("run").empty()) throw UsageError("attn predict: --run is required");
  const bool probabilities = p.is_set("probabilities"), json = p.is_set("json");
  const Device device = parse_device(p.get_choice("device", {"cpu", "cuda"}), "predict");  // before any work: fails fast without a GPU
  SavedRun run = load_saved_run(p.get("run"), p.get("weights"));
  if (probabilities && run.task != TaskKind::Classify && run.task != TaskKind::Pair)
    throw UsageError("attn predict: --probabilities is for classify and pair runs; " + p.get("run") + " is a " +
                     task_name(run.task) + " run");
  run.model->to(device);
  const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const std::vector<std::string> lines = text::split_lines(input);
  std::vector<Example> examples;
  std::vector<bool> blank(lines.size(), false);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (text::is_blank(line)) {
      blank[i] = true;
      continue;
    }
    Example e;
    if (run.task == TaskKind::Srl) {
      e = srl_input(line, "stdin line " + std::to_string(i + 1));
    } else if (run.task == TaskKind::Pair || run.task == TaskKind::Relatedness) {
      size_t tab = line.find('\t');
      ATTN_CHECK(tab != std::string::npos, "predict", "stdin line ", i + 1,
                 ": expected two sentences separated by a tab");
      e.tokens = tokenize(line.substr(0, tab));
      e.tokens_b = tokenize(line.substr(tab + 1));
    } else if (run.task == TaskKind::Tag && run.vocab.characters()) {
      // The character feature reads words as typed: the line is taken as
      // whitespace-separated tokens, as the tagging files are, case kept.
      e.cased_tokens = text::split_whitespace(line);
      for (const std::string& t : e.cased_tokens) e.tokens.push_back(lowercase_token(t));
    } else if (run.task == TaskKind::Locate) {
      const size_t tab = line.find('\t');
      ATTN_CHECK(tab != std::string::npos, "predict", "stdin line ", i + 1,
                 ": expected the question and the passage separated by a tab");
      e.tokens = tokenize(line.substr(0, tab));
      for (const std::string& sentence : sentence_texts(line.substr(tab + 1))) e.passage.push_back(tokenize(sentence));
      ATTN_CHECK(!e.passage.empty(), "predict", "stdin line ", i + 1, ": the passage after the tab is empty");
    } else {
      e.tokens = tokenize(line);
    }
    const size_t longest = std::max(e.tokens.size(), e.tokens_b.size());
    if (run.max_len > 0 && longest > static_cast<size_t>(run.max_len))
      std::fprintf(stderr, "attn predict: line %zu has %zu tokens; the model reads the first %lld (the run's --max-len)%s\n",
                   i + 1, longest, static_cast<long long>(run.max_len),
                   tags_tokens(run.task) ? ", so it has that many tags" : "");
    e.label = 0;
    e.score = 1;
    e.tags.assign(e.tokens.size(), 0);
    examples.push_back(std::move(e));
  }
  std::vector<Prediction> preds;
  if (!examples.empty()) {
    EvalOptions eo;
    eo.max_len = run.max_len;
    eo.probabilities = probabilities;
    preds = predict(*run.model, examples, run.vocab, eo);
  }
  size_t next = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (blank[i]) {
      std::printf("%s\n", json ? "{}" : "");
      continue;
    }
    std::printf("%s\n", format_prediction(run, preds[next++], probabilities, json).c_str());
  }
  return 0;
}

}  // namespace attn
