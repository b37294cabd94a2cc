#include "attn/ops/sampled_gradcheck.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

std::vector<int64_t> unravel(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t a = shape.size(); a-- > 0;) {
    index[a] = flat % shape[a];
    flat /= shape[a];
  }
  return index;
}

// One element as a view of t, so a device tensor is read and written in place.
Tensor element_view(const Tensor& t, int64_t flat) {
  std::vector<int64_t> index = unravel(t.shape(), flat);
  Tensor v = t;
  for (size_t a = 0; a < index.size(); ++a) v = narrow(v, static_cast<int64_t>(a), index[a], 1);
  return v;
}

double read_at(const Tensor& t, int64_t flat) {
  if (t.device() == Device::CPU) return read_element(t, flat);
  NoGrad no_grad;
  return read_element(element_view(t, flat).to(Device::CPU), 0);
}

void write_at(const Tensor& t, int64_t flat, double value) {
  if (t.device() == Device::CPU) return write_element(t, flat, value);
  NoGrad no_grad;
  fill_(element_view(t, flat), value);
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

// The scalar whose gradient is checked: fn's output itself when it has one
// element, else its inner product with the fixed weights.
Tensor scalar_of(const Tensor& y, const Tensor& weights) { return y.numel() == 1 ? sum(y) : sum(y * weights); }

double host_value(const Tensor& s) { return read_element(s.detach().to(Device::CPU), 0); }

// `samples` distinct flat indices of [0, n), sorted; all of them when n is no larger.
std::vector<int64_t> draw_sample(int64_t n, int64_t samples, Generator& gen) {
  std::vector<int64_t> picked;
  if (n <= samples) {
    for (int64_t k = 0; k < n; ++k) picked.push_back(k);
    return picked;
  }
  std::set<int64_t> seen;
  while (static_cast<int64_t>(seen.size()) < samples)
    seen.insert(std::min(n - 1, static_cast<int64_t>(gen.uniform() * static_cast<double>(n))));
  return std::vector<int64_t>(seen.begin(), seen.end());
}

// When no sampled element has a nonzero analytic derivative but some element
// does, one of those replaces the last draw.
void include_a_nonzero(std::vector<int64_t>& picked, const std::vector<double>& analytic, Generator& gen) {
  for (int64_t k : picked)
    if (analytic[static_cast<size_t>(k)] != 0.0) return;
  std::vector<int64_t> nonzero;
  for (size_t k = 0; k < analytic.size(); ++k)
    if (analytic[k] != 0.0) nonzero.push_back(static_cast<int64_t>(k));
  if (nonzero.empty() || picked.empty()) return;
  const size_t choice =
      std::min(nonzero.size() - 1, static_cast<size_t>(gen.uniform() * static_cast<double>(nonzero.size())));
  picked.back() = nonzero[choice];
  std::sort(picked.begin(), picked.end());
}

void clear_grads(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs)
    if (t.defined()) t.zero_grad();
}

}  // namespace

std::string describe_element(const GradcheckInputReport& input, const GradcheckElement& e) {
  return input.label + " element " + shape_str(e.index) + ": analytic " + number(e.analytic) + " numeric " +
         number(e.numeric);
}

SampledGradcheckResult gradcheck(const TensorFunction& fn, const std::vector<Tensor>& inputs,
                                 const SampledGradcheckOptions& options, const std::vector<std::string>& labels) {
  ATTN_CHECK(options.samples > 0, "gradcheck", "samples per input must be positive, got ", options.samples);
  ATTN_CHECK(labels.empty() || labels.size() == inputs.size(), "gradcheck", "got ", labels.size(), " labels for ",
             inputs.size(), " inputs");
  const Tolerance& tol = options.tolerance;
  SampledGradcheckResult r;
  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || !x.requires_grad()) continue;
    const std::string label = labels.empty() ? "input " + std::to_string(i) : labels[i];
    ATTN_CHECK(x.dtype() == DType::F64, "gradcheck", label, " is ", dtype_name(x.dtype()),
               "; central differences need float64");
    ATTN_CHECK(x.is_leaf(), "gradcheck", label, " is not a leaf (its gradient is not kept)");
    wrt.push_back(i);
    GradcheckInputReport in;
    in.label = label;
    in.shape = x.shape();
    r.inputs.push_back(in);
  }
  if (wrt.empty()) {
    r.failure = "no input requires grad";
    return r;
  }

  // The analytic gradient: one backward pass of the scalar.
  Generator gen(options.seed);
  clear_grads(inputs);
  Tensor y = fn(inputs);
  for (double v : y.to_vector())
    if (!std::isfinite(v)) {
      r.failure = "the forward pass produced a non-finite value";
      clear_grads(inputs);
      return r;
    }
  Tensor weights = rand_uniform(y.shape(), -1.0, 1.0, gen, DType::F64).to(y.device());
  if (y.dtype() != DType::F64) weights = cast(weights, y.dtype());
  Tensor s = scalar_of(y, weights);
  s.backward();
  std::vector<std::vector<double>> analytic;
  for (size_t a = 0; a < wrt.size(); ++a) {
    Tensor g = inputs[wrt[a]].grad();
    r.inputs[a].reached = g.defined();
    analytic.push_back(g.defined() ? g.to_vector()
                                   : std::vector<double>(static_cast<size_t>(inputs[wrt[a]].numel()), 0.0));
  }
  clear_grads(inputs);

  NoGrad no_grad;
  // A difference quotient divides value errors by 2 eps: two passes at the
  // same point that differ by more than eps * atol (dropout left on, a
  // sampled selection) would shift every numeric derivative by atol / 2.
  const double again = host_value(scalar_of(fn(inputs), weights));
  const double drift = std::abs(again - host_value(s));
  if (!(drift <= tol.eps * tol.atol)) {
    r.failure = "the function is not deterministic: two forward passes at the same point differ by " + number(drift) +
                " (dropout or sampling left on?)";
    return r;
  }
  for (size_t a = 0; a < wrt.size(); ++a) {
    const Tensor& x = inputs[wrt[a]];
    GradcheckInputReport& in = r.inputs[a];
    const std::vector<double>& an = analytic[a];
    std::string bad;  // the first reason this input fails
    bool any_nonzero = false;
    for (size_t k = 0; k < an.size() && bad.empty(); ++k) {
      if (!std::isfinite(an[k]))
        bad = in.label + " element " + shape_str(unravel(x.shape(), static_cast<int64_t>(k))) +
              ": the analytic gradient is " + number(an[k]);
      any_nonzero = any_nonzero || an[k] != 0.0;
      in.max_abs_gradient = std::max(in.max_abs_gradient, std::abs(an[k]));
    }
    std::vector<int64_t> picked = draw_sample(x.numel(), options.samples, gen);
    include_a_nonzero(picked, an, gen);
    for (int64_t k : picked) {
      if (!bad.empty()) break;
      const double orig = read_at(x, k);
      write_at(x, k, orig + tol.eps);
      const double plus = host_value(scalar_of(fn(inputs), weights));
      write_at(x, k, orig - tol.eps);
      const double minus = host_value(scalar_of(fn(inputs), weights));
      write_at(x, k, orig);
      GradcheckElement e;
      e.input = wrt[a];
      e.index = unravel(x.shape(), k);
      e.analytic = an[static_cast<size_t>(k)];
      e.numeric = (plus - minus) / (2 * tol.eps);
      ++in.checked;
      if (!std::isfinite(e.numeric)) {
        bad = describe_element(in, e) + " (the forward pass is not finite near this point)";
        in.worst = e;
        break;
      }
      const double err = std::abs(e.analytic - e.numeric);
      const double bound = tol.atol + tol.rtol * std::abs(e.numeric);
      e.excess = err / bound;
      in.max_abs_error = std::max(in.max_abs_error, err);
      if (std::abs(e.numeric) > tol.atol) in.max_rel_error = std::max(in.max_rel_error, err / std::abs(e.numeric));
      if (in.checked == 1 || e.excess > in.worst.excess) in.worst = e;
    }
    if (bad.empty() && in.worst.excess > 1.0)
      bad = describe_element(in, in.worst) + " (|difference| " +
            number(std::abs(in.worst.analytic - in.worst.numeric)) +
            " > atol + rtol * |numeric| = " + number(tol.atol + tol.rtol * std::abs(in.worst.numeric)) + ")";
    if (bad.empty() && !any_nonzero && (in.reached || !options.allow_unreached))
      bad = in.label + ": the analytic gradient is all zero (the check would prove nothing)";
    in.failure = bad;
    in.passed = bad.empty();
    r.checked += in.checked;
    r.max_abs_error = std::max(r.max_abs_error, in.max_abs_error);
    r.max_rel_error = std::max(r.max_rel_error, in.max_rel_error);
    if (!in.passed && r.failure.empty()) r.failure = in.failure;
  }
  r.passed = r.failure.empty();
  return r;
}

}  // namespace attn
