#include "attn/train/cli/model_flags.h"

#include "attn/models/config_schema_text.h"
#include "attn/models/encoder.h"
#include "attn/models/task_model.h"

namespace attn {

namespace {

struct Declaration {
  const ConfigSchema* table;
  const ConfigKey* key;
};

// Every table that declares `name`: the task model's first, then the encoders'.
std::vector<Declaration> declarations_of(const std::string& name) {
  std::vector<const ConfigSchema*> tables = {&task_model_config_keys()};
  for (const EncoderInfo& info : encoder_registry()) tables.push_back(&info.config_keys());
  std::vector<Declaration> found;
  for (const ConfigSchema* t : tables)
    if (const ConfigKey* k = t->find(name)) found.push_back({t, k});
  return found;
}

// "<doc> (config key K of A, B: int 1..65536, default 2; B 10)": the doc,
// type and range of the first table that marks the key as a flag, and every
// other table's default where it differs.
std::string flag_help(const std::string& name) {
  const std::vector<Declaration> ds = declarations_of(name);
  const Declaration* lead = &ds.front();
  for (const Declaration& d : ds)
    if (d.key->flag) {
      lead = &d;
      break;
    }
  // The value's kind leads, as `--help` shows it (util/cli_args.h): INT, FLOAT or VALUE.
  const ConfigType type = lead->key->type;
  std::string help = std::string(type == ConfigType::Int ? "INT: " : type == ConfigType::Float ? "FLOAT: " : "") +
                     lead->key->doc + " (config key " + name;
  if (ds.size() > 1 || lead->table != &task_model_config_keys()) {
    std::string owners;
    for (const Declaration& d : ds) owners += (owners.empty() ? "" : ", ") + d.table->owner();
    help += " of " + owners;
  }
  help += ": " + std::string(config_type_name(lead->key->type)) + " " + lead->key->allowed() + ", default " +
          lead->key->shown_default();
  std::string others;
  for (const Declaration& d : ds)
    if (d.key->shown_default() != lead->key->shown_default())
      others += (others.empty() ? "; " : ", ") + d.table->owner() + " " + d.key->shown_default();
  return help + others + ")";
}

}  // namespace

std::vector<ModelFlag> model_flags() {
  std::vector<const ConfigSchema*> tables;
  for (const EncoderInfo& info : encoder_registry()) tables.push_back(&info.config_keys());
  tables.push_back(&task_model_config_keys());
  std::vector<ModelFlag> flags;
  for (const ConfigSchema* t : tables)
    for (const ConfigKey& k : t->keys()) {
      if (!k.flag) continue;
      bool seen = false;
      for (const ModelFlag& f : flags) seen = seen || f.key == k.name;
      if (!seen) flags.push_back({k.flag_name(), k.name, flag_help(k.name)});
    }
  return flags;
}

std::string model_config_keys_help() {
  std::string text =
      "model config keys (a --config file holds `key = value` lines; the run keeps them in model.cfg):\n"
      "  every model (" + task_model_config_keys().owner() + "):\n" +
      config_keys_help(task_model_config_keys(), "    ");
  for (const EncoderInfo& info : encoder_registry()) {
    const ConfigSchema& keys = info.config_keys();
    if (keys.keys().empty()) text += "  " + std::string(info.name) + ": no keys\n";
    else text += "  " + std::string(info.name) + ":\n" + config_keys_help(keys, "    ");
  }
  return text;
}

}  // namespace attn
