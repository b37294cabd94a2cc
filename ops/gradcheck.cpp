#include "attn/ops/gradcheck.h"

#include <cmath>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"

namespace attn {

namespace {

std::vector<size_t> checked_inputs(const OpCase& c) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].defined() && c.inputs[i].requires_grad()) idx.push_back(i);
  return idx;
}

void clear_grads(const OpCase& c) {
  for (const Tensor& t : c.inputs)
    if (t.defined()) t.zero_grad();
}

bool all_finite(const Tensor& t) {
  for (double v : t.to_vector())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

CaseResult gradcheck_case(const OpCase& c, const Tolerance& tol) {
  CaseResult r;
  r.label = c.label;
  std::vector<size_t> wrt = checked_inputs(c);
  if (wrt.empty()) {
    r.failure = "no input requires grad";
    return r;
  }
  for (size_t j : wrt)
    if (c.inputs[j].dtype() != DType::F64) {
      r.failure = "gradcheck inputs must be float64";
      return r;
    }

  // Analytic Jacobian, one backward per output element.
  clear_grads(c);
  Tensor y = c.fn(c.inputs);
  if (!all_finite(y)) {
    r.failure = "forward produced a non-finite value";
    return r;
  }
  const int64_t m = y.numel();
  std::vector<std::vector<double>> analytic(wrt.size());
  for (size_t a = 0; a < wrt.size(); ++a) analytic[a].assign(static_cast<size_t>(m * c.inputs[wrt[a]].numel()), 0.0);
  bool any_nonzero = false;
  for (int64_t i = 0; i < m; ++i) {
    clear_grads(c);
    Tensor seed = zeros(y.shape(), y.dtype());
    write_element(seed, i, 1.0);
    y.backward(seed, /*retain_graph=*/true);
    for (size_t a = 0; a < wrt.size(); ++a) {
      Tensor g = c.inputs[wrt[a]].grad();
      if (!g.defined()) continue;
      std::vector<double> gv = g.to_vector();
      for (size_t k = 0; k < gv.size(); ++k) {
        if (!std::isfinite(gv[k])) {
          r.failure = "backward produced a non-finite gradient";
          return r;
        }
        analytic[a][static_cast<size_t>(i) * gv.size() + k] = gv[k];
        any_nonzero = any_nonzero || gv[k] != 0.0;
      }
    }
  }
  clear_grads(c);

  // Numeric Jacobian by central differences, perturbing through each input's
  // own strides (non-contiguous inputs included).
  NoGrad no_grad;
  bool passed = true;
  std::ostringstream first_bad;
  for (size_t a = 0; a < wrt.size(); ++a) {
    const Tensor& x = c.inputs[wrt[a]];
    const int64_t n = x.numel();
    for (int64_t k = 0; k < n; ++k) {
      double orig = read_element(x, k);
      write_element(x, k, orig + tol.eps);
      std::vector<double> plus = c.fn(c.inputs).to_vector();
      write_element(x, k, orig - tol.eps);
      std::vector<double> minus = c.fn(c.inputs).to_vector();
      write_element(x, k, orig);
      for (int64_t i = 0; i < m; ++i) {
        double numeric = (plus[i] - minus[i]) / (2 * tol.eps);
        double an = analytic[a][static_cast<size_t>(i * n + k)];
        double err = std::abs(an - numeric);
        r.max_abs_error = std::max(r.max_abs_error, err);
        if (std::abs(numeric) > tol.atol) r.max_rel_error = std::max(r.max_rel_error, err / std::abs(numeric));
        if (!(err <= tol.atol + tol.rtol * std::abs(numeric))) {
          if (passed)
            first_bad << "input " << wrt[a] << " element " << k << ", output " << i << ": analytic " << an
                      << " vs numeric " << numeric;
          passed = false;
        }
      }
    }
  }
  if (!passed) {
    r.failure = "Jacobian mismatch at " + first_bad.str();
  } else if (!any_nonzero) {
    r.failure = "analytic gradient is all zeros (the check would prove nothing)";
  } else {
    r.passed = true;
  }
  return r;
}

std::string backward_determinism_failure(const OpCase& c) {
  std::vector<size_t> wrt = checked_inputs(c);
  std::vector<std::vector<double>> first;
  Tensor seed;
  for (int run = 0; run < 2; ++run) {
    clear_grads(c);
    Tensor y = c.fn(c.inputs);
    if (!seed.defined()) {
      Generator gen(1234);
      seed = rand_uniform(y.shape(), -1.0, 1.0, gen, y.dtype());
    }
    y.backward(seed);
    for (size_t a = 0; a < wrt.size(); ++a) {
      Tensor g = c.inputs[wrt[a]].grad();
      std::vector<double> gv = g.defined() ? g.to_vector() : std::vector<double>();
      if (run == 0) {
        first.push_back(gv);
      } else if (gv != first[a]) {
        clear_grads(c);
        return "input " + std::to_string(wrt[a]) + " got different gradients on two fresh graphs";
      }
    }
  }
  clear_grads(c);
  return "";
}

OpResult gradcheck_op(const OpSpec& spec) {
  OpResult r;
  r.name = spec.name;
  std::vector<OpCase> cases = spec.cases();
  r.passed = !cases.empty();
  for (const OpCase& c : cases) {
    CaseResult cr;
    try {
      cr = gradcheck_case(c, spec.tolerance);
    } catch (const std::exception& e) {
      cr.label = c.label;
      cr.failure = std::string("threw: ") + e.what();
    }
    r.max_abs_error = std::max(r.max_abs_error, cr.max_abs_error);
    r.max_rel_error = std::max(r.max_rel_error, cr.max_rel_error);
    r.passed = r.passed && cr.passed;
    bool strided = false;
    for (const Tensor& t : c.inputs) strided = strided || (t.defined() && !t.is_contiguous());
    r.broadcast_or_strided = r.broadcast_or_strided || c.broadcast_or_strided || strided;
    r.cases.push_back(cr);
  }
  return r;
}

}  // namespace attn
