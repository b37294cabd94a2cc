// The emulated CUDA build's own semantics (engine/cuda/emulate/): warp
// shuffles, per-block shared arrays, barriers, a barrier not every thread
// reaches, launch configuration errors and cuBLAS's argument conventions.
// Exists only in that build (-DATTN_CUDA=EMULATE).
#ifdef ATTN_CUDA_EMULATED
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attn/engine/cuda/cuda_check.h"
#include "attn/engine/cuda/cuda_kernel.h"
#include "attn/engine/error.h"
#include "attn/engine/tensor.h"

namespace attn {
namespace {

__global__ void warp_sum_kernel(float* out) {
  float v = static_cast<float>(threadIdx.x);
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Thread i reads what thread 63 - i wrote, behind a barrier or not.
__global__ void reverse_kernel(float* out, bool barrier) {
  ATTN_SHARED(float, buf, [64]);
  buf[threadIdx.x] = static_cast<float>(blockIdx.x * 100 + threadIdx.x);
  if (barrier) __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = buf[63 - threadIdx.x];
}

__global__ void divergent_barrier_kernel(float* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}

TEST(CudaEmulation, WarpShufflesExchangeAmongTheLanesOfOneWarp) {
  Tensor out = empty({128}, DType::F32, Device::CUDA);
  ATTN_CUDA_LAUNCH(2, 64, 0, 0, warp_sum_kernel)(out.data<float>());
  ATTN_CUDA_CHECK_LAUNCH("test");
  const std::vector<double> v = out.to_vector();
  for (int i = 0; i < 128; ++i) {
    const int first = (i % 64) / 32 * 32;  // the warp's first threadIdx.x
    EXPECT_EQ(v[i], 32 * first + 496) << i;  // sum of first .. first + 31
  }
}

TEST(CudaEmulation, SharedArraysArePerBlockAndOrderedByTheBarrier) {
  Tensor out = empty({128}, DType::F32, Device::CUDA);
  ATTN_CUDA_LAUNCH(2, 64, 0, 0, reverse_kernel)(out.data<float>(), true);
  ATTN_CUDA_CHECK_LAUNCH("test");
  std::vector<double> v = out.to_vector();
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 64; ++i) EXPECT_EQ(v[b * 64 + i], b * 100 + 63 - i);
  // Without the barrier, whichever of threads i and 63 - i runs first reads
  // the other's slot before it is written: the 0xFF fill, a NaN.
  ATTN_CUDA_LAUNCH(2, 64, 0, 0, reverse_kernel)(out.data<float>(), false);
  v = out.to_vector();
  int unwritten = 0;
  for (double x : v) unwritten += std::isnan(x);
  EXPECT_GE(unwritten, 64);  // one of each pair, in each block
}

TEST(CudaEmulation, ABarrierSomeThreadsNeverReachIsAnErrorNamingTheKernel) {
  Tensor out = empty({64}, DType::F32, Device::CUDA);
  try {
    ATTN_CUDA_LAUNCH(1, 64, 0, 0, divergent_barrier_kernel)(out.data<float>());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("divergent_barrier_kernel"), std::string::npos) << m;
    EXPECT_NE(m.find("__syncthreads"), std::string::npos) << m;
  }
}

TEST(CudaEmulation, ALaunchCudaWouldRefuseSetsTheLaunchError) {
  Tensor out = empty({64}, DType::F32, Device::CUDA);
  ATTN_CUDA_LAUNCH(1, 2048, 0, 0, divergent_barrier_kernel)(out.data<float>());  // over 1024 threads
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// C = A B with A 2x3 and B 3x2, all column-major as cuBLAS sees them.
TEST(CudaEmulation, CublasKeepsColumnMajorConventionsAndChecksLeadingDimensions) {
  Tensor a = from_vector({1, 4, 2, 5, 3, 6}, {6}, DType::F32).to(Device::CUDA);     // [[1,2,3],[4,5,6]]
  Tensor b = from_vector({7, 9, 11, 8, 10, 12}, {6}, DType::F32).to(Device::CUDA);  // [[7,8],[9,10],[11,12]]
  Tensor c = empty({4}, DType::F32, Device::CUDA);
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  const float one = 1, zero = 0;
  ASSERT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, a.data<float>(), 2, b.data<float>(), 3, &zero,
                        c.data<float>(), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(c.to_vector(), (std::vector<double>{58, 139, 64, 154}));
  // A leading dimension smaller than the stored rows is refused, as by cuBLAS.
  EXPECT_EQ(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, a.data<float>(), 1, b.data<float>(), 3, &zero,
                        c.data<float>(), 2),
            CUBLAS_STATUS_INVALID_VALUE);
  // A device matrix of exactly 6 floats read with ld 4 spans 10: outside the
  // allocation, an illegal address on a GPU.
  float* exact = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&exact), 6 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(exact, a.data<float>(), 6 * sizeof(float), cudaMemcpyDeviceToDevice), cudaSuccess);
  EXPECT_THROW(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, exact, 4, b.data<float>(), 3, &zero,
                           c.data<float>(), 2),
               Error);
  cudaFree(exact);
  cublasDestroy(h);
}

// One device unless ATTN_CUDA_EMULATE_DEVICES says more (CTest leaves it
// unset here; nccl.emulated_sums runs two processes on two); streams are
// distinct handles.
TEST(CudaEmulation, OneDeviceUnlessSetAndStreamsAreDistinctHandles) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(-1), cudaErrorInvalidDevice);
  cudaGetLastError();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 0);
  cudaStream_t a = nullptr, b = nullptr;
  ASSERT_EQ(cudaStreamCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&b), cudaSuccess);
  EXPECT_NE(a, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(cudaStreamDestroy(a), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(b), cudaSuccess);
}

}  // namespace
}  // namespace attn
#endif
