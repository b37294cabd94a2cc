// The Bi-LSTM and Bi-GRU baselines (models/birnn.h): float64 gradcheck end to
// end in both cell forms with padding, empty and one-token sentences;
// padding invariance; each direction sees only its side of the sentence;
// float32 finite at inputs of 1e30.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/copy.h"
#include "attn/models/birnn.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

struct Kind {
  RecurrentCell cell;
  CellForm form;
  const char* name;
};
const Kind kKinds[] = {{RecurrentCell::Lstm, CellForm::TensorFlow, "lstm tensorflow"},
                       {RecurrentCell::Lstm, CellForm::PyTorch, "lstm pytorch"},
                       {RecurrentCell::Gru, CellForm::TensorFlow, "gru tensorflow"},
                       {RecurrentCell::Gru, CellForm::PyTorch, "gru pytorch"}};

TEST(BiRnn, GradcheckAllParametersAndInputsWithPaddingEmptyAndOneToken) {
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    Generator gen(11);
    BiRnn model(3, 2, k.cell, k.form, Activation::Elu, gen, DType::F64);
    Tensor x = random_input({3, 4, 3}, 12);
    Tensor mask = length_mask({4, 1, 0}, 4);
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
  }
}

TEST(BiRnn, PaddedPositionsChangeNoValidOutput) {
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    Generator gen(13);
    BiRnn model(3, 4, k.cell, k.form, Activation::Relu, gen, DType::F64);
    expect_padding_invariant(model, random_input({3, 5, 3}, 14), length_mask({5, 2, 0}, 5));
  }
}

// The forward half of token t reads tokens 0..t, the backward half tokens
// t..len-1: editing token 2 of 5 moves the forward half only from token 2 on
// and the backward half only up to token 2.
TEST(BiRnn, EachDirectionSeesItsSideOnly) {
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    Generator gen(15);
    const int64_t H = 3, n = 5, edit = 2;
    BiRnn model(2, H, k.cell, k.form, Activation::Relu, gen, DType::F64);
    Tensor x = random_input({1, n, 2}, 16).detach();
    Tensor mask = length_mask({n}, n);
    const Tensor a = model.encode(x, mask).tokens;
    Tensor changed = clone(x);
    write_element(changed, edit * 2, 2.5);
    const Tensor b = model.encode(changed, mask).tokens;
    expect_each_direction_sees_its_side(a, b, edit, H);
  }
}

TEST(BiRnn, Float32FiniteAtHugeInputs) {
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    Generator gen(17);
    BiRnn model(4, 3, k.cell, k.form, Activation::Relu, gen, DType::F32);
    for (double big : {1e30, -1e30}) {
      Tensor x = full({3, 6, 4}, big, DType::F32).set_requires_grad(true);
      EncoderOutput o = model.encode(x, length_mask({6, 1, 0}, 6));
      (sum(o.tokens) + sum(o.sentence)).backward();
      for (double v : o.tokens.to_vector()) ASSERT_TRUE(std::isfinite(v));
      for (double v : o.sentence.to_vector()) ASSERT_TRUE(std::isfinite(v));
      for (const Tensor& p : model.parameters())
        for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
      for (const Tensor& p : model.parameters()) p.zero_grad();
    }
  }
}

TEST(BiRnn, RegisteredWithTheirTables) {
  for (const char* name : {"bilstm", "bigru"}) {
    const EncoderInfo* info = find_encoder(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->config_keys().find("hidden")->default_value, "300");
    EXPECT_EQ(info->config_keys().find("cell_form")->default_value, "tensorflow");
  }
}

}  // namespace
}  // namespace attn
