// The four kinds of task the heads serve.
#pragma once
#include <string>

namespace attn {

enum class TaskKind { Classify, Pair, Relatedness, Tag };

TaskKind task_from_name(const std::string& name);  // classify, pair, relatedness, tag
const char* task_name(TaskKind task);

}  // namespace attn
