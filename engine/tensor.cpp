#include "attn/engine/tensor.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/engine/copy.h"

namespace attn {

namespace {
const TensorImpl& checked(const std::shared_ptr<TensorImpl>& impl) {
  if (!impl) throw Error("tensor: use of an undefined tensor");
  return *impl;
}
}  // namespace

DType Tensor::dtype() const { return checked(impl_).dtype; }
Device Tensor::device() const { return checked(impl_).storage->device(); }
const Shape& Tensor::shape() const { return checked(impl_).shape; }
const std::vector<int64_t>& Tensor::strides() const { return checked(impl_).strides; }
int64_t Tensor::offset() const { return checked(impl_).offset; }
const std::shared_ptr<Storage>& Tensor::storage() const { return checked(impl_).storage; }

int64_t Tensor::size(int64_t axis) const {
  return shape()[normalize_axis(axis, dim(), "size")];
}

int64_t Tensor::numel() const { return numel_of(shape()); }

bool Tensor::is_contiguous() const {
  const Shape& s = shape();
  const auto& st = strides();
  int64_t expected = 1;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == 1) continue;
    if (st[i] != expected) return false;
    expected *= s[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  const TensorImpl& t = checked(impl_);
  return static_cast<char*>(t.storage->data()) + t.offset * static_cast<int64_t>(dtype_size(t.dtype));
}

template <class T> T* Tensor::data() const {
  ATTN_CHECK(dtype() == dtype_of<T>(), "data", "tensor holds ", dtype_name(dtype()), ", not ",
             dtype_name(dtype_of<T>()));
  return static_cast<T*>(raw_data());
}
template float* Tensor::data<float>() const;
template double* Tensor::data<double>() const;
template uint8_t* Tensor::data<uint8_t>() const;
template int64_t* Tensor::data<int64_t>() const;

bool Tensor::requires_grad() const { return checked(impl_).requires_grad; }

Tensor& Tensor::set_requires_grad(bool value) {
  checked(impl_);
  ATTN_CHECK(!value || is_floating(dtype()), "set_requires_grad", "only floating tensors can require grad, got ",
             dtype_name(dtype()));
  ATTN_CHECK(impl_->grad_fn == nullptr, "set_requires_grad",
             "can only be set on leaves; call detach() first to make a new leaf");
  impl_->requires_grad = value;
  return *this;
}

bool Tensor::is_leaf() const { return checked(impl_).grad_fn == nullptr; }
const std::shared_ptr<Node>& Tensor::grad_fn() const { return checked(impl_).grad_fn; }
Tensor Tensor::grad() const { return checked(impl_).grad; }
void Tensor::set_grad(const Tensor& g) const {
  checked(impl_);
  impl_->grad = g;
}
void Tensor::zero_grad() const {
  checked(impl_);
  impl_->grad = Tensor();
}

void Tensor::backward(const Tensor& grad_output, bool retain_graph) const {
  run_backward(*this, grad_output, retain_graph);
}

HookHandle Tensor::register_hook(std::function<Tensor(const Tensor& grad)> hook) const {
  return register_gradient_hook(*this, std::move(hook));
}

Tensor Tensor::detach() const {
  const TensorImpl& t = checked(impl_);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = t.storage;
  impl->shape = t.shape;
  impl->strides = t.strides;
  impl->offset = t.offset;
  impl->dtype = t.dtype;
  return Tensor(impl);
}

Tensor Tensor::to(Device device) const { return to_device(*this, device); }

double Tensor::item() const {
  ATTN_CHECK(numel() == 1, "item", "tensor of shape ", shape_str(shape()), " is not a single value");
  if (device() != Device::CPU) return detach().to(Device::CPU).item();
  return read_element(*this, 0);
}

double Tensor::at(std::initializer_list<int64_t> index) const {
  ATTN_CHECK(static_cast<int64_t>(index.size()) == dim(), "at", "index of rank ", index.size(),
             " for tensor of shape ", shape_str(shape()));
  if (device() != Device::CPU) return detach().to(Device::CPU).at(index);
  int64_t flat = 0, i = 0;
  for (int64_t v : index) {
    ATTN_CHECK(v >= 0 && v < shape()[i], "at", "index ", v, " out of range for axis ", i, " of shape ",
               shape_str(shape()));
    flat = flat * shape()[i] + v;
    ++i;
  }
  return read_element(*this, flat);
}

std::vector<double> Tensor::to_vector() const {
  if (device() != Device::CPU) return detach().to(Device::CPU).to_vector();
  std::vector<double> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[i] = read_element(*this, i);
  return out;
}

std::string Tensor::to_string() const {
  if (device() != Device::CPU) return detach().to(Device::CPU).to_string();
  std::ostringstream os;
  os << "tensor(" << dtype_name(dtype()) << ", " << shape_str(shape()) << ", [";
  int64_t n = numel();
  for (int64_t i = 0; i < n && i < 32; ++i) os << (i ? ", " : "") << read_element(*this, i);
  if (n > 32) os << ", ...";
  os << "])";
  return os.str();
}

Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape) ATTN_CHECK(d >= 0, "empty", "negative dimension in shape ", shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  const int64_t count = numel_of(shape);
  const int64_t element_bytes = static_cast<int64_t>(dtype_size(dtype));
  ATTN_CHECK(count <= INT64_MAX / element_bytes, "empty", "a tensor of shape ", shape_str(shape), " and dtype ",
             dtype_name(dtype), " needs more than 2^63 - 1 bytes");
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(count * element_bytes), device);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(impl);
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  fill_(t, value);
  return t;
}

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  if (device == Device::CPU) std::memset(t.raw_data(), 0, static_cast<size_t>(t.numel()) * dtype_size(dtype));
  else fill_(t, 0.0);
  return t;
}

Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }

Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  ATTN_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape), "from_vector", values.size(),
             " values do not fill shape ", shape_str(shape));
  Tensor t = empty(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) write_element(t, static_cast<int64_t>(i), values[i]);
  return t;
}

Tensor from_indices(const std::vector<int64_t>& values, const Shape& shape) {
  ATTN_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape), "from_indices", values.size(),
             " values do not fill shape ", shape_str(shape));
  Tensor t = empty(shape, DType::I64);
  if (!values.empty()) std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

std::vector<int64_t> to_indices(const Tensor& t) {
  ATTN_CHECK(t.defined() && t.dtype() == DType::I64, "to_indices", "expects an int64 tensor, got ",
             t.defined() ? dtype_name(t.dtype()) : "an undefined tensor");
  if (t.device() != Device::CPU) return to_indices(t.to(Device::CPU));
  const int64_t* base = static_cast<const int64_t*>(t.storage()->data());
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = base[element_offset(t, i)];
  return out;
}

Tensor scalar(double value, DType dtype, Device device) { return full({}, value, dtype, device); }

Tensor arange(int64_t n, DType dtype) {
  Tensor t = empty({n}, dtype);
  for (int64_t i = 0; i < n; ++i) write_element(t, i, static_cast<double>(i));
  return t;
}

Tensor empty_in_layout_of(const Tensor& like, DType dtype, Device device) {
  const Shape& shape = like.shape();
  const std::vector<int64_t>& strides = like.strides();
  // Axes from the slowest to the fastest; a size-1 axis's stride is unused,
  // so it goes first (outermost), where it changes nothing.
  std::vector<size_t> order(shape.size());
  for (size_t a = 0; a < order.size(); ++a) order[a] = a;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const int64_t sx = shape[x] == 1 ? INT64_MAX : strides[x], sy = shape[y] == 1 ? INT64_MAX : strides[y];
    return sx > sy;
  });
  bool dense = true;
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    const size_t a = order[i];
    if (shape[a] == 1) continue;
    dense = dense && strides[a] == step;
    step *= shape[a];
  }
  if (!dense) return empty(shape, dtype, device);
  Shape stored(shape.size());
  for (size_t i = 0; i < order.size(); ++i) stored[i] = shape[order[i]];
  Tensor block = empty(stored, dtype, device);
  std::vector<int64_t> view_strides(shape.size());
  for (size_t i = 0; i < order.size(); ++i) view_strides[order[i]] = block.strides()[i];
  return make_view(block, shape, view_strides, 0);
}

Tensor make_view(const Tensor& t, const Shape& shape, const std::vector<int64_t>& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = t.storage();
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = t.dtype();
  return Tensor(impl);
}

int64_t element_offset(const Tensor& t, int64_t flat_index) {
  const Shape& s = t.shape();
  const auto& st = t.strides();
  int64_t off = t.offset();
  for (size_t i = s.size(); i-- > 0;) {
    int64_t idx = flat_index % s[i];
    flat_index /= s[i];
    off += idx * st[i];
  }
  return off;
}

double read_element(const Tensor& t, int64_t flat_index) {
  ATTN_CHECK(t.device() == Device::CPU, "read_element", "tensor is on ", device_name(t.device()),
             "; copy it to the cpu first");
  ATTN_CHECK(flat_index >= 0 && flat_index < t.numel(), "read_element", "index ", flat_index,
             " out of range for shape ", shape_str(t.shape()));
  const char* base = static_cast<const char*>(t.storage()->data());
  int64_t off = element_offset(t, flat_index);
  switch (t.dtype()) {
    case DType::F32: return reinterpret_cast<const float*>(base)[off];
    case DType::F64: return reinterpret_cast<const double*>(base)[off];
    case DType::U8: return reinterpret_cast<const uint8_t*>(base)[off];
    case DType::I64: return static_cast<double>(reinterpret_cast<const int64_t*>(base)[off]);
  }
  return 0;
}

void write_element(const Tensor& t, int64_t flat_index, double value) {
  ATTN_CHECK(t.device() == Device::CPU, "write_element", "tensor is on ", device_name(t.device()));
  ATTN_CHECK(flat_index >= 0 && flat_index < t.numel(), "write_element", "index ", flat_index,
             " out of range for shape ", shape_str(t.shape()));
  char* base = static_cast<char*>(t.storage()->data());
  int64_t off = element_offset(t, flat_index);
  switch (t.dtype()) {
    case DType::F32: reinterpret_cast<float*>(base)[off] = static_cast<float>(value); break;
    case DType::F64: reinterpret_cast<double*>(base)[off] = value; break;
    case DType::U8: reinterpret_cast<uint8_t*>(base)[off] = static_cast<uint8_t>(value); break;
    case DType::I64: reinterpret_cast<int64_t*>(base)[off] = static_cast<int64_t>(value); break;
  }
}

}  // namespace attn
