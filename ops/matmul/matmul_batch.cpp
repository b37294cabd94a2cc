// The rules of ops/matmul/matmul_kernels.h shared by the CPU (OpenBLAS) and CUDA
// (cuBLAS) GEMM kernels: which batched products are one tall GEMM, which are
// evenly strided, where each batch entry starts, and what a linear layer's
// output holds before its GEMM.
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul_kernels.h"

namespace attn {

std::vector<int64_t> batch_offsets(const Tensor& t, int64_t batch) {
  const int64_t axes = t.dim() - 2;
  std::vector<int64_t> offsets(static_cast<size_t>(batch));
  std::vector<int64_t> index(static_cast<size_t>(axes), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < batch; ++i) {
    offsets[static_cast<size_t>(i)] = off;
    for (int64_t d = axes - 1; d >= 0; --d) {  // odometer increment
      off += t.strides()[d];
      if (++index[d] < t.shape()[d]) break;
      off -= t.strides()[d] * t.shape()[d];
      index[d] = 0;
    }
  }
  return offsets;
}

int64_t uniform_step(const std::vector<int64_t>& offsets) {
  if (offsets.size() < 2) return 0;
  const int64_t step = offsets[1] - offsets[0];
  if (step < 0) return -1;
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != static_cast<int64_t>(i) * step) return -1;
  return step;
}

bool batch_is_broadcast(const Tensor& t) {
  for (int64_t d = 0; d < t.dim() - 2; ++d)
    if (t.shape()[d] != 1 && t.strides()[d] != 0) return false;
  return true;
}

bool batch_folds_into_rows(const Tensor& a, int64_t ld) {
  const int64_t r = a.dim();
  int64_t expected = ld * a.shape()[r - 2];
  for (int64_t d = r - 3; d >= 0; --d) {
    if (a.shape()[d] == 1) continue;
    if (a.strides()[d] != expected) return false;
    expected *= a.shape()[d];
  }
  return true;
}

bool prepare_linear_rows(const Tensor& bias, int64_t in, bool accumulate, const Tensor& out_rows) {
  if (accumulate) return true;
  if (bias.defined()) {
    copy_into(out_rows, bias);  // every row starts as the bias; the GEMM adds onto it
    return true;
  }
  if (in == 0) fill_(out_rows, 0.0);
  return false;
}

namespace {

// t [E, S, R, f] as [E, S * R, f]: a view when the S entries continue the
// rows in one stride (as a batch of contiguous rows does) and the features
// are contiguous, else a contiguous copy.
Tensor stacked_rows(const Tensor& t) {
  const int64_t E = t.size(0), S = t.size(1), R = t.size(2), f = t.size(3);
  const std::vector<int64_t>& st = t.strides();
  const int64_t row_stride = R > 1 ? st[2] : S > 1 ? st[1] : f;
  const bool folds =
      (S == 1 || R == 1 || st[1] == R * st[2]) && (f == 1 || st[3] == 1) && (S * R == 1 || row_stride >= f);
  if (folds) return make_view(t, {E, S * R, f}, {st[0], S * R == 1 ? f : row_stride, 1}, t.offset());
  Tensor rows = empty({E, S * R, f}, t.dtype(), t.device());
  copy_into(make_view(rows, t.shape(), {S * R * f, R * f, f, 1}, 0), t);
  return rows;
}

}  // namespace

GatheredRows gather_summed_rows(const Tensor& a, const Tensor& g) {
  const Tensor a_rows = stacked_rows(a), g_rows = stacked_rows(g);
  return {make_view(a_rows, {a_rows.size(0), a_rows.size(2), a_rows.size(1)},
                    {a_rows.strides()[0], a_rows.strides()[2], a_rows.strides()[1]}, a_rows.offset()),
          g_rows};
}

}  // namespace attn
