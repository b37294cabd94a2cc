// `attn explain`: one SVG per sentence showing the prediction of a trained
// run and the attention weights of the forward pass that made it.
#include <cstdio>
#include <iostream>

#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/picture_commands.h"
#include "attn/train/pictures/explain.h"
#include "attn/train/pictures/explain_svg.h"

namespace attn {

int run_explain_command(const std::vector<std::string>& args) {
  ArgParser p("explain",
              "Writes one SVG per sentence showing what a trained classifier attends to: the prediction and its\n"
              "probability, and the encoder's attention weights from the very forward pass that predicted\n"
              "(MTSA: each head's token2token weights and alignment with its mask, and the source2token weights;\n"
              "DiSAN: forward and backward alignments; Bi-BloSAN: intra-block and inter-block alignments;\n"
              "Multi-Scale Transformer: each head's window; ReSAN: the selected heads and dependents over the\n"
              "soft alignments). Sentences come from --text, or one per line from stdin.\n"
              "A tag run's picture shows each token with its predicted tag under it, and the attention of one\n"
              "token (--token): its row of every map, as bars over the keys. An srl run reads \"words<TAB>K\", the\n"
              "predicate being word K (1 = the first), as attn predict does.");
  p.option("run", "", "PATH: run folder written by attn train (required; a classify, tag or srl run)")
      .option("weights", "best.safetensors", "FILE: weights file inside the run folder")
      .option("text", "", "the sentence to explain (default: read one sentence per line from stdin)")
      .option("out", "explain", "PATH: folder for the pictures: sentence_1.svg, sentence_2.svg, ...")
      .option("feature", "-1",
              "for multi-dimensional (per-feature) attention: the feature to show, or -1 for the mean over features")
      .option("max-tokens", "60", "longer sentences are cut to their first N tokens (noted in the picture)")
      .option("token", "0", "tag and srl runs: the token (0-based) whose attention is drawn");
  p.example("attn explain --run runs/mtsa-spam --text \"free money, click now\"", "writes explain/sentence_1.svg: the prediction and the attention weights");
  p.example("attn explain --run runs/disan-conll --text \"EU rejects German call\" --token 2",
            "a tagger: the predicted tag under each token, and what \"german\" attends to");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.get("run").empty()) throw UsageError("attn explain: --run is required");
  ExplainPictureOptions po;
  po.feature = p.get_int("feature", -1);
  const int64_t max_tokens = p.get_int("max-tokens", 1, 10000);
  // The range against each sentence's length is checked when it is drawn.
  po.token = p.get_int("token", 0, 10000);
  std::vector<std::string> sentences;
  if (p.is_set("text")) {
    ATTN_CHECK(p.get("text").find_first_not_of(" \t\r\n") != std::string::npos, "explain", "--text is empty");
    sentences.push_back(p.get("text"));
  } else {
    std::string line;
    int64_t line_no = 0;
    while (std::getline(std::cin, line)) {
      ++line_no;
      ATTN_CHECK(line.find_first_not_of(" \t\r") != std::string::npos, "explain", "stdin line ", line_no,
                 " is empty (give one sentence per line)");
      sentences.push_back(line);
    }
    ATTN_CHECK(!sentences.empty(), "explain", "no sentences: give --text or one sentence per line on stdin");
  }
  SavedRun run = load_saved_run(p.get("run"), p.get("weights"));
  const bool tagger = tags_tokens(run.task);
  if (!tagger && p.is_set("token"))
    throw UsageError("attn explain: --token picks the token of a tag or srl run whose attention is drawn; the run in '" +
                     p.get("run") + "' is a " + task_name(run.task) + " run, whose maps show every token's row");
  make_directories(p.get("out"));
  for (size_t k = 0; k < sentences.size(); ++k) {
    const Explanation e =
        tagger ? explain_tagged_sentence(run, sentences[k], max_tokens) : explain_sentence(run, sentences[k], max_tokens);
    const std::string path = p.get("out") + "/sentence_" + std::to_string(k + 1) + ".svg";
    write_file_atomically(path, render_explanation_svg(e, po));
    if (tagger) {
      std::string tags;
      for (const std::string& t : e.tags) tags += " " + t;
      std::printf("%s:%s%s\n", path.c_str(), tags.c_str(), e.truncated() ? " [truncated]" : "");
    } else {
      std::printf("%s: %s (p = %.4f)%s\n", path.c_str(), e.labels.at(static_cast<size_t>(e.predicted)).c_str(),
                  e.probabilities.at(static_cast<size_t>(e.predicted)), e.truncated() ? " [truncated]" : "");
    }
  }
  return 0;
}

}  // namespace attn
