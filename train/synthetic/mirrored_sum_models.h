// The models of the mirrored summation experiment (seed 003, Fig. 2 and the
// list above it), each a registered encoder (models/encoder.h) with a fixed
// config, followed by a linear regression head to the d-vector target.
//
//   transformer          transformer, 2 layers, 10 heads (the paper gives no
//                        size: the MS-Trans settings' depth and heads)
//   ms-trans-hier-s      mstrans, 2 layers, 10 heads all of scale 3
//   ms-trans-deephier-s  mstrans, 6 layers, 10 heads all of scale 3
//   ms-trans-flex        mstrans, 2 layers, scales 3, n/16, n/8, n/4, n/2,
//                        two heads each (head_counts)
//   bilstm, bigru, bisru hidden / 2 each way (tokens and sentence hidden wide)
//   multicnn             ceil(hidden / 3) filters per width 3, 4, 5
//   hrchycnn             3 layers, kernel 5, hidden wide
//
// `hidden` is the model width of every row (a multiple of 10 for the
// attention models' 10 heads). The dense input vectors are the tokens:
// input_dim = d, and the encoders project them to `hidden` themselves.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/models/config.h"
#include "attn/models/encoder.h"
#include "attn/nn/linear.h"

namespace attn {

struct MirroredSumModelInfo {
  const char* name;
  const char* summary;  // for --help
};

// Every model the command knows, in the order of the figure's legend.
const std::vector<MirroredSumModelInfo>& mirrored_sum_models();

// The encoder config of model `name` at width `hidden`. Throws attn::Error
// naming the known models for an unknown name, or naming the constraint for
// a width the model cannot take.
Config mirrored_sum_encoder_config(const std::string& name, int64_t hidden);

// encoder(x, mask).sentence -> Linear(sentence_dim, d): the prediction of
// the d-vector target. Children "encoder", "head".
class MirroredSumModel : public Module {
 public:
  MirroredSumModel(const Config& encoder_config, int64_t dim, DType dtype, Generator& init, Generator& noise);
  // x [B, N, d], mask [B, N] uint8 -> [B, d].
  Tensor forward(const Tensor& x, const Tensor& mask);
  Encoder& encoder() { return *encoder_; }

 private:
  std::unique_ptr<Encoder> encoder_;
  std::unique_ptr<Linear> head_;
};

}  // namespace attn
