#include "attn/util/task_kind.h"

#include "attn/util/error.h"

namespace attn {

TaskKind task_from_name(const std::string& name) {
  if (name == "classify") return TaskKind::Classify;
  if (name == "pair") return TaskKind::Pair;
  if (name == "relatedness") return TaskKind::Relatedness;
  if (name == "tag") return TaskKind::Tag;
  ATTN_CHECK(false, "task", "unknown task '", name, "' (known: classify, pair, relatedness, tag)");
  return TaskKind::Classify;
}

const char* task_name(TaskKind task) {
  switch (task) {
    case TaskKind::Classify: return "classify";
    case TaskKind::Pair: return "pair";
    case TaskKind::Relatedness: return "relatedness";
    case TaskKind::Tag: return "tag";
  }
  return "?";
}

}  // namespace attn
