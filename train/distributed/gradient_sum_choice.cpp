#include "attn/train/distributed/gradient_sum_choice.h"

#include "attn/train/distributed/summed_gradient_sync.h"
#include "attn/util/error.h"
#include "attn/util/named_values.h"
#ifdef ATTN_WITH_NCCL
#include "attn/train/distributed/nccl_gradient_sync.h"
#endif

namespace attn {

namespace {
const NamedValue<SumMethod> kSumMethodNames[] = {
    {SumMethod::Auto, "auto"}, {SumMethod::Mpi, "mpi"}, {SumMethod::Nccl, "nccl"}};
}  // namespace

SumMethod parse_sum_method(const std::string& name) {
  return value_from_name(kSumMethodNames, name, "--sync", "gradient sum");
}

const char* sum_method_name(SumMethod method) { return name_of_value(kSumMethodNames, method); }

bool built_with_nccl() {
#ifdef ATTN_WITH_NCCL
  return true;
#else
  return false;
#endif
}

SumChoice choose_sum(const SumSituation& s) {
  // Why NCCL cannot run here, or empty when it can.
  std::string against;
  // The tensors' device first: on the CPU, NCCL is beside the point.
  if (s.device != Device::CUDA)
    against = "the tensors are on the " + std::string(device_name(s.device)) + "; NCCL sums CUDA tensors (--device cuda)";
  else if (!s.nccl_built)
    against = "this attn was built without NCCL (configure with the CUDA backend, MPI and NCCL found: -DATTN_NCCL=ON)";
  else if (std::string shared; !one_gpu_per_process(s.local, s.gpus, &shared))
    against = shared + ", and NCCL needs a GPU per process (mpirun -np <GPUs per machine>)";

  if (s.asked == SumMethod::Nccl) {
    ATTN_CHECK(against.empty(), "train", "--sync nccl: ", against);
    return {SumMethod::Nccl, "--sync nccl"};
  }
  if (s.asked == SumMethod::Mpi) return {SumMethod::Mpi, "--sync mpi"};
  if (s.processes == 1) return {SumMethod::Mpi, "one process"};
  if (!against.empty()) return {SumMethod::Mpi, "--sync auto: " + against};
  return {SumMethod::Nccl, "--sync auto: CUDA tensors, a GPU per process"};
}

SumChoice agree_on_sum(const SumChoice& mine, SumMethod asked, const std::vector<uint64_t>& nccl_by_process) {
  int64_t with_nccl = 0;
  for (uint64_t v : nccl_by_process) with_nccl += v != 0;
  if (with_nccl == 0 || with_nccl == static_cast<int64_t>(nccl_by_process.size())) return mine;
  ATTN_CHECK(asked == SumMethod::Auto, "train", "--sync ", sum_method_name(asked), ": ", with_nccl, " of ",
             nccl_by_process.size(), " processes would sum with NCCL and the others not");
  return {SumMethod::Mpi, "--sync auto: only " + std::to_string(with_nccl) + " of " +
                              std::to_string(nccl_by_process.size()) +
                              " processes could use NCCL (a machine with fewer GPUs than processes)"};
}

std::unique_ptr<DataParallelSync> make_data_parallel_sync(const SumChoice& choice, Communicator& processes) {
  if (choice.method == SumMethod::Nccl) {
#ifdef ATTN_WITH_NCCL
    return std::make_unique<NcclGradientSync>(processes);
#else
    throw Error("train: NCCL was chosen, but this attn was built without NCCL");
#endif
  }
  ATTN_CHECK(choice.method == SumMethod::Mpi, "train", "the gradient sum must be chosen (mpi or nccl), not auto");
  if (processes.size() == 1) return nullptr;
  return std::make_unique<SummedGradientSync>(processes);
}

}  // namespace attn
