// Word embeddings. Rows of the padding and unknown ids are fixed at zero
// (their lookups are zero and receive no gradient); an unk_id of -1 makes the
// unknown word an ordinary trainable row. Rows start U(-0.05, 0.05)
// and can be overwritten from GloVe vectors; a frozen table is a buffer, not a
// parameter. State: "weight".
#pragma once
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/nn/module.h"

namespace attn {

class Embedding : public Module {
 public:
  Embedding(int64_t vocab_size, int64_t dim, Generator& gen, bool trainable = true, int64_t pad_id = 0,
            int64_t unk_id = 1, DType dtype = DType::F32);
  // ids int64 [...] -> [..., dim].
  Tensor forward(const Tensor& ids) const;
  Tensor operator()(const Tensor& ids) const { return forward(ids); }

  // Copies the GloVe vector of words[i] into row i where GloVe has it; the
  // rest keep their random rows. Returns how many rows were found.
  int64_t load_glove(const std::string& path, const std::vector<std::string>& words);

  Tensor weight;
  int64_t pad_id, unk_id;
};

}  // namespace attn
