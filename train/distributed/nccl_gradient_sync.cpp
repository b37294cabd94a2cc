// NCCL's side of NcclGradientSync: the communicator, the all-reduce and its
// errors. Compiled to nothing without ATTN_WITH_NCCL.
#ifdef ATTN_WITH_NCCL
#include "attn/train/distributed/nccl_gradient_sync.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <exception>
#include <string>

#include "attn/util/error.h"

namespace attn {

namespace {

class NcclSum final : public BufferSum {
 public:
  explicit NcclSum(Communicator& processes) : processes_(processes.size()), rank_(processes.rank()) {
    // A constructor that throws runs no destructor: release what was made.
    try {
      connect(processes);
    } catch (...) {
      release();
      throw;
    }
  }

  ~NcclSum() override { release(); }

  void sum(const std::vector<Tensor>& buffers, const char* what) override {
    check("ncclGroupStart", ncclGroupStart());
    for (const Tensor& b : buffers) {
      ATTN_CHECK(b.device() == Device::CUDA && b.is_contiguous() && b.dim() == 1, "NCCL",
                 "a buffer to sum must be a contiguous vector on the GPU");
      const ncclDataType_t type = b.dtype() == DType::F64 ? ncclFloat64 : ncclFloat32;
      ATTN_CHECK(b.dtype() == DType::F64 || b.dtype() == DType::F32, "NCCL", "sums float32 or float64, got ",
                 dtype_name(b.dtype()));
      const ncclResult_t r =
          ncclAllReduce(b.raw_data(), b.raw_data(), static_cast<size_t>(b.numel()), type, ncclSum, comm_, stream_);
      if (r != ncclSuccess) {
        ncclGroupEnd();
        check(what, r);
      }
    }
    check(what, ncclGroupEnd());
  }

  int processes() const override { return processes_; }

  std::string describe() const override {
    return "NCCL " + version_ + ", on the GPUs (" + std::to_string(processes_) + " process" +
           (processes_ == 1 ? "" : "es") + "; this one on GPU " + std::to_string(gpu_) + ")";
  }

 private:
  void check(const char* call, ncclResult_t r) {
    if (r == ncclSuccess) return;
    failed_ = true;
    std::string message = std::string("NCCL: ") + call + " failed on process " + std::to_string(rank_) + " of " +
                          std::to_string(processes_) + " (GPU " + std::to_string(gpu_) + "): " + ncclGetErrorString(r);
    const char* detail = comm_ ? ncclGetLastError(comm_) : ncclGetLastError(nullptr);
    if (detail && *detail) message += std::string(" (") + detail + ")";
    if (r == ncclInvalidUsage)
      message += "; two processes on one GPU are refused: run one process per GPU (mpirun -np <GPUs>)";
    message += "; NCCL_DEBUG=INFO in the environment shows NCCL's own log";
    throw Error(message);
  }

  void check_cuda(const char* call, cudaError_t e) {
    if (e == cudaSuccess) return;
    failed_ = true;
    throw Error(std::string("NCCL: ") + call + " failed: " + cudaGetErrorString(e));
  }

  void connect(Communicator& processes) {
    check_cuda("cudaGetDevice", cudaGetDevice(&gpu_));
    // A stream of its own, created blocking: it waits for the kernels the
    // engine queued on the legacy default stream (the packing), and the
    // engine's later work there waits for the all-reduce, with no explicit
    // event. NCCL is not given the null stream itself, which some of its
    // copy-engine collectives refuse.
    check_cuda("cudaStreamCreate", cudaStreamCreate(&stream_));
    ncclUniqueId id{};
    if (rank_ == 0) check("ncclGetUniqueId", ncclGetUniqueId(&id));
    processes.broadcast(&id, sizeof id, 0, "NCCL's unique id");
    check("ncclCommInitRank", ncclCommInitRank(&comm_, processes_, id, rank_));
    int version = 0;
    ncclGetVersion(&version);
    // Version 0 is the emulated build's stand-in (train/distributed/nccl_emulate/).
    version_ = version == 0 ? "stand-in over MPI (emulated CUDA build)"
                            : std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                                  std::to_string(version % 100);
  }

  void release() {
    // After a failure, or while an error unwinds the run, the other processes
    // may never join a clean shutdown: abort instead of waiting for them.
    if (comm_) (failed_ || std::uncaught_exceptions() > 0) ? ncclCommAbort(comm_) : ncclCommDestroy(comm_);
    comm_ = nullptr;
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }

  int processes_, rank_, gpu_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  bool failed_ = false;
  std::string version_;
};

}  // namespace

NcclGradientSync::NcclGradientSync(Communicator& processes)
    : PackedGradientSync(std::make_unique<NcclSum>(processes)) {}

}  // namespace attn
#endif  // ATTN_WITH_NCCL
