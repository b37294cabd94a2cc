// How a saved model's selection policy (ReSAN's RSS modules) was evaluated.
// A dev evaluation during the warm-up runs with every token selected; the
// checkpoint it produces must be tested and used the same way, not with a
// policy that was never trained. best.safetensors records the mode in its
// metadata ("selection_policy": "select_all" or "learned") and every reader
// (the test evaluation, `attn eval`, `attn predict`) applies it.
#pragma once
#include <map>
#include <string>

#include "attn/models/encoder.h"

namespace attn {

// {"selection_policy": ...} for an encoder with a policy, {} otherwise.
std::map<std::string, std::string> selection_policy_metadata(const Encoder& encoder);

// Sets the encoder's mode from a weights file's metadata. A file without the
// key (written before it existed) means the learned policy; an unknown value
// is an error naming `path`.
void apply_selection_policy(Encoder& encoder, const std::map<std::string, std::string>& metadata,
                            const std::string& path);

}  // namespace attn
