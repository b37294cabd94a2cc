// The CUDA kernels of fused attention over a row of key slots per query,
// shared by dot_product_attention (slot i of a query is key i) and
// window_attention (slot t of query j is key j - R + t of its band).
// Forward: one warp per query row: lanes take the slots for the scores, the
// row's max and sum are warp reductions, then lanes take the features for
// out (coalesced reads of v). Backward: one warp per query row writes
// dS = scale P (dP - delta) into a scratch shaped like P and grad_q; then
// one thread per key element (g, i, l) gathers grad_k and grad_v over the
// slots that hold key i. Slots a query may not attend are skipped
// everywhere (never weighted by zero). No atomics, so results are
// deterministic. Operands are read and written through their row strides
// (HeadRows), the feature axis contiguous.
//
// Each op's .cu brings a Keys policy:
//   count(), queries(), keys(), features(): the G = B h heads, nq, nk and d;
//     slots(): P's entries per query; walk(): the candidate slots of a key.
//     Functions, not fields, so that what is one number for an op (the
//     window's nq = nk = n and slots = walk = W) is one value in its kernels.
//   head(g): a Head, whose at(a, i) is where row i of head g = (b, c) starts
//     in operand a (HeadRows);
//   query(r): row r = g nq + j of P as a Query, a Head with its query j,
//     attends(t) (slot t names a key the query may attend) and key(t);
//   key_passes(g, i): key i of head g may get a gradient at all;
//   query_of(i, u), slot_of(i, u): key i's u-th candidate, slot t of query
//     j, which holds key i unless j is outside [0, nq) or skips(g, j, t).
#pragma once
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/head_rows.h"

namespace attn {
namespace attention_rows {

using Row = cuda::RowGroup<false>;  // one warp per query row

template <class T>
__device__ __forceinline__ T dot(const T* a, const T* b, int64_t d) {
  T s = 0;
  for (int64_t l = 0; l < d; ++l) s += a[l] * b[l];
  return s;
}

template <class Keys, class T>
__global__ void forward_kernel(const T* q, const T* k, const T* v, Keys keys, HeadRows qa, HeadRows ka, HeadRows va,
                               HeadRows oa, T scale, T* out, T* probs) {
  for (int64_t r = Row::first_row(); r < keys.count() * keys.queries(); r += Row::row_step()) {
    const typename Keys::Query x = keys.query(r);
    const T* qj = q + x.at(qa, x.j);
    T* p = probs + r * keys.slots();
    T* o = out + x.at(oa, x.j);
    // Scores of the attended keys (parked in p) and their maximum.
    T m = cuda::neg_inf<T>();
    for (int64_t t = Row::lane(); t < keys.slots(); t += Row::size()) {
      if (!x.attends(t)) {
        p[t] = T(0);
        continue;
      }
      p[t] = scale * dot(qj, k + x.at(ka, x.key(t)), keys.features());
      m = p[t] > m ? p[t] : m;
    }
    m = Row::reduce(m, cuda::MaxOp{}, cuda::neg_inf<T>(), static_cast<T*>(nullptr));
    if (m == cuda::neg_inf<T>()) {  // no attended key: zeros (p already is)
      for (int64_t l = Row::lane(); l < keys.features(); l += Row::size()) o[l] = T(0);
      continue;
    }
    T sum = 0;
    for (int64_t t = Row::lane(); t < keys.slots(); t += Row::size())
      if (x.attends(t)) sum += (p[t] = exp(p[t] - m));
    sum = Row::reduce(sum, cuda::SumOp{}, T(0), static_cast<T*>(nullptr));  // >= 1: the max term is exp(0)
    for (int64_t t = Row::lane(); t < keys.slots(); t += Row::size())
      if (x.attends(t)) p[t] /= sum;
    __syncwarp();  // every lane reads the whole row of p below
    for (int64_t l = Row::lane(); l < keys.features(); l += Row::size()) {
      T acc = 0;
      for (int64_t t = 0; t < keys.slots(); ++t)
        if (x.attends(t)) acc += p[t] * v[x.at(va, x.key(t)) + l];
      o[l] = acc;
    }
    __syncwarp();  // the next row's lanes reuse nothing, but keep the warp in step
  }
}

template <class Keys, class T>
__global__ void grad_queries_kernel(const T* grad, const T* k, const T* v, const T* probs, Keys keys, HeadRows ga,
                                    HeadRows ka, HeadRows va, HeadRows dqa, T scale, T* ds, T* gq) {
  for (int64_t r = Row::first_row(); r < keys.count() * keys.queries(); r += Row::row_step()) {
    const typename Keys::Query x = keys.query(r);
    const T* p = probs + r * keys.slots();
    T* dsr = ds + r * keys.slots();
    // dP parked in ds; delta = sum_t P dP over the attended keys.
    T delta = 0;
    for (int64_t t = Row::lane(); t < keys.slots(); t += Row::size()) {
      if (!x.attends(t)) {
        dsr[t] = T(0);
        continue;
      }
      dsr[t] = dot(grad + x.at(ga, x.j), v + x.at(va, x.key(t)), keys.features());
      delta += p[t] * dsr[t];
    }
    delta = Row::reduce(delta, cuda::SumOp{}, T(0), static_cast<T*>(nullptr));
    for (int64_t t = Row::lane(); t < keys.slots(); t += Row::size())
      if (x.attends(t)) dsr[t] = scale * p[t] * (dsr[t] - delta);
    __syncwarp();  // every lane reads the whole row of ds below
    for (int64_t l = Row::lane(); l < keys.features(); l += Row::size()) {
      T acc = 0;
      for (int64_t t = 0; t < keys.slots(); ++t)
        if (x.attends(t)) acc += dsr[t] * k[x.at(ka, x.key(t)) + l];
      gq[x.at(dqa, x.j) + l] = acc;
    }
    __syncwarp();
  }
}

template <class Keys, class T>
__global__ void grad_keys_kernel(const T* grad, const T* q, const T* probs, const T* ds, Keys keys, HeadRows ga,
                                 HeadRows qa, HeadRows dka, HeadRows dva, T* gk, T* gv) {
  ATTN_CUDA_LOOP(e, keys.count() * keys.keys() * keys.features()) {
    const int64_t l = e % keys.features(), gi = e / keys.features(), i = gi % keys.keys(), g = gi / keys.keys();
    const typename Keys::Head head = keys.head(g);
    T sum_k = 0, sum_v = 0;
    if (keys.key_passes(g, i)) {
      for (int64_t u = 0; u < keys.walk(); ++u) {
        const int64_t j = keys.query_of(i, u), t = keys.slot_of(i, u);
        if (j < 0 || j >= keys.queries() || keys.skips(g, j, t)) continue;
        const int64_t pr = (g * keys.queries() + j) * keys.slots() + t;
        sum_k += ds[pr] * q[head.at(qa, j) + l];
        sum_v += probs[pr] * grad[head.at(ga, j) + l];
      }
    }
    gk[head.at(dka, i) + l] = sum_k;
    gv[head.at(dva, i) + l] = sum_v;
  }
}

}  // namespace attention_rows

// out and probabilities of the attention `keys` describes (dispatch and
// launch errors name op).
template <class Keys>
void attention_rows_forward(const char* op, const Keys& keys, const Tensor& q, const Tensor& k, const Tensor& v,
                            double scale, const Tensor& out, const Tensor& probabilities) {
  dispatch_floating(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = keys.count() * keys.queries();
    if (rows == 0) return;
    const cuda::RowLaunch l = cuda::row_launch(rows, 1);  // warp rows
    ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), attention_rows::forward_kernel<Keys, T>)
    (q.data<T>(), k.data<T>(), v.data<T>(), keys, head_rows(q), head_rows(k), head_rows(v), head_rows(out),
     static_cast<T>(scale), out.data<T>(), probabilities.data<T>());
    ATTN_CUDA_CHECK_LAUNCH(op);
  });
}

// grad_q, grad_k and grad_v of the attention `keys` describes.
template <class Keys>
void attention_rows_backward(const char* op, const Keys& keys, const Tensor& grad, const Tensor& q, const Tensor& k,
                             const Tensor& v, const Tensor& probabilities, double scale, const Tensor& grad_q,
                             const Tensor& grad_k, const Tensor& grad_v) {
  dispatch_floating(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = keys.count() * keys.queries();
    Tensor ds = empty({rows * keys.slots()}, q.dtype(), q.device());
    if (rows > 0) {
      const cuda::RowLaunch l = cuda::row_launch(rows, 1);
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), attention_rows::grad_queries_kernel<Keys, T>)
      (grad.data<T>(), k.data<T>(), v.data<T>(), probabilities.data<T>(), keys, head_rows(grad), head_rows(k),
       head_rows(v), head_rows(grad_q), static_cast<T>(scale), ds.data<T>(), grad_q.data<T>());
      ATTN_CUDA_CHECK_LAUNCH(op);
    }
    // With no query, every key's gradient is 0, still written.
    const int64_t elements = keys.count() * keys.keys() * keys.features();
    if (elements == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(elements), cuda::kThreads, 0, cuda::stream(),
                     attention_rows::grad_keys_kernel<Keys, T>)
    (grad.data<T>(), q.data<T>(), probabilities.data<T>(), ds.data<T>(), keys, head_rows(grad), head_rows(q),
     head_rows(grad_k), head_rows(grad_v), grad_k.data<T>(), grad_v.data<T>());
    ATTN_CUDA_CHECK_LAUNCH(op);
  });
}

}  // namespace attn
