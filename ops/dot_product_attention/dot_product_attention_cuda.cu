// CUDA kernels of the fused dot-product attention: the row kernels of
// ops/dot_product_attention/dot_product_attention_rows.cuh over every key,
// slot i of each query being key i, attended when it is valid.
#include "attn/ops/dot_product_attention/dot_product_attention_kernels.h"
#include "attn/ops/dot_product_attention/dot_product_attention_rows.cuh"

namespace attn {

namespace {

struct ValidKeys {
  int64_t B, h, nq, nk, d;
  const uint8_t* valid;  // [B, nk]

  __device__ __forceinline__ int64_t count() const { return B * h; }
  __device__ __forceinline__ int64_t queries() const { return nq; }
  __device__ __forceinline__ int64_t keys() const { return nk; }
  __device__ __forceinline__ int64_t features() const { return d; }
  __device__ __forceinline__ int64_t slots() const { return nk; }
  __device__ __forceinline__ int64_t walk() const { return nq; }

  struct Head {
    int64_t b, c;
    __device__ __forceinline__ int64_t at(const HeadRows& a, int64_t i) const { return a.at(b, c, i); }
  };
  struct Query : Head {
    int64_t j;
    const uint8_t* ok;  // the example's valid keys
    __device__ __forceinline__ bool attends(int64_t i) const { return ok[i] != 0; }
    __device__ __forceinline__ int64_t key(int64_t i) const { return i; }
  };
  __device__ __forceinline__ Head head(int64_t g) const { return {g / h, g % h}; }
  __device__ __forceinline__ Query query(int64_t r) const {
    const int64_t j = r % nq, g = r / nq, b = g / h;
    return {{b, g % h}, j, valid + b * nk};
  }
  __device__ __forceinline__ bool key_passes(int64_t g, int64_t i) const { return valid[g / h * nk + i] != 0; }
  // Key i is at slot i of every query u.
  __device__ __forceinline__ int64_t query_of(int64_t, int64_t u) const { return u; }
  __device__ __forceinline__ int64_t slot_of(int64_t i, int64_t) const { return i; }
  __device__ __forceinline__ bool skips(int64_t, int64_t, int64_t) const { return false; }
};

ValidKeys keys_of(const Tensor& q, const Tensor& k, const Tensor& key_valid) {
  return {q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), key_valid.data<uint8_t>()};
}

// The causal order: query j also needs key i <= j + nk - nq.
struct CausalKeys : ValidKeys {
  struct Query : ValidKeys::Query {
    int64_t last;  // the last key the query may attend
    __device__ __forceinline__ bool attends(int64_t i) const { return i <= last && ok[i] != 0; }
  };
  __device__ __forceinline__ Query query(int64_t r) const {
    const ValidKeys::Query x = ValidKeys::query(r);
    return {x, x.j + nk - nq};
  }
  __device__ __forceinline__ bool skips(int64_t, int64_t j, int64_t i) const { return i > j + nk - nq; }
};

CausalKeys causal_keys_of(const Tensor& q, const Tensor& k, const Tensor& key_valid) {
  return {keys_of(q, k, key_valid)};
}

}  // namespace

void dot_product_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                        double scale, const Tensor& out, const Tensor& probabilities) {
  attention_rows_forward("dot_product_attention", keys_of(q, k, key_valid), q, k, v, scale, out, probabilities);
}

void dot_product_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                         const Tensor& key_valid, const Tensor& probabilities, double scale,
                                         const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  attention_rows_backward("dot_product_attention_backward", keys_of(q, k, key_valid), grad, q, k, v, probabilities,
                          scale, grad_q, grad_k, grad_v);
}

void causal_dot_product_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v,
                                               const Tensor& key_valid, double scale, const Tensor& out,
                                               const Tensor& probabilities) {
  attention_rows_forward("causal_dot_product_attention", causal_keys_of(q, k, key_valid), q, k, v, scale, out,
                         probabilities);
}

void causal_dot_product_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k,
                                                const Tensor& v, const Tensor& key_valid,
                                                const Tensor& probabilities, double scale, const Tensor& grad_q,
                                                const Tensor& grad_k, const Tensor& grad_v) {
  attention_rows_backward("causal_dot_product_attention_backward", causal_keys_of(q, k, key_valid), grad, q, k, v,
                          probabilities, scale, grad_q, grad_k, grad_v);
}

}  // namespace attn
