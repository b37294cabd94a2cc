// One thread pool on the CPU: the engine spreads work over OpenMP threads
// (parallel_for), GEMMs included, and OpenBLAS runs each piece it is handed on
// the calling thread. Two pools (OpenMP's and OpenBLAS's pthreads) on the same
// cores spin against each other between calls; on 2 cores that cost MTSA's
// training step about a third of its time (docs/benchmarks.md).
#pragma once

namespace attn {

// Sets OpenBLAS to one thread, once per process. The GEMM kernels call it
// before their first product.
void use_serial_blas();

// OpenBLAS's own threading for the life of the object (the reference side of
// `attn bench-matmul`), then back to one thread.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;
};

}  // namespace attn
