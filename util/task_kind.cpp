#include "attn/util/task_kind.h"

#include "attn/util/named_values.h"

namespace attn {

namespace {
const NamedValue<TaskKind> kTaskNames[] = {
    {TaskKind::Classify, "classify"}, {TaskKind::Pair, "pair"}, {TaskKind::Relatedness, "relatedness"},
    {TaskKind::Tag, "tag"}, {TaskKind::Srl, "srl"}, {TaskKind::Locate, "locate"},
    {TaskKind::Translate, "translate"}};
}  // namespace

TaskKind task_from_name(const std::string& name) { return value_from_name(kTaskNames, name, "task", "task"); }

const char* task_name(TaskKind task) { return name_of_value(kTaskNames, task); }

bool tags_tokens(TaskKind task) { return task == TaskKind::Tag || task == TaskKind::Srl; }

}  // namespace attn
