#include "train/saved_run.h"

#include <fstream>

#include "engine/error.h"
#include "nn/safetensors.h"
#include "train/finite_check.h"
#include "engine/util/atomic_file.h"
#include "train/checkpoint.h"

namespace attn {

SavedRun load_saved_run(const std::string& dir, const std::string& weights_file) {
  SavedRun r;
  r.dir = dir;
  for (const char* f : {"model.cfg", "run.cfg", "vocab.txt", "labels.txt"})
    ATTN_CHECK(file_exists(dir + "/" + f), "run", "'", dir, "' is not a run folder: ", f, " is missing");
  r.model_config = Config::load(dir + "/model.cfg");
  r.run_config = Config::load(dir + "/run.cfg");
  r.task = task_from_name(r.run_config.get("task", "classify"));
  r.max_len = r.run_config.get_int("max_len", 0);
  r.vocab = Vocabulary::load(dir + "/vocab.txt");
  std::ifstream labels(dir + "/labels.txt");
  for (std::string line; std::getline(labels, line);) r.labels.push_back(line);
  int64_t classes = r.task == TaskKind::Relatedness ? r.model_config.get_int("relatedness_classes", 5)
                                                    : static_cast<int64_t>(r.labels.size());
  r.init = std::make_unique<Generator>(1);
  r.noise = std::make_unique<Generator>(2);
  r.model = std::make_unique<TaskModel>(r.model_config, r.task, r.vocab.size(), classes, DType::F32, *r.init, *r.noise);
  const std::string weights = dir + "/" + weights_file;
  ATTN_CHECK(file_exists(weights), "run", "no weights at '", weights, "' (has the run finished an evaluation?)");
  const std::map<std::string, Tensor> state = load_model_weights(weights);
  require_finite(state, "'" + weights + "'");  // a NaN model would answer class 0 for everything
  load_into_module(*r.model, state, true);
  r.model->set_training(false);
  return r;
}

}  // namespace attn
