// Picks the loader for a task and a --data/--format pair, so `attn train`,
// `attn eval` and the tests resolve data the same way.
#pragma once
#include <string>

#include "attn/train/data/dataset.h"

namespace attn {

struct DataSpec {
  TaskKind task = TaskKind::Classify;
  std::string data;            // a directory or file; empty = the default data (classify: SpamAssassin)
  std::string format = "auto";  // see data_formats_help(); auto: classify tsv (a .tgz: spam), pair tsv, sick, conll, squad
  int64_t max_words = 0;       // SpamAssassin only: keep the first N words of each message
  std::string cache_dir;       // SpamAssassin cache (default: $ATTN_CACHE or ~/.cache/attn)
  bool verbose = true;         // progress lines on stderr while downloading/processing
  bool allow_similar_labels = false;  // tsv/conll: keep labels that differ only by whitespace or number format, and header-like first lines
  // cr, mpqa, subj: which of the ten cross-validation folds is the test split
  // (the papers report the mean over all ten).
  int64_t fold = 0;
};

Dataset load_task_data(const DataSpec& spec);

// The formats load_task_data accepts, for --help texts.
const char* data_formats_help();

}  // namespace attn
