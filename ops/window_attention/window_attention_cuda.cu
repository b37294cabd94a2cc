// CUDA kernels of the fused window attention. Forward: one warp per query row
// (g, j): lanes take the band offsets t for the scores, the row's max and sum
// are warp reductions, then lanes take the features for out (coalesced reads
// of v). Backward: one warp per query row writes dS = scale P (dP - delta)
// into a [G, n, W] scratch and grad_q; then one thread per key element
// (g, i, l) gathers grad_k and grad_v over the queries whose band holds key i.
// No atomics, so results are deterministic. Operands are read and written
// through their row strides (HeadRows), the feature axis contiguous.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/window_attention/window_attention_kernels.h"

namespace attn {

namespace {

struct Sizes {
  int64_t G, heads, n, d, W, R;
  bool per_head_mask;
};

Sizes sizes_of(const Tensor& q, const Tensor& allowed) {
  const int64_t W = allowed.size(allowed.dim() - 1);
  return {q.size(0) * q.size(1), q.size(1), q.size(2), q.size(3), W, (W - 1) / 2, allowed.dim() == 4};
}

// Row j of head g = (b, c) of an operand, through its strides.
__device__ __forceinline__ int64_t row_at(const HeadRows& r, const Sizes& z, int64_t g, int64_t j) {
  return r.at(g / z.heads, g % z.heads, j);
}

using Row = cuda::RowGroup<false>;  // one warp per query row

// Band offset t of query j names key j - R + t; it is attended when that key
// lies inside [0, n) and the example's band mask allows it.
__device__ __forceinline__ bool attends(const Sizes& z, const uint8_t* allowed_row, int64_t j, int64_t t) {
  const int64_t i = j - z.R + t;
  return i >= 0 && i < z.n && allowed_row[t] != 0;
}

__device__ __forceinline__ const uint8_t* allowed_row(const uint8_t* allowed, const Sizes& z, int64_t g, int64_t j) {
  return allowed + ((z.per_head_mask ? g : g / z.heads) * z.n + j) * z.W;
}

template <class T>
__device__ __forceinline__ T dot(const T* a, const T* b, int64_t d) {
  T s = 0;
  for (int64_t l = 0; l < d; ++l) s += a[l] * b[l];
  return s;
}

template <class T>
__global__ void forward_kernel(const T* q, const T* k, const T* v, const uint8_t* allowed, Sizes z, HeadRows qa,
                               HeadRows ka, HeadRows va, HeadRows oa, T scale, T* out, T* probs) {
  for (int64_t r = Row::first_row(); r < z.G * z.n; r += Row::row_step()) {
    const int64_t g = r / z.n, j = r % z.n;
    const uint8_t* ok = allowed_row(allowed, z, g, j);
    T* p = probs + r * z.W;
    T* o = out + row_at(oa, z, g, j);
    // Scores of the allowed keys (parked in p) and their maximum.
    T m = cuda::neg_inf<T>();
    for (int64_t t = Row::lane(); t < z.W; t += Row::size()) {
      if (!attends(z, ok, j, t)) {
        p[t] = T(0);
        continue;
      }
      p[t] = scale * dot(q + row_at(qa, z, g, j), k + row_at(ka, z, g, j - z.R + t), z.d);
      m = p[t] > m ? p[t] : m;
    }
    m = Row::reduce(m, cuda::MaxOp{}, cuda::neg_inf<T>(), static_cast<T*>(nullptr));
    if (m == cuda::neg_inf<T>()) {  // no allowed key: zeros (p already is)
      for (int64_t l = Row::lane(); l < z.d; l += Row::size()) o[l] = T(0);
      continue;
    }
    T sum = 0;
    for (int64_t t = Row::lane(); t < z.W; t += Row::size())
      if (attends(z, ok, j, t)) sum += (p[t] = exp(p[t] - m));
    sum = Row::reduce(sum, cuda::SumOp{}, T(0), static_cast<T*>(nullptr));  // >= 1: the max term is exp(0)
    for (int64_t t = Row::lane(); t < z.W; t += Row::size())
      if (attends(z, ok, j, t)) p[t] /= sum;
    __syncwarp();  // every lane reads the whole row of p below
    for (int64_t l = Row::lane(); l < z.d; l += Row::size()) {
      T acc = 0;
      for (int64_t t = 0; t < z.W; ++t)
        if (attends(z, ok, j, t)) acc += p[t] * v[row_at(va, z, g, j - z.R + t) + l];
      o[l] = acc;
    }
    __syncwarp();  // the next row's lanes reuse nothing, but keep the warp in step
  }
}

template <class T>
__global__ void grad_queries_kernel(const T* grad, const T* k, const T* v, const uint8_t* allowed, const T* probs,
                                    Sizes z, HeadRows ga, HeadRows ka, HeadRows va, HeadRows dqa, T scale, T* ds,
                                    T* gq) {
  for (int64_t r = Row::first_row(); r < z.G * z.n; r += Row::row_step()) {
    const int64_t g = r / z.n, j = r % z.n;
    const uint8_t* ok = allowed_row(allowed, z, g, j);
    const T* p = probs + r * z.W;
    T* dsr = ds + r * z.W;
    // dP parked in ds; delta = sum_t P dP over the allowed keys.
    T delta = 0;
    for (int64_t t = Row::lane(); t < z.W; t += Row::size()) {
      if (!attends(z, ok, j, t)) {
        dsr[t] = T(0);
        continue;
      }
      dsr[t] = dot(grad + row_at(ga, z, g, j), v + row_at(va, z, g, j - z.R + t), z.d);
      delta += p[t] * dsr[t];
    }
    delta = Row::reduce(delta, cuda::SumOp{}, T(0), static_cast<T*>(nullptr));
    for (int64_t t = Row::lane(); t < z.W; t += Row::size())
      if (attends(z, ok, j, t)) dsr[t] = scale * p[t] * (dsr[t] - delta);
    __syncwarp();  // every lane reads the whole row of ds below
    for (int64_t l = Row::lane(); l < z.d; l += Row::size()) {
      T acc = 0;
      for (int64_t t = 0; t < z.W; ++t)
        if (attends(z, ok, j, t)) acc += dsr[t] * k[row_at(ka, z, g, j - z.R + t) + l];
      gq[row_at(dqa, z, g, j) + l] = acc;
    }
    __syncwarp();
  }
}

// Key i sits at band offset t = i - j + R of query j = i + R - t.
template <class T>
__global__ void grad_keys_kernel(const T* grad, const T* q, const uint8_t* allowed, const T* probs, const T* ds,
                                 Sizes z, HeadRows ga, HeadRows qa, HeadRows dka, HeadRows dva, T* gk, T* gv) {
  ATTN_CUDA_LOOP(e, z.G * z.n * z.d) {
    const int64_t l = e % z.d, gi = e / z.d, g = gi / z.n, i = gi % z.n;
    T sum_k = 0, sum_v = 0;
    for (int64_t t = 0; t < z.W; ++t) {
      const int64_t j = i + z.R - t;
      if (j < 0 || j >= z.n || !allowed_row(allowed, z, g, j)[t]) continue;
      const int64_t row = g * z.n + j;
      sum_k += ds[row * z.W + t] * q[row_at(qa, z, g, j) + l];
      sum_v += probs[row * z.W + t] * grad[row_at(ga, z, g, j) + l];
    }
    gk[row_at(dka, z, g, i) + l] = sum_k;
    gv[row_at(dva, z, g, i) + l] = sum_v;
  }
}

}  // namespace

void window_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                   double scale, const Tensor& out, const Tensor& probabilities) {
  dispatch_floating(q.dtype(), "window_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes z = sizes_of(q, allowed);
    if (z.G * z.n == 0) return;
    const cuda::RowLaunch l = cuda::row_launch(z.G * z.n, 1);  // warp rows
    ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), forward_kernel<T>)(
        q.data<T>(), k.data<T>(), v.data<T>(), allowed.data<uint8_t>(), z, head_rows(q), head_rows(k), head_rows(v),
        head_rows(out), static_cast<T>(scale), out.data<T>(), probabilities.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("window_attention");
  });
}

void window_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& allowed, const Tensor& probabilities, double scale,
                                    const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  dispatch_floating(q.dtype(), "window_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes z = sizes_of(q, allowed);
    if (z.G * z.n == 0) return;
    Tensor ds = empty({z.G * z.n * z.W}, q.dtype(), q.device());
    const cuda::RowLaunch l = cuda::row_launch(z.G * z.n, 1);
    ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), grad_queries_kernel<T>)(
        grad.data<T>(), k.data<T>(), v.data<T>(), allowed.data<uint8_t>(), probabilities.data<T>(), z,
        head_rows(grad), head_rows(k), head_rows(v), head_rows(grad_q), static_cast<T>(scale), ds.data<T>(),
        grad_q.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("window_attention_backward");
    const int64_t keys = z.G * z.n * z.d;
    if (keys == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(keys), cuda::kThreads, 0, cuda::stream(), grad_keys_kernel<T>)(
        grad.data<T>(), q.data<T>(), allowed.data<uint8_t>(), probabilities.data<T>(), ds.data<T>(), z,
        head_rows(grad), head_rows(q), head_rows(grad_k), head_rows(grad_v), grad_k.data<T>(), grad_v.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("window_attention_backward");
  });
}

}  // namespace attn
