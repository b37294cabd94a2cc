// The mirrored summation task of the Multi-Scale Transformer paper (seed 003,
// "Hierarchical Multi-Scale or Flexible Multi-Scale", Fig. 2): a sequence of
// N vectors a_1..a_N in R^d, each entry drawn from U(0, 1), and the target
//   y = sum_{i=1..K} a_i (Hadamard) a_{N-i+1}      (a d-vector, 1 <= K < N).
//
// Samples are generated on the fly, never cached: entry e of sample `index`
// of `split` is a pure function of (seed, split, index, e) (a SplitMix64
// counter stream, ops/dropout/dropout_stream.h), so a sample is the same
// whatever the batch it is drawn in, its position in the batch, or the
// threads that build it, and the test split shares no stream with training.
#pragma once
#include <cstdint>

#include "attn/engine/tensor.h"

namespace attn {

enum class MirroredSumSplit : uint64_t { Train = 0, Test = 1 };

struct MirroredSumSpec {
  int64_t length = 100;  // N (the paper: 100)
  int64_t dim = 50;      // d (the paper: 50)
  int64_t k = 10;        // K, 1 <= K < N
  uint64_t seed = 1;
};

// Throws attn::Error naming the field unless N >= 2, d >= 1 and 1 <= K < N.
void check_mirrored_sum_spec(const MirroredSumSpec& spec);

// Entry e (= position * d + feature) of sample `index`: uniform in [0, 1),
// 53 random bits.
double mirrored_sum_entry(const MirroredSumSpec& spec, MirroredSumSplit split, int64_t index, int64_t e);

struct MirroredSumBatch {
  Tensor x;     // [count, N, d], the sequences
  Tensor mask;  // [count, N] uint8, all ones (every sequence is N long)
  Tensor y;     // [count, d], the targets
};

// Samples first .. first + count - 1 of `split`, on the CPU, in `dtype`
// (the target is summed in double and rounded once).
MirroredSumBatch mirrored_sum_batch(const MirroredSumSpec& spec, MirroredSumSplit split, int64_t first,
                                    int64_t count, DType dtype = DType::F32);

// E[y] per feature: 1/4 for each product of two independent entries, 1/3
// for the middle term a^2 of an odd N (counted as often as the sum counts it).
double mirrored_sum_target_mean(const MirroredSumSpec& spec);

// The test MSE of the best constant prediction, E[y] = K / 4 per feature: the
// variance of one target feature. Distinct pairs (i, N-i+1) with i != N-i+1
// contribute Var(uv) = 1/9 - 1/16 = 7/144 times the square of how often the
// sum counts them (twice when both i and N-i+1 are <= K, i.e. K > N/2); the
// middle term of an odd N is a^2, Var(u^2) = 1/5 - 1/9 = 4/45. A model that
// learns nothing lands here.
double mirrored_sum_mean_predictor_mse(const MirroredSumSpec& spec);

// The test MSE of the best prediction LINEAR in the inputs. Each product
// splits as uv = 1/4 + (u - 1/2)/2 + (v - 1/2)/2 + (u - 1/2)(v - 1/2): all but
// the last term are linear, and the last, uncorrelated with any linear
// function of the inputs, has variance 1/144 of Var(uv) = 7/144. The middle
// a^2 of an odd N leaves Var(u^2) - Cov(u^2, u)^2 / Var(u) = 4/45 - 1/12 =
// 1/180. So for an even N this is exactly 1/7 of the constant's MSE: a model
// that finds which positions the sum takes, and the weight of each, but no
// product, gets there; only below it has a model captured the products.
double mirrored_sum_linear_predictor_mse(const MirroredSumSpec& spec);

}  // namespace attn
