#include "attn/ops/registry.h"

#include "attn/engine/error.h"
#include "attn/engine/copy.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/view/view.h"

namespace attn {

OpSpec op_spec(const std::string& name, const std::string& family, std::function<std::vector<OpCase>()> cases) {
  OpSpec s;
  s.name = name;
  s.family = family;
  s.cases = std::move(cases);
  return s;
}

void OpRegistry::add(OpSpec spec) {
  ATTN_CHECK(find(spec.name) == nullptr, "op registry", "op '", spec.name, "' registered twice");
  specs_.push_back(std::move(spec));
}

const OpSpec* OpRegistry::find(const std::string& name) const {
  for (const OpSpec& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

const OpRegistry& op_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
#define ATTN_REGISTER_OP_SAMPLES(family) register_##family##_samples(r);
    ATTN_OP_FAMILIES(ATTN_REGISTER_OP_SAMPLES)
#undef ATTN_REGISTER_OP_SAMPLES
    return r;
  }();
  return registry;
}

namespace samples {

Tensor input(const Shape& shape, Generator& gen, double lo, double hi) {
  return rand_uniform(shape, lo, hi, gen, DType::F64).set_requires_grad(true);
}

Tensor transposed_input(const Shape& shape, Generator& gen, double lo, double hi) {
  ATTN_CHECK(shape.size() >= 2, "samples::transposed_input", "needs rank >= 2, got ", shape_str(shape));
  Shape base_shape = shape;
  std::swap(base_shape[base_shape.size() - 1], base_shape[base_shape.size() - 2]);
  Tensor base = rand_uniform(base_shape, lo, hi, gen, DType::F64);
  Tensor view = transpose(base, -1, -2).detach();
  return view.set_requires_grad(true);
}

Tensor signed_input(const Shape& shape, Generator& gen, double lo, double hi) {
  Tensor t = rand_uniform(shape, lo, hi, gen, DType::F64);
  for (int64_t i = 0; i < t.numel(); ++i)
    if (gen.uniform() < 0.5) write_element(t, i, -read_element(t, i));
  return t.set_requires_grad(true);
}

Tensor like(const Tensor& t, const Tensor& ref) {
  Tensor out = t.to(ref.device());
  if (is_floating(out.dtype()) && is_floating(ref.dtype())) out = cast(out, ref.dtype());
  return out;
}

Tensor times_ramp(const Tensor& y) {
  Tensor ramp = empty(y.shape(), DType::F64);
  for (int64_t i = 0; i < ramp.numel(); ++i) write_element(ramp, i, 1.0 + 0.1 * static_cast<double>(i));
  return y * like(ramp, y);
}

Tensor u8_mask(const std::vector<int64_t>& values, const Shape& shape) {
  Tensor m = empty(shape, DType::U8);
  ATTN_CHECK(static_cast<int64_t>(values.size()) == m.numel(), "samples::u8_mask", values.size(),
             " values for shape ", shape_str(shape));
  for (int64_t i = 0; i < m.numel(); ++i) m.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
  return m;
}

Tensor length_mask(const std::vector<int64_t>& lengths, int64_t n) {
  std::vector<int64_t> bits;
  for (int64_t len : lengths)
    for (int64_t t = 0; t < n; ++t) bits.push_back(t < len);
  return u8_mask(bits, {static_cast<int64_t>(lengths.size()), n});
}

}  // namespace samples

}  // namespace attn
