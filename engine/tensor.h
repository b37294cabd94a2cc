// The tensor: a shared storage plus shape, strides (in elements) and offset.
// Views share storage; broadcasting is a stride of 0. A Tensor is a cheap
// handle: copying it shares the same tensor (and its autograd identity).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/device.h"
#include "attn/engine/dtype.h"
#include "attn/engine/shape.h"
#include "attn/engine/storage.h"

namespace attn {

struct Node;
struct TensorImpl;
struct GradientHookList;
class HookHandle;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  Device device() const;
  const Shape& shape() const;
  const std::vector<int64_t>& strides() const;
  int64_t offset() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t size(int64_t axis) const;  // negative axes count from the end
  int64_t numel() const;
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const;

  // Pointer to the first element (storage + offset); checks T against dtype().
  template <class T> T* data() const;
  void* raw_data() const;

  // Autograd.
  bool requires_grad() const;
  // Marks a leaf as a parameter/input that receives a gradient.
  Tensor& set_requires_grad(bool value = true);
  bool is_leaf() const;
  const std::shared_ptr<Node>& grad_fn() const;
  Tensor grad() const;  // undefined until a backward pass reaches this leaf
  void set_grad(const Tensor& g) const;
  void zero_grad() const;  // drops the accumulated gradient
  // Reverse-mode pass from this tensor. A scalar needs no `grad_output`.
  void backward(const Tensor& grad_output = Tensor(), bool retain_graph = false) const;
  // Calls `hook` with this tensor's gradient during backward; the hook may
  // return a replacement (engine/gradient_hooks.h says when hooks run).
  HookHandle register_hook(std::function<Tensor(const Tensor& grad)> hook) const;
  // Same data, no history.
  Tensor detach() const;
  // This tensor on `device` (itself when already there; a non-contiguous
  // source is made contiguous first). Differentiable: the gradient moves back.
  Tensor to(Device device) const;

  // Slow element access for tests, printing and the command line (a CUDA
  // tensor is copied to the host first).
  double item() const;
  double at(std::initializer_list<int64_t> index) const;
  std::vector<double> to_vector() const;
  std::string to_string() const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  DType dtype = DType::F32;
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  std::shared_ptr<GradientHookList> grad_hooks;  // a leaf's; a non-leaf's live on its grad_fn
};

// Factories. New tensors are contiguous.
Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::CPU);
Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::CPU);
Tensor full(const Shape& shape, double value, DType dtype = DType::F32, Device device = Device::CPU);
Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::CPU);
Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype = DType::F32);
Tensor from_indices(const std::vector<int64_t>& values, const Shape& shape);
// The elements of an int64 tensor (labels, argmax results) in row-major
// order, from any layout and device: the inverse of from_indices.
std::vector<int64_t> to_indices(const Tensor& t);
// A new tensor of like's shape whose axes are stored in like's order when
// like is dense (its elements fill one block, the axes in some order: a
// permuted contiguous tensor, e.g. split heads in token-major order), else
// contiguous. An elementwise op that writes it in that layout lets a later
// permute-and-reshape of its result stay a view.
Tensor empty_in_layout_of(const Tensor& like, DType dtype, Device device);
Tensor scalar(double value, DType dtype = DType::F32, Device device = Device::CPU);
Tensor arange(int64_t n, DType dtype = DType::F32);

// A view over t's storage with new geometry, without autograd history. Ops
// build on this; users call the differentiable views in ops/view.h.
Tensor make_view(const Tensor& t, const Shape& shape, const std::vector<int64_t>& strides, int64_t offset);
// t's strides read as if t were expanded to `target` (0 on broadcast axes).
inline std::vector<int64_t> broadcast_strides(const Tensor& t, const Shape& target) {
  return broadcast_strides(t.shape(), t.strides(), target);
}

// Element offset (in elements, relative to storage start) of the i-th element
// in row-major logical order.
int64_t element_offset(const Tensor& t, int64_t flat_index);

// Reads/writes one element as double (CPU tensors only; used by gradcheck).
double read_element(const Tensor& t, int64_t flat_index);
void write_element(const Tensor& t, int64_t flat_index, double value);

extern template float* Tensor::data<float>() const;
extern template double* Tensor::data<double>() const;
extern template uint8_t* Tensor::data<uint8_t>() const;
extern template int64_t* Tensor::data<int64_t>() const;

}  // namespace attn
