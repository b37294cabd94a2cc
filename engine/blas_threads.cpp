#include "attn/engine/blas_threads.h"

#include <cblas.h>

#include <mutex>

namespace attn {

namespace {
std::once_flag serial_once;
}

void use_serial_blas() {
  std::call_once(serial_once, [] { openblas_set_num_threads(1); });
}

ScopedBlasThreads::ScopedBlasThreads(int threads) {
  use_serial_blas();  // so that the destructor's setting is not undone later
  openblas_set_num_threads(threads);
}

ScopedBlasThreads::~ScopedBlasThreads() { openblas_set_num_threads(1); }

}  // namespace attn
