#include "attn/train/synthetic/mirrored_sum_report.h"

#include <cstdio>
#include <algorithm>
#include <map>

#include "attn/util/svg_chart.h"

namespace attn {

std::string mirrored_sum_csv(const std::vector<MirroredSumRow>& rows) {
  std::string text =
      "model,K,test_mse,mean_predictor_mse,linear_predictor_mse,relative_mse,steps,train_samples,test_samples,batch,parameters,seconds\n";
  for (const MirroredSumRow& r : rows) {
    char line[512];
    std::snprintf(line, sizeof line, "%s,%lld,%.6g,%.6g,%.6g,%.6g,%lld,%lld,%lld,%lld,%lld,%.1f\n", r.model.c_str(),
                  static_cast<long long>(r.k), r.test_mse, r.mean_predictor_mse, r.linear_predictor_mse,
                  r.test_mse / r.mean_predictor_mse,
                  static_cast<long long>(r.steps), static_cast<long long>(r.train_samples),
                  static_cast<long long>(r.test_samples), static_cast<long long>(r.batch),
                  static_cast<long long>(r.parameters), r.seconds);
    text += line;
  }
  return text;
}

std::string mirrored_sum_svg(const std::vector<MirroredSumRow>& rows, const std::string& subtitle) {
  ChartPanel mse{"test MSE", "K (pairs summed)", "test MSE", {}, false, true};
  ChartPanel relative{"test MSE / MSE of the constant K/4", "K (pairs summed)", "relative MSE", {}, false, true};
  std::map<std::string, size_t> index;  // model -> its series
  std::map<int64_t, std::pair<double, double>> floors;  // K -> the constant's and the linear prediction's MSE
  for (const MirroredSumRow& r : rows) {
    if (!index.count(r.model)) {
      const int color = static_cast<int>(index.size());
      index[r.model] = mse.series.size();
      mse.series.push_back({r.model, {}, color, false});
      relative.series.push_back({r.model, {}, color, false});
    }
    mse.series[index[r.model]].points.emplace_back(static_cast<double>(r.k), r.test_mse);
    relative.series[index[r.model]].points.emplace_back(static_cast<double>(r.k), r.test_mse / r.mean_predictor_mse);
    floors[r.k] = {r.mean_predictor_mse, r.linear_predictor_mse};
  }
  // Points in K order, whatever order the grid was given in.
  for (ChartPanel* panel : {&mse, &relative})
    for (ChartSeries& s : panel->series) std::sort(s.points.begin(), s.points.end());
  ChartSeries constant{"constant K/4 (learns nothing)", {}, 10, true};
  ChartSeries linear{"best linear in the inputs (no product)", {}, 8, true};
  for (const auto& [k, v] : floors) {
    constant.points.emplace_back(static_cast<double>(k), v.first);
    linear.points.emplace_back(static_cast<double>(k), v.second);
  }
  mse.series.push_back(constant);
  mse.series.push_back(linear);
  for (size_t i = 0; i < constant.points.size(); ++i) {
    linear.points[i].second /= constant.points[i].second;
    constant.points[i].second = 1.0;
  }
  relative.series.push_back(constant);
  relative.series.push_back(linear);
  return render_svg_chart("Mirrored sum: " + subtitle, {mse, relative});
}

}  // namespace attn
