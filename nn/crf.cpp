#include "attn/nn/crf.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/ops/crf/crf.h"

namespace attn {

Crf::Crf(int64_t tags, Generator& gen, DType dtype) {
  ATTN_CHECK(tags > 0, "Crf", "needs at least one tag, got ", tags);
  const double a = std::sqrt(6.0 / (2.0 * static_cast<double>(tags + 2)));
  transitions = register_parameter("transitions", rand_uniform({tags, tags}, -a, a, gen, dtype));
  start = register_parameter("start", rand_uniform({tags}, -a, a, gen, dtype));
  end = register_parameter("end", rand_uniform({tags}, -a, a, gen, dtype));
}

Tensor Crf::nll(const Tensor& emissions, const Tensor& tags, const Tensor& mask) const {
  return crf_nll(emissions, tags, mask, transitions, start, end);
}

Tensor Crf::decode(const Tensor& emissions, const Tensor& mask) const {
  return crf_viterbi(emissions, mask, transitions, start, end);
}

}  // namespace attn
