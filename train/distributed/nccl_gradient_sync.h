// The gradient sum of a data-parallel run on CUDA tensors: NCCL's all-reduce
// between the processes' GPUs, one GPU per process, as llm.c and PyTorch's
// DDP do. MPI starts the processes and carries NCCL's unique id from process
// 0 to the others (Communicator::broadcast); the gradients never leave the
// GPUs. Packing and unpacking are PackedGradientSync's (one buffer per dtype,
// the loss and the flags in the float64 one, sparse embedding rows).
//
// What the result is: NCCL's ring (or tree) all-reduce adds each element once
// and sends that sum to every process, so every process gets the same bits and
// the weights stay equal on every GPU; for a fixed number of processes, GPUs,
// topology and NCCL version the order of the additions is fixed, so a run is
// reproducible. That order is not rank order, and float32 gradients are added
// in float32 (N - 1 roundings) where the MPI path adds in float64 and rounds
// once, so runs with different N, or NCCL against MPI, agree to rounding, not
// bitwise: an element of the sum differs from the exact sum by at most
// (N - 1) u |g|_1 (u = 6.0e-8 for float32, 1.1e-16 for float64; |g|_1 the sum
// of the processes' absolute values), against u |sum| for the MPI path.
// docs/distributed.md, "CUDA tensors and NCCL", says what this means for the
// weights.
//
// Built only with NCCL (CMake's ATTN_NCCL, which defines ATTN_WITH_NCCL);
// make_data_parallel_sync (gradient_sum_choice.h) is the way in.
#pragma once
#include "attn/train/distributed/communicator.h"
#include "attn/train/distributed/packed_gradient_sync.h"

namespace attn {

class NcclGradientSync final : public PackedGradientSync {
 public:
  // Collective: every process constructs it at the same point. The process's
  // GPU must be chosen first (cuda_use_device; train/distributed/process_gpu.h).
  // An NCCL failure throws attn::Error naming the call and NCCL's reason; the
  // trainer then ends every process through Communicator::abort_all.
  explicit NcclGradientSync(Communicator& processes);
};

}  // namespace attn
