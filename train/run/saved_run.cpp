#include "attn/train/run/saved_run.h"
#include "attn/train/run/run_settings.h"

#include "attn/engine/error.h"
#include "attn/models/model_config_check.h"
#include "attn/nn/safetensors.h"
#include "attn/train/finite_check.h"
#include "attn/util/atomic_file.h"
#include "attn/util/task_kind.h"
#include "attn/train/checkpoint.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/reinforce/selection_policy.h"

namespace attn {

SavedRun read_saved_run_files(const std::string& dir) {
  SavedRun r;
  r.dir = dir;
  const RunFiles run{dir};
  // A translation run has no labels and another model: said before the missing labels.txt.
  ATTN_CHECK(!path_exists(run.run_config()) || Config::load(run.run_config()).get("task", "") != "translate", "run",
             "'", dir, "' is a translation run: attn translate and attn eval read it (docs/training.md, \"Translation\")");
  for (const std::string& path : {run.model_config(), run.run_config(), run.vocab(), run.labels()})
    ATTN_CHECK(path_exists(path), "run", "'", dir, "' is not a run folder: ", path, " is missing");
  r.model_config = Config::load(run.model_config());
  check_model_config(r.model_config, "the model config '" + run.model_config() + "'");
  r.run_config = Config::load(run.run_config());
  // An empty or damaged run.cfg is an error, never a run with default settings.
  ATTN_CHECK(r.run_config.has("task"), "run", run.run_config(),
             " has no task line: the file is empty or damaged (attn train writes it)");
  // A value the file's reader refuses is named with the file it came from.
  try {
    r.task = task_from_name(r.run_config.get("task", "classify"));
    r.max_len = r.run_config.get_int("max_len", 0);
    // Runs written before the setting existed are float32.
    r.dtype = training_dtype_from_name(r.run_config.get("dtype", "float32"));
  } catch (const Error& e) {
    throw Error("run: " + run.run_config() + ": " + e.user_message() + " (attn train writes it; was it edited?)");
  }
  r.vocab = Vocabulary::load(run.vocab());
  if (task_model_config_keys().get_bool(r.model_config, "char_cnn")) {
    ATTN_CHECK(path_exists(run.chars()), "run", "'", dir, "' is not a run folder of its char_cnn model: ",
               run.chars(), " is missing");
    r.vocab.set_characters(CharVocabulary::load(run.chars()));
  }
  r.labels = read_labels(run);
  ATTN_CHECK(r.task == TaskKind::Relatedness || r.labels.size() >= 2, "run", run.labels(), " names ",
             r.labels.size(), " label(s); a ", task_name(r.task),
             " run has at least 2 (one per line): the file is empty or damaged");
  r.classes = r.task == TaskKind::Relatedness ? relatedness_classes(r.model_config)
                                              : static_cast<int64_t>(r.labels.size());
  return r;
}

SavedRun load_saved_run(const std::string& dir, const std::string& weights_file) {
  SavedRun r = read_saved_run_files(dir);
  const RunFiles run{dir};
  r.init = std::make_unique<Generator>(1);
  r.noise = std::make_unique<Generator>(2);
  r.model = std::make_unique<TaskModel>(r.model_config, r.task, r.vocab.size(), r.classes, r.dtype, *r.init, *r.noise,
                                       r.vocab.characters() ? r.vocab.characters()->size() : 0);
  const std::string weights = run.file(weights_file);
  ATTN_CHECK(path_exists(weights), "run", "no weights at '", weights, "' (has the run finished an evaluation?)");
  std::map<std::string, std::string> metadata;
  const std::map<std::string, Tensor> state = load_model_weights(weights, &metadata);
  require_finite(state, "'" + weights + "'");  // a NaN model would answer class 0 for everything
  try {
    load_into_module(*r.model, state, true);
  } catch (const Error& e) {
    throw Error("run: the weights in " + weights + " do not fit the model " + run.model_config() +
                " describes (was it edited or replaced?): " + e.user_message());
  }
  apply_selection_policy(r.model->encoder(), metadata, weights);
  r.model->set_training(false);
  return r;
}

}  // namespace attn
