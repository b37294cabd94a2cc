// One SRL input as a user types it: "words<TAB>K", the predicate being word
// K (1-based). `attn predict` and `attn explain` read srl runs' lines so.
#pragma once
#include <string>

#include "attn/train/data/dataset.h"

namespace attn {

// The lowercased words (split at whitespace, as the conll05 loader reads
// them) and Example::predicate = K - 1.
// Throws naming `where` ("stdin line 3") when the tab is missing or K is not
// an integer in [1, number of words].
Example srl_input(const std::string& line, const std::string& where);

}  // namespace attn
