#include "attn/ops/matmul/matmul.h"

#include <algorithm>
#include <climits>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/matmul/matmul_kernels.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/relu_gradient_columns/relu_gradient_columns.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

using MatmulFn = void (*)(const Tensor&, const Tensor&, const Tensor&, bool);
using LinearFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, bool);
const DeviceKernels<MatmulFn> kMatmul{"matmul", matmul_cpu, ATTN_CUDA_KERNEL(matmul_cuda)};
const DeviceKernels<LinearFn> kLinear{"linear", linear_cpu, ATTN_CUDA_KERNEL(linear_cuda)};
using MatmulBiasFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool);
const DeviceKernels<MatmulBiasFn> kMatmulBias{"matmul_bias", matmul_bias_cpu, ATTN_CUDA_KERNEL(matmul_bias_cuda)};
using MatmulSummedFn = void (*)(const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<MatmulSummedFn> kMatmulSummed{"matmul_summed", matmul_summed_cpu,
                                                  ATTN_CUDA_KERNEL(matmul_summed_cuda)};

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(a.defined() && b.defined(), op, "got an undefined operand");
  ATTN_CHECK(a.dtype() == b.dtype(), op, "dtype mismatch: ", dtype_name(a.dtype()), " ", shape_str(a.shape()), " vs ",
             dtype_name(b.dtype()), " ", shape_str(b.shape()));
  ATTN_CHECK(a.device() == b.device(), op, "device mismatch: ", device_name(a.device()), " vs ",
             device_name(b.device()), " for shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()));
  ATTN_CHECK(is_floating(a.dtype()), op, "expects float32 or float64, got ", dtype_name(a.dtype()), " for shapes ",
             shape_str(a.shape()), " and ", shape_str(b.shape()));
}

void check_blas_size(const char* op, int64_t size, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(size <= INT_MAX, op, "a matrix axis of ", size, " exceeds the BLAS int range for shapes ",
             shape_str(a.shape()), " and ", shape_str(b.shape()));
}

// t itself when BLAS can read its last two axes in place, else a contiguous
// copy (not recorded: the caller records the op on the original operand).
Tensor gemm_ready(const Tensor& t) {
  if (gemm_layout(t).ok) return t;
  Tensor c = empty(t.shape(), t.dtype(), t.device());
  copy_into(c, t);
  return c;
}

// t read with `shape` (its batch axes broadcast to the output's).
Tensor broadcast_view(const Tensor& t, const Shape& shape) {
  return make_view(t, shape, broadcast_strides(t, shape), t.offset());
}

// t with leading size-1 axes up to `rank` (a view).
Tensor with_rank(const Tensor& t, int64_t rank) {
  Tensor v = t;
  while (v.dim() < rank) v = unsqueeze(v, 0);
  return v;
}

// The gradient of b in out = a @ b, where a [batch..., m, k], b and the
// output gradient g [batch..., m, n] have rank >= 2. Where b is shared by
// the entries of some batch axes (size 1 there while a is not: a linear map's
// weight, a per-head weight shared over the batch), its gradient sums a^T g
// over those axes. Their entries are stacked as rows of one long contraction
// per remaining batch entry instead of a product per entry followed by a sum:
// fewer, larger GEMMs and no [batch..., k, n] intermediate. With one summed
// axis and at most one kept one (MTSA's per-head weights, shared over the
// batch) the matmul_summed kernel reads both operands' rows where they are;
// otherwise a is read in place when its stacked rows are evenly strided
// (x's heads split from [B, n, h*d] are) and g is permuted into a
// contiguous copy when needed.
Tensor shared_operand_gradient(const Tensor& as, const Tensor& bs, const Tensor& g) {
  const int64_t rank = g.dim(), k = as.shape().back(), n = g.shape().back();
  const Tensor a = with_rank(as, rank), b = with_rank(bs, rank);
  std::vector<int64_t> kept, summed;
  for (int64_t i = 0; i < rank - 2; ++i) {
    // A broadcast axis of a would repeat its rows in the stack: the per-entry path handles it.
    if (a.shape()[i] != g.shape()[i]) return sum_to(matmul(transpose(as, -1, -2), g), bs.shape());
    (b.shape()[i] == 1 && g.shape()[i] > 1 ? summed : kept).push_back(i);
  }
  if (summed.empty()) return sum_to(matmul(transpose(as, -1, -2), g), bs.shape());

  std::vector<int64_t> order = kept;
  order.insert(order.end(), summed.begin(), summed.end());
  order.push_back(rank - 2);
  order.push_back(rank - 1);
  if (summed.size() == 1 && kept.size() <= 1) {
    // [kept, summed, rows, features], with a kept axis of 1 when there is none.
    const auto entries = [&](const Tensor& t) { return kept.empty() ? unsqueeze(permute(t, order), 0) : permute(t, order); };
    const Tensor a4 = entries(a), g4 = entries(g);
    Tensor out = empty({a4.size(0), k, n}, g.dtype(), g.device());
    kMatmulSummed(g.device(), a4, g4, out);
    return reshape(out, bs.shape());
  }
  Shape stacked_shape;
  for (int64_t i : kept) stacked_shape.push_back(g.shape()[i]);
  int64_t rows = g.shape()[rank - 2];
  for (int64_t i : summed) rows *= g.shape()[i];
  stacked_shape.push_back(rows);

  // a's stacked rows: one stride when each summed axis continues the rows.
  const Tensor ap = permute(a, order);
  const int64_t pr = static_cast<int64_t>(order.size());
  int64_t expected = ap.strides()[pr - 2] * ap.shape()[pr - 2];
  bool folds = true;
  for (int64_t j = pr - 3; j >= static_cast<int64_t>(kept.size()) && folds; --j) {
    if (ap.shape()[j] == 1) continue;
    folds = ap.strides()[j] == expected;
    expected *= ap.shape()[j];
  }
  Shape a_shape = stacked_shape, g_shape = stacked_shape;
  a_shape.push_back(k);
  g_shape.push_back(n);
  Tensor a_rows;
  if (folds) {
    std::vector<int64_t> strides;
    for (size_t j = 0; j < kept.size(); ++j) strides.push_back(ap.strides()[j]);
    strides.push_back(ap.strides()[pr - 2]);
    strides.push_back(ap.strides()[pr - 1]);
    a_rows = make_view(ap, a_shape, strides, ap.offset());
  } else {
    a_rows = reshape(contiguous(ap), a_shape);
  }
  const Tensor g_rows = reshape(contiguous(permute(g, order)), g_shape);
  return reshape(matmul(transpose(a_rows, -1, -2), g_rows), bs.shape());
}

// The shape of a @ b (both of rank >= 2), checked.
Shape product_shape(const char* op, const Tensor& a, const Tensor& b) {
  const int64_t ra = a.dim(), rb = b.dim();
  const int64_t m = a.shape()[ra - 2], k = a.shape()[ra - 1], n = b.shape()[rb - 1];
  ATTN_CHECK(k == b.shape()[rb - 2], op, "inner dimensions differ: ", shape_str(a.shape()), " @ ",
             shape_str(b.shape()));
  for (int64_t s : {m, n, k}) check_blas_size(op, s, a, b);

  // NumPy broadcast of the batch axes, aligned from the right.
  const int64_t rank = std::max(ra, rb);
  Shape shape(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank - 2; ++i) {
    const int64_t ia = i - (rank - ra), ib = i - (rank - rb);
    const int64_t da = ia >= 0 ? a.shape()[ia] : 1, db = ib >= 0 ? b.shape()[ib] : 1;
    ATTN_CHECK(da == db || da == 1 || db == 1, op, "batch dimensions do not broadcast: ", shape_str(a.shape()),
               " @ ", shape_str(b.shape()));
    shape[i] = da == 1 ? db : da;
  }
  shape[rank - 2] = m;
  shape[rank - 1] = n;
  return shape;
}

// out = a @ b, or out += a @ b with `accumulate`; out has product_shape(a, b).
// With bias_rows (bias_rows_view's view of a bias) out = a @ b + bias
// instead, relu'd with `relu`.
void product_into(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate,
                  const Tensor& bias_rows = Tensor(), bool relu = false) {
  const int64_t rank = out.dim(), k = a.shape().back();
  Shape shape_a = out.shape(), shape_b = out.shape();
  shape_a[rank - 1] = shape_b[rank - 2] = k;
  const Tensor a_read = broadcast_view(gemm_ready(a), shape_a), b_read = broadcast_view(gemm_ready(b), shape_b);
  if (bias_rows.defined()) {
    kMatmulBias(a.device(), a_read, b_read, bias_rows, out, relu);
  } else {
    kMatmul(a.device(), a_read, b_read, out, accumulate);
  }
}

// The gradient of a (the op's input `input`) in out = a @ b: g @ b^T, summed
// over a's broadcast batch axes. Where a has no broadcast axis and the
// engine offers its pending gradient, the product is added into that (GEMM
// beta = 1), as linear's is.
Tensor first_operand_gradient(const Tensor& g, const Tensor& bs, const Shape& a_shape, size_t input) {
  const Tensor bt = transpose(bs, -1, -2);
  const Tensor pending = pending_gradient(input);
  if (pending.defined() && pending.dtype() == g.dtype() && pending.device() == g.device() &&
      product_shape("matmul", g, bt) == a_shape) {
    product_into(g, bt, pending, true);
    return pending;
  }
  return sum_to(matmul(g, bt), a_shape);
}

// relu's backward and the bias gradient of out = relu(... + bias) in one
// pass (relu_gradient_columns) where out is contiguous: out seen as
// [rows, cols], rows spanning the leading axes the bias lacks (the batch,
// for MTSA's per-head bias [heads, 1, n]), gives the column sums, and those
// are summed to the bias's shape over its remaining unit axes (a pass over
// cols values, not over out). Else two passes as composed.
struct ReluBiasGradient {
  Tensor grad_in, bias_grad;
};
ReluBiasGradient relu_and_bias_gradient(const Tensor& g, const Tensor& out, const Shape& bias_shape) {
  const int64_t lead = out.dim() - static_cast<int64_t>(bias_shape.size());
  if (lead < 1 || out.numel() == 0 || !g.is_contiguous() || !out.is_contiguous()) {
    const Tensor grad_in = relu_gradient(g, out);
    return {grad_in, sum_to(grad_in, bias_shape)};
  }
  const Shape& shape = out.shape();
  const Shape tail(shape.begin() + lead, shape.end());
  int64_t rows = 1;
  for (int64_t i = 0; i < lead; ++i) rows *= shape[i];
  const int64_t cols = out.numel() / rows;  // rows > 0: an empty output took the composed path
  ReluGradientColumns r = relu_gradient_columns(reshape(g, {rows, cols}), reshape(out, {rows, cols}));
  return {reshape(r.grad_in, shape), sum_to(reshape(r.column_sums, tail), bias_shape)};
}

// Both operands have rank >= 2 here.
Tensor matmul_2d_or_more(const Tensor& a, const Tensor& b) {
  Tensor out = empty(product_shape("matmul", a, b), a.dtype(), a.device());
  product_into(a, b, out, false);
  if (!any_requires_grad({a, b})) return out;

  Tensor as = a.detach(), bs = b.detach();
  record(out, "matmul", {a, b}, {as, bs}, [as, bs](const Tensor& g, const std::vector<bool>& needs) {
    Tensor ga, gb;
    if (needs[0]) ga = first_operand_gradient(g, bs, as.shape(), 0);
    if (needs[1]) gb = shared_operand_gradient(as, bs, g);
    return std::vector<Tensor>{ga, gb};
  });
  return out;
}

// bias read with the product's shape `out_shape` ([batch..., m, n]): it
// must end in n, have size 1 on the row axis (one value per output column)
// and broadcast over the batch axes; checked, `like` giving the dtype and
// device.
Tensor bias_rows_view(const char* op, const Tensor& bias, const Shape& out_shape, const Tensor& like) {
  ATTN_CHECK(bias.dtype() == like.dtype() && bias.device() == like.device(), op, "bias is ", dtype_name(bias.dtype()),
             " on ", device_name(bias.device()), ", the operands are ", dtype_name(like.dtype()), " on ",
             device_name(like.device()));
  const int64_t rb = bias.dim();
  const bool fits = rb >= 1 && rb <= static_cast<int64_t>(out_shape.size()) &&
                    bias.shape().back() == out_shape.back() && (rb == 1 || bias.shape()[rb - 2] == 1) &&
                    broadcasts_to(bias.shape(), out_shape);
  ATTN_CHECK(fits, op, "bias ", shape_str(bias.shape()), " is not one row per batch entry of the product ",
             shape_str(out_shape), " (expects [", out_shape.back(), "] or [..., 1, ", out_shape.back(),
             "] broadcasting over the batch axes)");
  return make_view(bias, out_shape, broadcast_strides(bias, out_shape), bias.offset());
}

// sum_i as[i] @ bs[i] (+ bias, relu'd with `relu`, which only a single
// term takes): matmul_sum and matmul_bias, whose errors name `op`.
Tensor product_terms(const char* op, const std::vector<Tensor>& as, const std::vector<Tensor>& bs, const Tensor& bias,
                     bool relu) {
  ATTN_CHECK(!as.empty() && as.size() == bs.size(), op, "needs as many right operands as left ones, at least one; got ",
             as.size(), " and ", bs.size());
  Shape shape;
  for (size_t i = 0; i < as.size(); ++i) {
    check_operands(op, as[i], bs[i]);
    check_operands(op, as[0], as[i]);
    ATTN_CHECK(as[i].dim() >= 2 && bs[i].dim() >= 2, op, "operands must have at least two axes, got ",
               shape_str(as[i].shape()), " @ ", shape_str(bs[i].shape()), " (term ", i, ")");
    const Shape term = product_shape(op, as[i], bs[i]);
    if (i == 0) shape = term;
    ATTN_CHECK(term == shape, op, "term ", i, " ", shape_str(as[i].shape()), " @ ", shape_str(bs[i].shape()),
               " gives ", shape_str(term), ", term 0 gives ", shape_str(shape));
  }
  const Tensor bias_rows = bias.defined() ? bias_rows_view(op, bias, shape, as[0]) : Tensor();
  Tensor out = empty(shape, as[0].dtype(), as[0].device());
  // The first term writes the rows (onto the bias: in the GEMM's stores on
  // the engine's float32 kernel), the later ones add to them (beta = 1).
  for (size_t i = 0; i < as.size(); ++i) product_into(as[i], bs[i], out, i > 0, i == 0 ? bias_rows : Tensor(), relu);

  std::vector<Tensor> inputs = as;
  inputs.insert(inputs.end(), bs.begin(), bs.end());
  if (bias.defined()) inputs.push_back(bias);
  if (!any_requires_grad(inputs)) return out;
  std::vector<Tensor> ad, bd;
  for (size_t i = 0; i < as.size(); ++i) {
    ad.push_back(as[i].detach());
    bd.push_back(bs[i].detach());
  }
  const Shape bias_shape = bias.defined() ? bias.shape() : Shape();
  const bool has_bias = bias.defined();
  const Tensor saved_out = relu ? out.detach() : Tensor();
  std::vector<Tensor> saved = ad;
  saved.insert(saved.end(), bd.begin(), bd.end());
  saved.push_back(saved_out);
  record(out, op, inputs, saved,
         [ad, bd, has_bias, bias_shape, saved_out](const Tensor& g_out, const std::vector<bool>& needs) {
    const size_t k = ad.size();
    std::vector<Tensor> grads(2 * k + (has_bias ? 1 : 0));
    // relu's backward first: the gradient where the output is positive. With
    // a bias, its gradient's sum over the axes the bias does not have comes
    // from the same pass.
    Tensor g = g_out;
    if (saved_out.defined() && has_bias && needs[2 * k]) {
      ReluBiasGradient r = relu_and_bias_gradient(g_out, saved_out, bias_shape);
      g = r.grad_in;
      grads[2 * k] = r.bias_grad;
    } else if (saved_out.defined()) {
      g = relu_gradient(g_out, saved_out);
    }
    for (size_t i = 0; i < k; ++i) {
      if (needs[i]) grads[i] = first_operand_gradient(g, bd[i], ad[i].shape(), i);
      if (needs[k + i]) grads[k + i] = shared_operand_gradient(ad[i], bd[i], g);
    }
    if (has_bias && needs[2 * k] && !grads[2 * k].defined()) grads[2 * k] = sum_to(g, bias_shape);
    return grads;
  });
  return out;
}

}  // namespace

Tensor matmul_sum(const std::vector<Tensor>& as, const std::vector<Tensor>& bs, const Tensor& bias) {
  return product_terms("matmul_sum", as, bs, bias, false);
}

Tensor matmul_bias(const Tensor& a, const Tensor& b, const Tensor& bias, bool relu) {
  ATTN_CHECK(bias.defined(), relu ? "matmul_bias_relu" : "matmul_bias", "got an undefined bias");
  return product_terms(relu ? "matmul_bias_relu" : "matmul_bias", {a}, {b}, bias, relu);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_operands("matmul", a, b);
  ATTN_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul", "operands must have at least one axis: ", shape_str(a.shape()),
             " @ ", shape_str(b.shape()));
  if (a.dim() >= 2 && b.dim() >= 2) return matmul_2d_or_more(a, b);
  // A vector operand is a one-row (a) or one-column (b) matrix whose unit axis
  // is dropped from the result; the views carry the gradient.
  ATTN_CHECK(a.shape().back() == b.shape()[b.dim() >= 2 ? b.dim() - 2 : 0], "matmul",
             "inner dimensions differ: ", shape_str(a.shape()), " @ ", shape_str(b.shape()));
  Tensor out = matmul_2d_or_more(a.dim() == 1 ? unsqueeze(a, 0) : a, b.dim() == 1 ? unsqueeze(b, 1) : b);
  if (b.dim() == 1) out = squeeze(out, -1);
  if (a.dim() == 1) out = squeeze(out, b.dim() == 1 ? -1 : -2);
  return out;
}

namespace {

// x's rows as one [rows, in] matrix (x copied when it is not contiguous) and
// the weight's transposed view as BLAS reads it.
struct LinearTerm {
  Tensor x_rows, weight_t;
};

LinearTerm linear_term(const Tensor& x, const Tensor& weight, int64_t rows) {
  const int64_t in = weight.shape()[1], outf = weight.shape()[0];
  Tensor xc = x;
  if (!x.is_contiguous()) {
    xc = empty(x.shape(), x.dtype(), x.device());
    copy_into(xc, x);
  }
  return {make_view(xc, {rows, in}, {in, 1}, xc.offset()),
          gemm_ready(make_view(weight, {in, outf}, {weight.strides()[1], weight.strides()[0]}, weight.offset()))};
}

// x's gradient g_rows @ W (g_rows [rows, out], W [out, in]) for the input
// `input` of shape x_shape. Where x already has a gradient pending (it feeds
// several layers) and the engine offers it, the GEMM adds into it (beta = 1):
// no [rows, in] product of its own and no pass to add the two.
Tensor linear_input_gradient(const Tensor& g_rows, const Tensor& w, const Shape& x_shape, size_t input) {
  const Tensor pending = pending_gradient(input);
  if (!pending.defined() || pending.dtype() != g_rows.dtype() || pending.device() != g_rows.device())
    return reshape(matmul(g_rows, w), x_shape);
  const int64_t rows = g_rows.shape()[0], in = w.shape()[1];
  kLinear(g_rows.device(), gemm_ready(g_rows), gemm_ready(w), Tensor(),
          make_view(pending, {rows, in}, {in, 1}, pending.offset()), true, false);
  return pending;
}

// linear (one term), linear_sum and linear_relu (one term, relu'd): the
// checks name `op`.
Tensor linear_terms(const char* op, const std::vector<Tensor>& xs, const std::vector<Tensor>& weights,
                    const Tensor& bias, bool relu) {
  ATTN_CHECK(!xs.empty() && xs.size() == weights.size(), op, "needs one weight per input and at least one input, got ",
             xs.size(), " input(s) and ", weights.size(), " weight(s)");
  const Tensor& x0 = xs[0];
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor &x = xs[i], &weight = weights[i];
    check_operands(op, x, weight);
    check_operands(op, x0, x);
    ATTN_CHECK(weight.dim() == 2, op, "weight must be [out, in], got ", shape_str(weight.shape()), " for input ",
               shape_str(x.shape()));
    ATTN_CHECK(x.dim() >= 1 && x.shape().back() == weight.shape()[1], op, "input ", shape_str(x.shape()),
               " does not end in the weight's input size: weight ", shape_str(weight.shape()));
    ATTN_CHECK(weight.shape()[0] == weights[0].shape()[0], op, "weight ", i, " ", shape_str(weight.shape()), " has ",
               weight.shape()[0], " outputs, weight 0 ", shape_str(weights[0].shape()), " has ", weights[0].shape()[0]);
    ATTN_CHECK(x.dim() == x0.dim() && std::equal(x.shape().begin(), x.shape().end() - 1, x0.shape().begin()), op,
               "input ", i, " ", shape_str(x.shape()), " does not share the leading axes of input 0 ",
               shape_str(x0.shape()));
  }
  const int64_t outf = weights[0].shape()[0];
  if (bias.defined()) {
    ATTN_CHECK(bias.dtype() == x0.dtype() && bias.device() == x0.device(), op, "bias is ", dtype_name(bias.dtype()),
               " on ", device_name(bias.device()), ", input is ", dtype_name(x0.dtype()), " on ",
               device_name(x0.device()));
    ATTN_CHECK(bias.dim() == 1 && bias.shape()[0] == outf, op, "bias ", shape_str(bias.shape()),
               " does not match weight ", shape_str(weights[0].shape()), " (expects [", outf, "])");
  }
  Shape lead(x0.shape().begin(), x0.shape().end() - 1);
  const int64_t rows = numel_of(lead);
  for (size_t i = 0; i < xs.size(); ++i)
    for (int64_t s : {rows, weights[i].shape()[1], outf}) check_blas_size(op, s, xs[i], weights[i]);

  std::vector<LinearTerm> terms;
  for (size_t i = 0; i < xs.size(); ++i) terms.push_back(linear_term(xs[i], weights[i], rows));
  Shape out_shape = lead;
  out_shape.push_back(outf);
  Tensor out = empty(out_shape, x0.dtype(), x0.device());
  const Tensor out_rows = make_view(out, {rows, outf}, {outf, 1}, 0);
  // The first term writes the rows (onto the bias), the others add to them;
  // the last one takes the relu.
  for (size_t i = 0; i < terms.size(); ++i)
    kLinear(x0.device(), terms[i].x_rows, terms[i].weight_t, i == 0 ? bias : Tensor(), out_rows, i > 0,
            relu && i + 1 == terms.size());

  std::vector<Tensor> inputs = xs;
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  inputs.push_back(bias);
  if (!any_requires_grad(inputs)) return out;

  std::vector<Tensor> x_rows, ws;
  std::vector<Shape> x_shapes;
  for (size_t i = 0; i < xs.size(); ++i) {
    x_rows.push_back(terms[i].x_rows.detach());
    ws.push_back(weights[i].detach());
    x_shapes.push_back(xs[i].shape());
  }
  const Tensor saved_out = relu ? out.detach() : Tensor();
  std::vector<Tensor> saved = x_rows;
  saved.insert(saved.end(), ws.begin(), ws.end());
  saved.push_back(saved_out);
  record(out, op, inputs, saved,
         [x_rows, ws, x_shapes, rows, outf, saved_out](const Tensor& g, const std::vector<bool>& needs) {
    const size_t k = ws.size();
    std::vector<Tensor> grads(2 * k + 1);
    // Asked before any view of g is taken (a view would share its memory).
    const Tensor writable = saved_out.defined() ? writable_output_gradient() : Tensor();
    Tensor g_rows = reshape(g, {rows, outf});
    if (saved_out.defined()) {
      // relu's backward, into g's own memory where the engine offers it (no
      // second buffer of g's size); with a bias its gradient comes from the
      // same pass.
      const Tensor out_rows = reshape(saved_out, {rows, outf});
      if (needs[2 * k]) {
        ReluGradientColumns r = relu_gradient_columns(g_rows, out_rows, writable.defined());
        g_rows = r.grad_in;
        grads[2 * k] = r.column_sums;
      } else {
        g_rows = relu_gradient(g_rows, out_rows);
      }
    }
    for (size_t i = 0; i < k; ++i) {
      if (needs[i]) grads[i] = linear_input_gradient(g_rows, ws[i], x_shapes[i], i);
      if (needs[k + i]) grads[k + i] = matmul(transpose(g_rows, 0, 1), x_rows[i]);
    }
    if (needs[2 * k] && !grads[2 * k].defined()) grads[2 * k] = sum(g_rows, {0});
    return grads;
  });
  return out;
}

}  // namespace

Tensor linear_unactivated(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return linear_terms("linear", {x}, {weight}, bias, false);
}

Tensor linear_relu(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return linear_terms("linear_relu", {x}, {weight}, bias, true);
}

Tensor linear_sum(const std::vector<Tensor>& xs, const std::vector<Tensor>& weights, const Tensor& bias) {
  return linear_terms("linear_sum", xs, weights, bias, false);
}

}  // namespace attn
