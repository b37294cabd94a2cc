// Rebuilds a trained model from its run folder (model.cfg, run.cfg,
// vocab.txt, labels.txt, best.safetensors) for `attn eval` and `attn predict`.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attn/models/task_model.h"
#include "attn/train/data/vocab.h"

namespace attn {

struct SavedRun {
  std::string dir;
  Config model_config;
  Config run_config;
  TaskKind task = TaskKind::Classify;
  Vocabulary vocab;
  std::vector<std::string> labels;
  int64_t classes = 0;  // the head's: the labels, or relatedness's score bins
  int64_t max_len = 0;
  DType dtype = DType::F32;  // run.cfg's dtype
  std::unique_ptr<Generator> init, noise;
  std::unique_ptr<TaskModel> model;  // in evaluation mode, best weights loaded (null from read_saved_run_files)
};

// The run's files without the model: configs, task, vocabulary, labels and
// classes, each checked (`attn params --run`). Throws naming the missing or
// malformed file.
SavedRun read_saved_run_files(const std::string& dir);
// ... and the model with the weights loaded. Throws naming the missing or malformed file.
SavedRun load_saved_run(const std::string& dir, const std::string& weights_file = "best.safetensors");

}  // namespace attn
