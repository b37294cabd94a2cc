// How the per-head CPU attention kernels (dot_product_attention,
// window_attention) run a call: every head g = (b, c) is independent, so
// tasks are heads. Each task owns its slice of every output and its own
// scratch, so the result does not depend on the thread count.
//
// A kernel brings its Sizes: built from (q, k, mask), with head_count()
// (the B h heads of the call) and work() (about the multiply-adds of one
// head, for the parallel grain); its Scratch<T> is built from the Sizes.
#pragma once
#include <cstdint>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/engine/tensor.h"
#include "attn/ops/cpu/head_panels.h"

namespace attn {

// In q's dtype: p = HeadOperands<T, Sizes>(q, k, v, mask, scale), bind(p)
// binds the outputs (the forward's or the backward's), then
// head(p, g, scratch) runs for every head g in parallel. A Scratch<T> is
// built once per chunk of heads, so its zero padding is written once.
template <class Sizes, template <class> class Scratch, class Bind, class Head>
void run_heads(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
               const Bind& bind, const Head& head) {
  dispatch_floating(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    HeadOperands<T, Sizes> p(q, k, v, mask, scale);
    bind(p);
    parallel_for(p.s.head_count(), row_grain(p.s.work()), [&](int64_t begin, int64_t end) {
      Scratch<T> scratch(p.s);
      for (int64_t g = begin; g < end; ++g) head(p, g, scratch);
    });
  });
}

}  // namespace attn
