// CUDA kernels of the fused window attention: the row kernels of
// ops/dot_product_attention/dot_product_attention_rows.cuh over a band,
// slot t of query j being key j - R + t, attended when it lies in [0, n)
// and the band mask allows it. A key's gradient gathers over the W queries
// whose band can hold it: key i sits at slot t of query j = i + R - t.
#include "attn/ops/dot_product_attention/dot_product_attention_rows.cuh"
#include "attn/ops/window_attention/window_attention_kernels.h"

namespace attn {

namespace {

struct BandKeys {
  const uint8_t* allowed;  // [B, n, W] or [B, h, n, W]
  int64_t G, h, n, d, W, R;
  bool per_head_mask;

  __device__ __forceinline__ int64_t count() const { return G; }
  __device__ __forceinline__ int64_t queries() const { return n; }
  __device__ __forceinline__ int64_t keys() const { return n; }
  __device__ __forceinline__ int64_t features() const { return d; }
  __device__ __forceinline__ int64_t slots() const { return W; }
  __device__ __forceinline__ int64_t walk() const { return W; }

  // The band mask row of query j of head g = (b, c): its own, or its example's.
  __device__ __forceinline__ const uint8_t* mask_row(int64_t g, int64_t j) const {
    return allowed + ((per_head_mask ? g : g / h) * n + j) * W;
  }
  struct Head {
    int64_t g, h;
    __device__ __forceinline__ int64_t at(const HeadRows& a, int64_t i) const { return a.at(g / h, g % h, i); }
  };
  struct Query : Head {
    int64_t j, R, n;
    const uint8_t* ok;  // the query's band mask row
    __device__ __forceinline__ bool attends(int64_t t) const {
      const int64_t i = j - R + t;
      return i >= 0 && i < n && ok[t] != 0;
    }
    __device__ __forceinline__ int64_t key(int64_t t) const { return j - R + t; }
  };
  __device__ __forceinline__ Head head(int64_t g) const { return {g, h}; }
  __device__ __forceinline__ Query query(int64_t r) const {
    const int64_t g = r / n, j = r % n;
    return {{g, h}, j, R, n, mask_row(g, j)};
  }
  __device__ __forceinline__ bool key_passes(int64_t, int64_t) const { return true; }
  // Key i is at slot u of query i + R - u, when that query's band allows it.
  __device__ __forceinline__ int64_t query_of(int64_t i, int64_t u) const { return i + R - u; }
  __device__ __forceinline__ int64_t slot_of(int64_t, int64_t u) const { return u; }
  __device__ __forceinline__ bool skips(int64_t g, int64_t j, int64_t t) const { return !mask_row(g, j)[t]; }
};

BandKeys keys_of(const Tensor& q, const Tensor& allowed) {
  const int64_t W = allowed.size(allowed.dim() - 1);
  return {allowed.data<uint8_t>(), q.size(0) * q.size(1), q.size(1), q.size(2), q.size(3), W, (W - 1) / 2,
          allowed.dim() == 4};
}

}  // namespace

void window_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                   double scale, const Tensor& out, const Tensor& probabilities) {
  attention_rows_forward("window_attention", keys_of(q, allowed), q, k, v, scale, out, probabilities);
}

void window_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& allowed, const Tensor& probabilities, double scale,
                                    const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  attention_rows_backward("window_attention_backward", keys_of(q, allowed), grad, q, k, v, probabilities, scale,
                          grad_q, grad_k, grad_v);
}

}  // namespace attn
