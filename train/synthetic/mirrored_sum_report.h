// The results of `attn mirrored-sum`: one row per (model, K), written as
// CSV and drawn like the paper's Fig. 2 (seed 003): test MSE against K, one
// line per model, with the best constant prediction as a dashed reference.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct MirroredSumRow {
  std::string model;
  int64_t k = 0;
  double test_mse = 0;
  double mean_predictor_mse = 0;    // Var(y) per feature: the MSE of learning nothing
  double linear_predictor_mse = 0;  // the best prediction linear in the inputs (no product)
  int64_t steps = 0;
  int64_t train_samples = 0;
  int64_t test_samples = 0;
  int64_t batch = 0;
  int64_t parameters = 0;
  double seconds = 0;
};

// Header "model,K,test_mse,mean_predictor_mse,linear_predictor_mse,
// relative_mse,steps,train_samples,test_samples,batch,parameters,seconds"
// and one line per row
// (relative_mse = test_mse / mean_predictor_mse), in the rows' order.
std::string mirrored_sum_csv(const std::vector<MirroredSumRow>& rows);

// Two panels against K: the test MSE (as the paper's figure) and the MSE
// relative to the constant prediction (1 = nothing learnt), one line per
// model, and dashed: the constant and the best linear prediction in the order models first appear in `rows`. `subtitle` (the sizes)
// goes into the title, after "Mirrored sum: ".
std::string mirrored_sum_svg(const std::vector<MirroredSumRow>& rows, const std::string& subtitle);

}  // namespace attn
