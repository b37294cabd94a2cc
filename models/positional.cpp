#include "attn/models/positional.h"

#include <cmath>
#include <vector>

#include "attn/engine/error.h"
#include "attn/engine/copy.h"

namespace attn {

Tensor sinusoidal_positions(int64_t n, int64_t d, DType dtype, Device device) {
  ATTN_CHECK(n >= 0 && d > 0, "sinusoidal_positions", "needs n >= 0 and d > 0, got n = ", n, ", d = ", d);
  ATTN_CHECK(dtype == DType::F32 || dtype == DType::F64, "sinusoidal_positions", "dtype must be floating, got ",
             dtype_name(dtype));
  std::vector<double> values(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < d; i += 2) {
    // Computed in double and rounded once, so float32 and float64 agree.
    const double inv_freq = std::pow(10000.0, -static_cast<double>(i) / static_cast<double>(d));
    for (int64_t pos = 0; pos < n; ++pos) {
      const double angle = static_cast<double>(pos) * inv_freq;
      values[static_cast<size_t>(pos * d + i)] = std::sin(angle);
      if (i + 1 < d) values[static_cast<size_t>(pos * d + i + 1)] = std::cos(angle);
    }
  }
  Tensor table = from_vector(values, {n, d}, dtype);
  return device == Device::CPU ? table : to_device(table, device);
}

}  // namespace attn
