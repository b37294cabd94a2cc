// The four kinds of task: what a dataset holds and what a head predicts. It
// lives in the engine because both train/data and models speak it and
// neither may include the other.
#pragma once
#include <string>

namespace attn {

enum class TaskKind { Classify, Pair, Relatedness, Tag, Translate };

TaskKind task_from_name(const std::string& name);  // classify, pair, relatedness, tag, translate
const char* task_name(TaskKind task);

}  // namespace attn
