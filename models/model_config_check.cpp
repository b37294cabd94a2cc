#include "attn/models/model_config_check.h"

#include "attn/engine/error.h"
#include "attn/models/encoder.h"
#include "attn/models/sentence_locator.h"
#include "attn/models/task_model.h"

namespace attn {

std::vector<const ConfigSchema*> model_config_tables(const std::string& encoder) {
  std::vector<const ConfigSchema*> tables = {&task_model_config_keys(), &sentence_locator_config_keys()};
  if (const EncoderInfo* info = find_encoder(encoder)) tables.push_back(&info->config_keys());
  return tables;
}

namespace {

std::string known_keys(const std::vector<const ConfigSchema*>& tables) {
  std::string known;
  for (const ConfigSchema* t : tables)
    for (const ConfigKey& k : t->keys()) known += (known.empty() ? "" : ", ") + k.name;
  return known;
}

// Whether some table declares the key; checks the value against each that does.
bool check_against(const std::vector<const ConfigSchema*>& tables, const std::string& key, const std::string& value) {
  bool declared = false;
  for (const ConfigSchema* t : tables)
    if (const ConfigKey* row = t->find(key)) {
      check_config_value(*row, value, t->owner());
      declared = true;
    }
  return declared;
}

}  // namespace

void check_model_config(const Config& config, const std::string& what) {
  const auto& entries = config.entries();
  const auto named = entries.find("encoder");
  // The encoder's own name first: the tables to check the rest against follow from it.
  const std::string encoder = named == entries.end() ? kDefaultEncoder : named->second;
  if (!find_encoder(encoder)) {
    std::string known;
    for (const EncoderInfo& info : encoder_registry()) known += (known.empty() ? "" : ", ") + std::string(info.name);
    ATTN_CHECK(false, "config", "unknown encoder '", encoder, "' (known: ", known, ")");
  }
  const std::vector<const ConfigSchema*> tables = model_config_tables(encoder);
  std::string unknown;
  for (const auto& [key, value] : entries)
    if (!check_against(tables, key, value)) unknown += (unknown.empty() ? "" : ", ") + key;
  ATTN_CHECK(unknown.empty(), "config", what, " does not know the key(s): ", unknown, " (encoder ", encoder,
             " and the task model know: ", known_keys(tables), ")");
}

void check_model_config_value(const std::string& encoder, const std::string& key, const std::string& value) {
  const std::vector<const ConfigSchema*> tables = model_config_tables(encoder);
  ATTN_CHECK(check_against(tables, key, value), "config", "encoder ", encoder, " has no config key '", key,
             "' (known: ", known_keys(tables), ")");
}

}  // namespace attn
