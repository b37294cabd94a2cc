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

// Reads the vectors of the words in `wanted` (all words when null). A line
// whose vector has the wrong length or a field that is not a number throws
// attn::Error naming the file and the line number.
GloveVectors load_glove(const std::string& path, const std::unordered_set<std::string>* wanted = nullptr);

}  // namespace attn
