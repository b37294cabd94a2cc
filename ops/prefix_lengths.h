// Each sentence's length from a prefix mask (its valid tokens first), for
// the ops that walk sentences over exactly their valid tokens (the recurrent
// and SRU sequence ops). Read on the CPU: the lengths drive host loops.
#pragma once
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

// mask: uint8 [B, n], or undefined for every token valid (every length n).
// A mask with a valid token after padding is an error naming `op`.
std::vector<int64_t> prefix_lengths(const Tensor& mask, int64_t B, int64_t n, const char* op);

}  // namespace attn
