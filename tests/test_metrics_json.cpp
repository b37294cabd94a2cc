// Metrics reach JSON readers (test_metrics.json, the final line of
// `attn train`) as numbers or null: JSON has no infinity or NaN, and a SICK
// run whose dev predictions are constant has a best dev Pearson r of -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "attn/train/evaluate.h"
#include "attn/util/json.h"

namespace attn {
namespace {

TEST(MetricsJson, NonFiniteValuesAreNull) {
  EXPECT_EQ(json_metric_value(-std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_metric_value(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(json_metric_value(std::nan("")), "null");
  EXPECT_EQ(json_metric_value(0.5), "0.5");
  EXPECT_EQ(json_metric_value(-0.25), "-0.25");
}

TEST(MetricsJson, ALineWithANonFiniteMetricParses) {
  const std::string line = metrics_json({{"loss", std::nan("")}, {"pearson", -std::numeric_limits<double>::infinity()},
                                         {"accuracy", 0.75}});
  EXPECT_EQ(line, "{\"accuracy\": 0.75, \"loss\": null, \"pearson\": null}");
  const Json parsed = Json::parse(line);
  EXPECT_DOUBLE_EQ(parsed.at("accuracy").as_number(), 0.75);
  EXPECT_TRUE(parsed.at("pearson").is_null());
}

}  // namespace
}  // namespace attn
