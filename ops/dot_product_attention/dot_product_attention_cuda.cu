// CUDA kernels of the fused dot-product attention. Forward: one warp per
// query row (b, c, j): lanes take the keys for the scores, the row's max and
// sum are warp reductions, then lanes take the features for out. Backward:
// one warp per query row writes dS = scale P (dP - delta) into a
// [B, h, nq, nk] scratch and grad_q; then one thread per key element
// (b, c, i, l) gathers grad_k and grad_v over the queries. Keys that are not
// valid are skipped everywhere (never weighted by zero). No atomics, so
// results are deterministic. Operands are read through their row strides
// (HeadRows), the feature axis contiguous.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/dot_product_attention/dot_product_attention_kernels.h"

namespace attn {

namespace {

struct Sizes {
  int64_t B, heads, nq, nk, d;
};

Sizes sizes_of(const Tensor& q, const Tensor& k) { return {q.size(0), q.size(1), q.size(2), k.size(2), q.size(3)}; }

using Row = cuda::RowGroup<false>;  // one warp per query row

template <class T>
__device__ __forceinline__ T dot(const T* a, const T* b, int64_t d) {
  T s = 0;
  for (int64_t l = 0; l < d; ++l) s += a[l] * b[l];
  return s;
}

template <class T>
__global__ void forward_kernel(const T* q, const T* k, const T* v, const uint8_t* valid, Sizes z, HeadRows qa,
                               HeadRows ka, HeadRows va, HeadRows oa, T scale, T* out, T* probs) {
  for (int64_t r = Row::first_row(); r < z.B * z.heads * z.nq; r += Row::row_step()) {
    const int64_t j = r % z.nq, g = r / z.nq, b = g / z.heads, c = g % z.heads;
    const uint8_t* ok = valid + b * z.nk;
    const T* qj = q + qa.at(b, c, j);
    T* p = probs + r * z.nk;
    T* o = out + oa.at(b, c, j);
    // Scores of the valid keys (parked in p) and their maximum.
    T m = cuda::neg_inf<T>();
    for (int64_t i = Row::lane(); i < z.nk; i += Row::size()) {
      if (!ok[i]) {
        p[i] = T(0);
        continue;
      }
      p[i] = scale * dot(qj, k + ka.at(b, c, i), z.d);
      m = p[i] > m ? p[i] : m;
    }
    m = Row::reduce(m, cuda::MaxOp{}, cuda::neg_inf<T>(), static_cast<T*>(nullptr));
    if (m == cuda::neg_inf<T>()) {  // no valid key: zeros (p already is)
      for (int64_t l = Row::lane(); l < z.d; l += Row::size()) o[l] = T(0);
      continue;
    }
    T sum = 0;
    for (int64_t i = Row::lane(); i < z.nk; i += Row::size())
      if (ok[i]) sum += (p[i] = exp(p[i] - m));
    sum = Row::reduce(sum, cuda::SumOp{}, T(0), static_cast<T*>(nullptr));  // >= 1: the max term is exp(0)
    for (int64_t i = Row::lane(); i < z.nk; i += Row::size())
      if (ok[i]) p[i] /= sum;
    __syncwarp();  // every lane reads the whole row of p below
    for (int64_t l = Row::lane(); l < z.d; l += Row::size()) {
      T acc = 0;
      for (int64_t i = 0; i < z.nk; ++i)
        if (ok[i]) acc += p[i] * v[va.at(b, c, i) + l];
      o[l] = acc;
    }
    __syncwarp();
  }
}

template <class T>
__global__ void grad_queries_kernel(const T* grad, const T* k, const T* v, const uint8_t* valid, const T* probs,
                                    Sizes z, HeadRows ga, HeadRows ka, HeadRows va, HeadRows dqa, T scale, T* ds,
                                    T* gq) {
  for (int64_t r = Row::first_row(); r < z.B * z.heads * z.nq; r += Row::row_step()) {
    const int64_t j = r % z.nq, g = r / z.nq, b = g / z.heads, c = g % z.heads;
    const uint8_t* ok = valid + b * z.nk;
    const T* gj = grad + ga.at(b, c, j);
    const T* p = probs + r * z.nk;
    T* dsr = ds + r * z.nk;
    // dP parked in ds; delta = sum_i P dP over the valid keys.
    T delta = 0;
    for (int64_t i = Row::lane(); i < z.nk; i += Row::size()) {
      if (!ok[i]) {
        dsr[i] = T(0);
        continue;
      }
      dsr[i] = dot(gj, v + va.at(b, c, i), z.d);
      delta += p[i] * dsr[i];
    }
    delta = Row::reduce(delta, cuda::SumOp{}, T(0), static_cast<T*>(nullptr));
    for (int64_t i = Row::lane(); i < z.nk; i += Row::size())
      if (ok[i]) dsr[i] = scale * p[i] * (dsr[i] - delta);
    __syncwarp();  // every lane reads the whole row of ds below
    T* dq = gq + dqa.at(b, c, j);
    for (int64_t l = Row::lane(); l < z.d; l += Row::size()) {
      T acc = 0;
      for (int64_t i = 0; i < z.nk; ++i)
        if (ok[i]) acc += dsr[i] * k[ka.at(b, c, i) + l];
      dq[l] = acc;
    }
    __syncwarp();
  }
}

template <class T>
__global__ void grad_keys_kernel(const T* grad, const T* q, const uint8_t* valid, const T* probs, const T* ds, Sizes z,
                                 HeadRows ga, HeadRows qa, HeadRows dka, HeadRows dva, T* gk, T* gv) {
  ATTN_CUDA_LOOP(e, z.B * z.heads * z.nk * z.d) {
    const int64_t l = e % z.d, gi = e / z.d, i = gi % z.nk, g = gi / z.nk, b = g / z.heads, c = g % z.heads;
    T sum_k = 0, sum_v = 0;
    if (valid[b * z.nk + i]) {
      for (int64_t j = 0; j < z.nq; ++j) {
        const int64_t pr = (g * z.nq + j) * z.nk + i;
        sum_k += ds[pr] * q[qa.at(b, c, j) + l];
        sum_v += probs[pr] * grad[ga.at(b, c, j) + l];
      }
    }
    gk[dka.at(b, c, i) + l] = sum_k;
    gv[dva.at(b, c, i) + l] = sum_v;
  }
}

}  // namespace

void dot_product_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                        double scale, const Tensor& out, const Tensor& probabilities) {
  dispatch_floating(q.dtype(), "dot_product_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes z = sizes_of(q, k);
    const int64_t rows = z.B * z.heads * z.nq;
    if (rows == 0) return;
    const cuda::RowLaunch l = cuda::row_launch(rows, 1);  // warp rows
    ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), forward_kernel<T>)
    (q.data<T>(), k.data<T>(), v.data<T>(), key_valid.data<uint8_t>(), z, head_rows(q), head_rows(k), head_rows(v),
     head_rows(out), static_cast<T>(scale), out.data<T>(), probabilities.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("dot_product_attention");
  });
}

void dot_product_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                         const Tensor& key_valid, const Tensor& probabilities, double scale,
                                         const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  dispatch_floating(q.dtype(), "dot_product_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes z = sizes_of(q, k);
    const int64_t rows = z.B * z.heads * z.nq;
    Tensor ds = empty({rows * z.nk}, q.dtype(), q.device());
    if (rows > 0) {
      const cuda::RowLaunch l = cuda::row_launch(rows, 1);
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), grad_queries_kernel<T>)
      (grad.data<T>(), k.data<T>(), v.data<T>(), key_valid.data<uint8_t>(), probabilities.data<T>(), z, head_rows(grad),
       head_rows(k), head_rows(v), head_rows(grad_q), static_cast<T>(scale), ds.data<T>(), grad_q.data<T>());
      ATTN_CUDA_CHECK_LAUNCH("dot_product_attention_backward");
    }
    const int64_t keys = z.B * z.heads * z.nk * z.d;
    if (keys == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(keys), cuda::kThreads, 0, cuda::stream(), grad_keys_kernel<T>)
    (grad.data<T>(), q.data<T>(), key_valid.data<uint8_t>(), probabilities.data<T>(), ds.data<T>(), z, head_rows(grad),
     head_rows(q), head_rows(grad_k), head_rows(grad_v), grad_k.data<T>(), grad_v.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("dot_product_attention_backward");
  });
}

}  // namespace attn
