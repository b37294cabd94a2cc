// The settings that define a training run, as `key = value` lines in the run
// folder's run.cfg. `--resume` refuses to continue a run whose settings
// changed (each difference listed); the safe ones are not recorded here and
// may change: epochs, max-steps, eval-every, checkpoint-every, log-every,
// device, quiet, detect-anomaly, cache. (The model config is model.cfg,
// compared likewise.)
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attn/models/config.h"
#include "attn/train/trainer.h"

namespace attn {

// Every recorded key (run.cfg spelling, e.g. "max_len"; the flag is
// "--max-len").
const std::vector<std::string>& run_setting_keys();
// run.cfg's dtype: float32 or float64 (anything else is an error).
DType training_dtype_from_name(const std::string& name);

// The recorded settings of `o`, as run.cfg holds them.
Config run_settings(const TrainOptions& o);

// Sets each field of `o` recorded in `stored` unless `keep(key)` (a flag the
// user gave explicitly); keys missing from `stored` (an older run) are left.
void apply_run_settings(const Config& stored, TrainOptions& o, const std::function<bool(const std::string&)>& keep);

// One line per setting that differs between the stored run and `o` (stored
// keys only), and per model.cfg key that differs; empty when they agree.
std::vector<std::string> run_differences(const Config& stored_run, const Config& stored_model, const TrainOptions& o);

}  // namespace attn
