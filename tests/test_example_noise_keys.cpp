// Example-keyed noise (ops/dropout/dropout_example_keys.h): inside a scope,
// each row of the leading dimension draws its own documented stream, so a
// batch cut into slices (one per data-parallel process) drops and samples
// exactly what the whole batch does; shapes without the batch in front are
// refused; scopes nest.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/dropout/dropout_stream.h"
#include "attn/ops/dropout/dropout_example_keys.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

std::vector<double> row_of(const std::vector<double>& all, int64_t row, int64_t len) {
  return {all.begin() + row * len, all.begin() + (row + 1) * len};
}

// Row r of the output is the stream row_stream_key(seed, keys[r]) at each
// index of the row, across the kernel's parallel chunks.
TEST(ExampleNoiseKeys, EachRowDrawsItsExamplesStream) {
  const double p = 0.3;
  const int64_t rows = 3, len = 16384 + 999;  // a row longer than one chunk
  const std::vector<uint64_t> keys = {7, 123456789, 0};
  Generator gen(5), replay(5);
  std::vector<double> y;
  {
    ExampleNoiseKeys scope(keys);
    y = dropout(ones({rows, len}, DType::F64), p, gen).to_vector();
  }
  const uint64_t seed = replay.derive_seed();
  const uint64_t threshold = static_cast<uint64_t>(std::llround(p * dropout_stream::kTwoTo32));
  int64_t mismatches = 0, dropped = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t key = dropout_stream::row_stream_key(seed, keys[static_cast<size_t>(r)]);
    for (int64_t j = 0; j < len; ++j) {
      const bool keep = dropout_stream::draw_u32(key, j) >= threshold;
      mismatches += keep != (y[static_cast<size_t>(r * len + j)] != 0);
      dropped += !keep;
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(dropped, 0);
}

// The whole batch with keys {10, 11, 12, 13} against the slices {10, 11}
// and {12, 13} drawn from generators in the same state: the same masks,
// because an example's noise depends on its key, not on its row.
TEST(ExampleNoiseKeys, SlicesOfABatchDrawWhatTheWholeBatchDraws) {
  Generator data(2);
  const Tensor x = rand_uniform({4, 5, 7}, 0.5, 1.5, data, DType::F64);
  const Tensor probs = rand_uniform({4, 9}, 0.0, 1.0, data, DType::F64);
  std::vector<double> whole_drop, whole_sample;
  {
    ExampleNoiseKeys scope({10, 11, 12, 13});
    Generator gen(9);
    whole_drop = dropout(x, 0.4, gen).to_vector();
    whole_sample = bernoulli(probs, gen).to_vector();
  }
  const std::vector<std::vector<uint64_t>> shares = {{10, 11}, {12, 13}};
  for (int64_t s = 0; s < 2; ++s) {
    ExampleNoiseKeys scope(shares[static_cast<size_t>(s)]);
    Generator gen(9);
    EXPECT_EQ(dropout(narrow(x, 0, 2 * s, 2), 0.4, gen).to_vector(),
              std::vector<double>(whole_drop.begin() + s * 70, whole_drop.begin() + (s + 1) * 70))
        << "share " << s;
    EXPECT_EQ(bernoulli(narrow(probs, 0, 2 * s, 2), gen).to_vector(),
              std::vector<double>(whole_sample.begin() + s * 18, whole_sample.begin() + (s + 1) * 18))
        << "share " << s;
  }
  // An example's row moves with its key: keys swapped, rows swapped.
  ExampleNoiseKeys swapped({11, 10, 13, 12});
  Generator gen(9);
  const std::vector<double> y = dropout(ones({4, 35}, DType::F64), 0.4, gen).to_vector();
  Generator again(9);
  std::vector<double> z;
  {
    ExampleNoiseKeys scope({10, 11, 12, 13});
    z = dropout(ones({4, 35}, DType::F64), 0.4, again).to_vector();
  }
  EXPECT_EQ(row_of(y, 0, 35), row_of(z, 1, 35));
  EXPECT_EQ(row_of(y, 1, 35), row_of(z, 0, 35));
  EXPECT_NE(row_of(z, 0, 35), row_of(z, 1, 35));
}

TEST(ExampleNoiseKeys, ATensorWithoutTheBatchInFrontIsRefused) {
  ExampleNoiseKeys scope({1, 2, 3});
  Generator gen(1);
  try {
    dropout(ones({2, 3}), 0.5, gen);
    FAIL() << "a [2, 3] tensor under 3 example keys was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("leading dimension"), std::string::npos) << what;
    EXPECT_NE(what.find("[2, 3]"), std::string::npos) << what;
  }
  EXPECT_THROW(bernoulli(full({}, 0.5), gen), Error);
}

TEST(ExampleNoiseKeys, ScopesNestAndEndOnTheirThread) {
  EXPECT_EQ(ExampleNoiseKeys::active(), nullptr);
  {
    ExampleNoiseKeys outer({1, 2});
    {
      ExampleNoiseKeys inner({5});
      ASSERT_NE(ExampleNoiseKeys::active(), nullptr);
      EXPECT_EQ(*ExampleNoiseKeys::active(), std::vector<uint64_t>{5});
    }
    EXPECT_EQ(*ExampleNoiseKeys::active(), (std::vector<uint64_t>{1, 2}));
  }
  EXPECT_EQ(ExampleNoiseKeys::active(), nullptr);
  // Outside a scope the whole tensor is one stream, as before.
  Generator gen(4), replay(4);
  const std::vector<double> y = dropout(ones({2, 50}, DType::F64), 0.5, gen).to_vector();
  const uint64_t key = dropout_stream::stream_key(replay.derive_seed());
  const uint64_t threshold = static_cast<uint64_t>(std::llround(0.5 * dropout_stream::kTwoTo32));
  for (int64_t i = 0; i < 100; ++i)
    EXPECT_EQ(dropout_stream::draw_u32(key, i) >= threshold, y[static_cast<size_t>(i)] != 0) << i;
}

}  // namespace
}  // namespace attn
