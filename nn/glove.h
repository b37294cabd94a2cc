// GloVe's text format: one word per line followed by its vector, fields
// separated by single spaces ("the 0.418 0.24968 -0.41242 ...").
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace attn {

struct GloveVectors {
  int64_t dim = 0;
  std::unordered_map<std::string, std::vector<float>> vectors;
};

// The largest magnitude accepted in a vector. Trained embeddings stay far
// below it (GloVe's largest components are about 5); anything bigger is
// corrupt, and at 3e38 (finite in float32, below FLT_MAX 3.4e38) the first
// product or square of the embedding in the model is already infinite and the
// loss NaN at step 0. At 1e6 even a value's fourth power (a score that
// multiplies two projections of the embedding, then squared in a layer
// norm's variance) stays below 1e24, far from float32's limit.
constexpr double kGloveMaxMagnitude = 1e6;

// Reads the vectors of the words in `wanted` (all words when null). Lines end
// in LF, CRLF or CR alone; a UTF-8 byte-order mark is dropped. A line whose
// vector has the wrong length, or a field that is not a number, is not finite
// (nan, inf) or exceeds kGloveMaxMagnitude, throws attn::Error naming the file
// and the line number. Subnormal values (1e-40) are kept; smaller ones round
// to zero.
GloveVectors load_glove(const std::string& path, const std::unordered_set<std::string>* wanted = nullptr);

}  // namespace attn
