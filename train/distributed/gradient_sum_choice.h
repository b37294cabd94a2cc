// How a run sums its gradients (`attn train --sync auto|mpi|nccl`):
//   mpi   SummedGradientSync: in rank order, in float64, through host memory;
//         the same bits for every N's rounding analysis (docs/distributed.md).
//   nccl  NcclGradientSync: NCCL's all-reduce on the GPUs, for CUDA tensors,
//         one GPU per process (NCCL refuses two processes on one GPU).
//   auto  nccl when the tensors are on CUDA, this attn was built with NCCL,
//         there are several processes and each machine has a GPU per
//         process; mpi otherwise.
// One process has nothing to sum unless nccl is asked for (NCCL with one
// process is valid, and scripts/gpu_check.sh compares it with no sum).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/device.h"
#include "attn/train/distributed/communicator.h"
#include "attn/train/distributed/data_parallel_sync.h"
#include "attn/train/distributed/process_gpu.h"

namespace attn {

enum class SumMethod { Auto, Mpi, Nccl };

// "auto", "mpi" or "nccl"; anything else throws attn::Error.
SumMethod parse_sum_method(const std::string& name);
const char* sum_method_name(SumMethod method);

// Whether this attn was built with NCCL (CMake's ATTN_NCCL).
bool built_with_nccl();

// What the choice depends on.
struct SumSituation {
  SumMethod asked = SumMethod::Auto;
  Device device = Device::CPU;
  int processes = 1;
  LocalProcesses local;  // on this machine
  int gpus = 0;          // visible to this process
  bool nccl_built = false;
};

// What this process would use (never Auto) and why, for the log. An explicit
// nccl that cannot run throws attn::Error saying why.
struct SumChoice {
  SumMethod method = SumMethod::Mpi;
  std::string why;
};
SumChoice choose_sum(const SumSituation& situation);

// The processes' choices must agree (machines may differ in GPUs): given
// every process's choice (1: nccl), `mine` is kept when all agree; under
// auto a mixed answer makes every process use mpi; an explicit nccl cannot be
// mixed (a process that cannot use it has stopped the run).
SumChoice agree_on_sum(const SumChoice& mine, SumMethod asked, const std::vector<uint64_t>& nccl_by_process);

// The gradient sum of the choice: NcclGradientSync for nccl, null for mpi
// with one process (nothing to sum), SummedGradientSync otherwise. The
// process's GPU must be chosen already (cuda_use_device) for nccl.
std::unique_ptr<DataParallelSync> make_data_parallel_sync(const SumChoice& choice, Communicator& processes);

}  // namespace attn
