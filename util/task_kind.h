// The kinds of task: what a dataset holds and what a head predicts. It
// lives in the engine because both train/data and models speak it and
// neither may include the other.
#pragma once
#include <string>

namespace attn {

enum class TaskKind { Classify, Pair, Relatedness, Tag, Srl, Locate, Translate };

TaskKind task_from_name(const std::string& name);  // classify, pair, relatedness, tag, srl, locate, translate
const char* task_name(TaskKind task);

// Whether the task predicts one tag per token (tag, srl): the tasks that share
// the tagging head, the per-token loss and the tag batches.
bool tags_tokens(TaskKind task);

}  // namespace attn
