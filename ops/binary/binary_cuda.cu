// CUDA kernels of the binary family over broadcast strides: each output
// element is one thread of a grid-stride loop; operands read through the
// offset calculator (a contiguous fast path when no operand broadcasts).
#include "attn/ops/binary/binary_kernels.h"
#include "attn/ops/binary/binary_math.h"
#include "attn/engine/cuda/cuda_loops.cuh"

namespace attn {

namespace {

template <class T, class M>
struct BinaryFn {
  T* out;
  const T* a;
  const T* b;
  __device__ void operator()(const cuda::Offsets<3>& o) const { out[o.v[0]] = M::f(a[o.v[1]], b[o.v[2]]); }
};

template <class T, class M>
struct CompareFn {
  uint8_t* out;
  const T* a;
  const T* b;
  __device__ void operator()(const cuda::Offsets<3>& o) const {
    out[o.v[0]] = M::f(a[o.v[1]], b[o.v[2]]) ? uint8_t(1) : uint8_t(0);
  }
};

template <class T>
struct WhereFn {
  T* out;
  const uint8_t* cond;
  const T* a;
  const T* b;
  __device__ void operator()(const cuda::Offsets<4>& o) const { out[o.v[0]] = cond[o.v[1]] ? a[o.v[2]] : b[o.v[3]]; }
};

template <class T>
struct AxpyFn {
  T* dst;
  const T* src;
  T alpha;
  __device__ void operator()(const cuda::Offsets<2>& o) const { dst[o.v[0]] += alpha * src[o.v[1]]; }
};

}  // namespace

void binary_forward_cuda(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* name = binary_op_name(op);
  dispatch_floating(out.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      BinaryFn<T, M> f{out.data<T>(), a.data<T>(), b.data<T>()};
      cuda::launch_strided<3>(name, out.shape(),
                              {out.strides(), broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())}, f);
    });
  });
}

void compare_cuda(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_all(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_math::visit(op, [&](auto math) {
      using M = decltype(math);
      CompareFn<T, M> f{out.data<uint8_t>(), a.data<T>(), b.data<T>()};
      cuda::launch_strided<3>("compare", out.shape(),
                              {out.strides(), broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())}, f);
    });
  });
}

void where_cuda(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    WhereFn<T> f{out.data<T>(), cond.data<uint8_t>(), a.data<T>(), b.data<T>()};
    cuda::launch_strided<4>("where", out.shape(),
                            {out.strides(), broadcast_strides(cond, out.shape()), broadcast_strides(a, out.shape()),
                             broadcast_strides(b, out.shape())},
                            f);
  });
}

// dst is written once per element (its strides never alias two elements).
void axpy_cuda(const Tensor& dst, double alpha, const Tensor& src) {
  dispatch_floating(dst.dtype(), "axpy_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AxpyFn<T> f{dst.data<T>(), src.data<T>(), static_cast<T>(alpha)};
    cuda::launch_strided<2>("axpy_", dst.shape(), {dst.strides(), broadcast_strides(src, dst.shape())}, f);
  });
}

}  // namespace attn
