#include "attn/engine/copy.h"

#include "attn/engine/autograd.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/cpu_loops.h"
#include "attn/engine/kernel_table.h"

namespace attn {

#ifdef ATTN_WITH_CUDA
void copy_cuda(const Tensor& dst, const Tensor& src);  // engine/cuda/copy_cuda.cu
void fill_cuda(const Tensor& t, double value);
#endif

namespace {

template <class D, class S>
void copy_typed(const Tensor& dst, const Tensor& src) {
  D* out = dst.data<D>();
  const S* in = src.data<S>();
  std::array<std::vector<int64_t>, 2> strides{dst.strides(),
                                              broadcast_strides(src.shape(), src.strides(), dst.shape())};
  strided_loop<2>(dst.shape(), strides, [&](const std::array<int64_t, 2>& o, int64_t n, const std::array<int64_t, 2>& s) {
    D* d = out + o[0];
    const S* p = in + o[1];
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(p[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) d[i * s[0]] = static_cast<D>(p[i * s[1]]);
    }
  });
}

void copy_cpu(const Tensor& dst, const Tensor& src) {
  dispatch_all(dst.dtype(), [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    dispatch_all(src.dtype(), [&](auto stag) { copy_typed<D, typename decltype(stag)::type>(dst, src); });
  });
}

void fill_cpu(const Tensor& t, double value) {
  dispatch_all(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v = static_cast<T>(value);
    T* out = t.data<T>();
    strided_loop<1>(t.shape(), {t.strides()}, [&](const std::array<int64_t, 1>& o, int64_t n, const std::array<int64_t, 1>& s) {
      for (int64_t i = 0; i < n; ++i) out[o[0] + i * s[0]] = v;
    });
  });
}

using CopyFn = void (*)(const Tensor& dst, const Tensor& src);
using FillFn = void (*)(const Tensor& t, double value);
const DeviceKernels<CopyFn> kCopy{"copy", copy_cpu, ATTN_CUDA_KERNEL(copy_cuda)};
const DeviceKernels<FillFn> kFill{"fill", fill_cpu, ATTN_CUDA_KERNEL(fill_cuda)};

}  // namespace

void copy_into(const Tensor& dst, const Tensor& src) {
  ATTN_CHECK(dst.device() == src.device(), "copy", "destination on ", device_name(dst.device()), ", source on ",
             device_name(src.device()), "; use to_device");
  Shape b = broadcast_shapes(dst.shape(), src.shape(), "copy");
  ATTN_CHECK(b == dst.shape(), "copy", "source of shape ", shape_str(src.shape()),
             " does not broadcast to destination shape ", shape_str(dst.shape()));
  kCopy(dst.device(), dst, src);
}

void fill_(const Tensor& t, double value) { kFill(t.device(), t, value); }

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.shape(), t.dtype(), t.device());
  copy_into(out, t);
  record(out, "clone", {t}, {}, [](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g}; });
  return out;
}

Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : clone(t); }

Tensor cast(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = empty(t.shape(), dtype, t.device());
  copy_into(out, t);
  if (is_floating(dtype) && is_floating(t.dtype())) {
    DType from = t.dtype();
    record(out, "cast", {t}, {}, [from](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{cast(g, from)};
    });
  }
  return out;
}

Tensor to_device(const Tensor& t, Device device) {
  if (t.device() == device) return t;
  require_cuda("to_device");
  // Bytes move as one block, so the source is made contiguous on its own device first.
  Tensor src = contiguous(t);
  Tensor out = empty(t.shape(), t.dtype(), device);
  cuda_copy_bytes(out.raw_data(), src.raw_data(), static_cast<size_t>(t.numel()) * dtype_size(t.dtype()), device,
                  src.device());
  if (is_floating(t.dtype())) {
    const Device from = t.device();
    record(out, "to_device", {src}, {}, [from](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{to_device(g, from)};
    });
  }
  return out;
}

}  // namespace attn
