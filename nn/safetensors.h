// Reading and writing tensors in the safetensors format, so weights and
// inputs can be exchanged with other tools (PyTorch, NumPy) without pickle.
//
// Layout: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"key": "value"}}   (metadata optional)
// then the raw little-endian, row-major data. Offsets are relative to the
// start of the data section; the tensors must cover it exactly (no holes, no
// overlaps). attn reads and writes the dtypes F32, F64, U8 and I64.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/nn/module.h"

namespace attn {

// Writes `tensors` (in the given order; names unique and non-empty, not
// "__metadata__") and `metadata` to `path`. Atomic: the file is written to
// path + ".tmp.<pid>", flushed to disk and renamed over `path`, so a failed
// save never leaves a half-written file and an existing file stays intact.
// Non-contiguous tensors and views are written in row-major order.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of `path` into new contiguous CPU tensors. Every header
// field is checked against the file before any data is read; a bad file
// throws attn::Error naming the file and the problem (missing, truncated,
// malformed JSON, unsupported dtype, byte count not matching the shape,
// overlapping or out-of-order offsets, holes or trailing bytes).
std::map<std::string, Tensor> load_safetensors(const std::string& path,
                                               std::map<std::string, std::string>* metadata = nullptr);

// Copies each named state tensor of `m` (Module::named_state) from `tensors`
// in place, so parameter handles an optimizer already holds keep working.
// Converts float32 <-> float64 when the checkpoint's dtype differs. Throws
// naming a missing tensor, a shape mismatch, or (strict) a tensor the model
// does not have; nothing is copied unless every check passes.
void load_into_module(Module& m, const std::map<std::string, Tensor>& tensors, bool strict = true);

}  // namespace attn
