#include "attn/models/char_cnn.h"

#include <cmath>
#include <limits>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {

CharCnn::CharCnn(const CharCnnOptions& o, Generator& init, Generator& noise, DType dtype)
    : filters_(o.filters),
      // The unknown character's row stays zero: no training word has it.
      embedding_(o.alphabet, o.char_dim, init, true, 0, 1, dtype),
      dropout_(o.keep_prob, noise),
      conv_(o.width, o.char_dim, o.filters, init, dtype) {
  ATTN_CHECK(o.alphabet >= 2, "char_cnn", "the character alphabet has ", o.alphabet,
             " entries; it needs at least padding and unknown (2)");
  // Ma and Hovy (2016, Sec. 3.1): character embeddings drawn from
  // U[-sqrt(3 / dim), +sqrt(3 / dim)]; the padding and unknown rows stay 0.
  const double a = std::sqrt(3.0 / static_cast<double>(o.char_dim));
  Tensor rows = rand_uniform({o.alphabet, o.char_dim}, -a, a, init, dtype);
  const Tensor special = narrow(rows, 0, 0, 2);
  copy_into(special, zeros({2, o.char_dim}, dtype));
  copy_into(embedding_.weight, rows);
  register_module("embedding", embedding_);
  register_module("dropout", dropout_);
  register_module("conv", conv_);
}

Tensor CharCnn::forward(const Tensor& chars) const {
  ATTN_CHECK(chars.defined(), "char_cnn", "no character ids: char_cnn = true needs them (a vocabulary with characters)");
  ATTN_CHECK(chars.dim() == 3 && chars.dtype() == DType::I64, "char_cnn", "character ids must be int64 [B, n, L], got ",
             dtype_name(chars.dtype()), " ", shape_str(chars.shape()));
  const int64_t b = chars.size(0), n = chars.size(1), len = chars.size(2);
  const Tensor zero = zeros({}, DType::I64, chars.device());
  const Tensor words = reshape(chars, {b * n, len});
  const Tensor valid = ne(words, zero);  // [B n, L] uint8
  // Dropout before the reshape: its noise may be keyed on the batch's examples (the leading axis).
  const Tensor embedded = dropout_(embedding_(chars));  // [B, n, L, dim]
  const Tensor x = reshape(embedded, {b * n, len, embedded.size(3)});
  const Tensor h = conv_.forward(x, valid, Activation::Tanh);
  const Tensor padded = eq(unsqueeze(valid, -1), zeros({}, DType::U8, chars.device()));
  const Tensor pooled = max(masked_fill(h, padded, -std::numeric_limits<double>::infinity()), {1});  // [B n, F]
  // A word without characters has only -inf to pool: it reads 0 instead.
  const Tensor has_chars = ne(narrow(words, 1, 0, 1), zero);  // [B n, 1]: batching fills a word from its start
  const Tensor feature = where(has_chars, pooled, zeros({}, h.dtype(), h.device()));
  return reshape(feature, {b, n, filters_});
}

}  // namespace attn
