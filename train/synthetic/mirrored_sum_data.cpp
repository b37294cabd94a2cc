#include "attn/train/synthetic/mirrored_sum_data.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "attn/engine/error.h"
#include "attn/ops/dropout/dropout_stream.h"

namespace attn {

void check_mirrored_sum_spec(const MirroredSumSpec& spec) {
  ATTN_CHECK(spec.length >= 2, "mirrored sum", "the sequence length N must be at least 2, got ", spec.length);
  ATTN_CHECK(spec.dim >= 1, "mirrored sum", "the vector dimension d must be at least 1, got ", spec.dim);
  ATTN_CHECK(spec.k >= 1 && spec.k < spec.length, "mirrored sum", "K must be in 1..N-1 = 1..", spec.length - 1,
             ", got ", spec.k);
}

namespace {

// The stream of one sample: the seed, the split and the index each pass
// through a bijective mix, so neighbouring indices, splits and seeds give
// unrelated streams.
uint64_t sample_key(const MirroredSumSpec& spec, MirroredSumSplit split, int64_t index) {
  using dropout_stream::mix64;
  const uint64_t split_key = mix64(dropout_stream::stream_key(spec.seed) ^ mix64(static_cast<uint64_t>(split) + 1));
  return mix64(split_key ^ mix64(static_cast<uint64_t>(index) ^ 0x3C6EF372FE94F82BULL));
}

double entry_of(uint64_t key, int64_t e) {
  const uint64_t word = dropout_stream::mix64(key + (static_cast<uint64_t>(e) + 1) * 0x9E3779B97F4A7C15ULL);
  return static_cast<double>(word >> 11) * 0x1.0p-53;  // the top 53 bits: exact in a double, < 1
}

}  // namespace

double mirrored_sum_entry(const MirroredSumSpec& spec, MirroredSumSplit split, int64_t index, int64_t e) {
  return entry_of(sample_key(spec, split, index), e);
}

MirroredSumBatch mirrored_sum_batch(const MirroredSumSpec& spec, MirroredSumSplit split, int64_t first,
                                    int64_t count, DType dtype) {
  check_mirrored_sum_spec(spec);
  ATTN_CHECK(first >= 0 && count >= 1, "mirrored sum", "a batch needs first >= 0 and count >= 1, got ", first, " and ",
             count);
  const int64_t n = spec.length, d = spec.dim;
  std::vector<double> x(static_cast<size_t>(count * n * d)), y(static_cast<size_t>(count * d), 0.0);
  for (int64_t b = 0; b < count; ++b) {
    const uint64_t key = sample_key(spec, split, first + b);
    double* xb = x.data() + b * n * d;
    for (int64_t e = 0; e < n * d; ++e) xb[e] = entry_of(key, e);
    double* yb = y.data() + b * d;
    for (int64_t i = 0; i < spec.k; ++i) {  // 0-based: a_{i+1} (Hadamard) a_{N-i}
      const double* front = xb + i * d;
      const double* back = xb + (n - 1 - i) * d;
      for (int64_t f = 0; f < d; ++f) yb[f] += front[f] * back[f];
    }
  }
  return {from_vector(x, {count, n, d}, dtype), ones({count, n}, DType::U8), from_vector(y, {count, d}, dtype)};
}

double mirrored_sum_target_mean(const MirroredSumSpec& spec) {
  check_mirrored_sum_spec(spec);
  double mean = 0;
  for (int64_t i = 1; i <= spec.k; ++i) mean += i == spec.length - i + 1 ? 1.0 / 3.0 : 0.25;
  return mean;
}

namespace {

// sum over the distinct terms of c^2 * (the middle term's value or a pair's),
// c = how often the sum counts the term.
double sum_over_terms(const MirroredSumSpec& spec, double pair_value, double middle_value) {
  check_mirrored_sum_spec(spec);
  std::map<std::pair<int64_t, int64_t>, int64_t> times;  // unordered pair (1-based) -> how often the sum counts it
  for (int64_t i = 1; i <= spec.k; ++i) {
    const int64_t j = spec.length - i + 1;
    ++times[{std::min(i, j), std::max(i, j)}];
  }
  double total = 0;
  for (const auto& [pair, c] : times)
    total += static_cast<double>(c * c) * (pair.first == pair.second ? middle_value : pair_value);
  return total;
}

}  // namespace

double mirrored_sum_mean_predictor_mse(const MirroredSumSpec& spec) {
  return sum_over_terms(spec, 7.0 / 144.0, 4.0 / 45.0);
}

double mirrored_sum_linear_predictor_mse(const MirroredSumSpec& spec) {
  return sum_over_terms(spec, 1.0 / 144.0, 1.0 / 180.0);
}

}  // namespace attn
