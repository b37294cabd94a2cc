// The emulated kernel launch behind ATTN_CUDA_LAUNCH (engine/cuda/cuda_kernel.h):
// the arguments are converted to the kernel's parameter types once, then
// every thread of every block runs the kernel on its own copy of them, as
// CUDA passes parameters by value to each thread.
#pragma once
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "attn/engine/cuda/emulate/builtins.h"
#include "attn/engine/cuda/emulate/runtime_api.h"

namespace attn {
namespace emu {

using KernelBody = void (*)(void* context);
// engine/cuda/emulate/grid.cpp: runs body(context) as every thread of the
// grid, block after block; a barrier some threads never reach, or an error
// thrown by a thread, becomes an attn::Error naming `kernel`. A configuration
// CUDA would refuse sets cudaErrorInvalidConfiguration instead.
void run_grid(const char* kernel, dim3 grid, dim3 block, size_t dynamic_shared, KernelBody body, void* context);

template <class... P>
class Launch {
 public:
  Launch(const char* kernel, dim3 grid, dim3 block, size_t shared, void (*fn)(P...))
      : kernel_(kernel), grid_(grid), block_(block), shared_(shared), fn_(fn) {}

  template <class... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong number of arguments");
    using Params = std::tuple<std::decay_t<P>...>;
    Params params(static_cast<std::decay_t<P>>(std::forward<A>(args))...);
    struct Context {
      void (*fn)(P...);
      const Params* params;
    } context{fn_, &params};
    run_grid(kernel_, grid_, block_, shared_,
             [](void* c) {
               const Context* x = static_cast<const Context*>(c);
               std::apply(x->fn, *x->params);
             },
             &context);
  }

 private:
  const char* kernel_;
  dim3 grid_, block_;
  size_t shared_;
  void (*fn_)(P...);
};

template <class... P>
Launch<P...> launch(const char* kernel, dim3 grid, dim3 block, size_t shared, cudaStream_t, void (*fn)(P...)) {
  return Launch<P...>(kernel, grid, block, shared, fn);
}

// The storage behind ATTN_SHARED: one instance per block, 0xFF-filled when the
// block starts (a read before any write sees NaN / -1), freed when it ends.
template <class Array>
Array& shared_array(const void* site) {
  return *static_cast<Array*>(block_shared(site, sizeof(Array)));
}

}  // namespace emu
}  // namespace attn
