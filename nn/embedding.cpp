#include "attn/nn/embedding.h"

#include <unordered_set>

#include "attn/engine/error.h"
#include "attn/nn/glove.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/index/index.h"
#include "attn/ops/view/view.h"

namespace attn {

Embedding::Embedding(int64_t vocab_size, int64_t dim, Generator& gen, bool trainable, int64_t pad, int64_t unk,
                     DType dtype)
    : pad_id(pad), unk_id(unk) {
  ATTN_CHECK(vocab_size > 0 && dim > 0, "Embedding", "vocabulary size and dimension must be positive");
  Tensor w = rand_uniform({vocab_size, dim}, -0.05, 0.05, gen, dtype);
  for (int64_t id : {pad, unk})
    if (id >= 0 && id < vocab_size)
      for (int64_t j = 0; j < dim; ++j) write_element(w, id * dim + j, 0.0);
  weight = trainable ? register_parameter("weight", w) : register_buffer("weight", w);
}

Tensor Embedding::forward(const Tensor& ids) const {
  Tensor rows = embedding(weight, ids);
  Tensor fixed = unsqueeze(eq(ids, full({}, static_cast<double>(pad_id), DType::I64, ids.device())), -1);
  rows = masked_fill(rows, fixed, 0.0);
  if (unk_id < 0) return rows;
  Tensor unknown = unsqueeze(eq(ids, full({}, static_cast<double>(unk_id), DType::I64, ids.device())), -1);
  return masked_fill(rows, unknown, 0.0);
}

int64_t Embedding::load_glove(const std::string& path, const std::vector<std::string>& words) {
  ATTN_CHECK(static_cast<int64_t>(words.size()) == weight.size(0), "Embedding::load_glove", words.size(),
             " words for ", weight.size(0), " rows");
  std::unordered_set<std::string> wanted(words.begin(), words.end());
  GloveVectors glove = attn::load_glove(path, &wanted);
  const int64_t dim = weight.size(1);
  ATTN_CHECK(glove.dim == dim, "Embedding::load_glove", "'", path, "' has ", glove.dim,
             "-dimensional vectors, the embedding has ", dim);
  int64_t found = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(words.size()); ++i) {
    if (i == pad_id || i == unk_id) continue;
    auto it = glove.vectors.find(words[i]);
    if (it == glove.vectors.end()) continue;
    for (int64_t j = 0; j < dim; ++j) write_element(weight, i * dim + j, it->second[j]);
    ++found;
  }
  return found;
}

}  // namespace attn
