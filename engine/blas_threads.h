// OpenBLAS's thread count, which is process-wide. The engine keeps it at one:
// most GEMMs are split over the engine's OpenMP threads (parallel_for) and
// OpenBLAS runs each piece on the calling thread; the few products that
// OpenBLAS threads better are run inside a ScopedBlasThreads
// (ops/cpu/gemm_threads.h says which). Two pools (OpenMP's and OpenBLAS's
// pthreads) busy on the same cores at once spin against each other; on 2
// cores that once cost MTSA's training step about a third of its time
// (docs/engine.md, "GEMM threading").
#pragma once

namespace attn {

// Sets OpenBLAS to one thread and warms its work buffers (engine/
// blas_threads.cpp says why), once per process. The GEMM kernels call it
// before their first product.
void use_serial_blas();

// OpenBLAS's own threading for the life of the object (a large product, or
// the reference side of `attn bench-matmul`), then back to one thread.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;
};

}  // namespace attn
