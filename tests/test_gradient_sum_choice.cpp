// Which gradient sum a run uses (--sync auto|mpi|nccl), which GPU each process
// takes, and what an impossible choice says. Pure logic: no process, GPU or
// NCCL is needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/train/distributed/gradient_sum_choice.h"
#include "attn/train/distributed/process_gpu.h"

namespace attn {
namespace {

SumSituation two_gpus_two_processes(SumMethod asked) {
  SumSituation s;
  s.asked = asked;
  s.device = Device::CUDA;
  s.processes = 2;
  s.local = {0, 2};
  s.gpus = 2;
  s.nccl_built = true;
  return s;
}

std::string error_of(const SumSituation& s) {
  try {
    choose_sum(s);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(GradientSumChoice, AutoTakesNcclForCudaTensorsWithAGpuPerProcess) {
  const SumChoice c = choose_sum(two_gpus_two_processes(SumMethod::Auto));
  EXPECT_EQ(c.method, SumMethod::Nccl);
  EXPECT_TRUE(contains(c.why, "auto")) << c.why;
}

TEST(GradientSumChoice, AutoFallsBackToMpiAndSaysWhy) {
  SumSituation cpu = two_gpus_two_processes(SumMethod::Auto);
  cpu.device = Device::CPU;
  SumChoice c = choose_sum(cpu);
  EXPECT_EQ(c.method, SumMethod::Mpi);
  EXPECT_TRUE(contains(c.why, "--device cuda")) << c.why;

  SumSituation unbuilt = two_gpus_two_processes(SumMethod::Auto);
  unbuilt.nccl_built = false;
  c = choose_sum(unbuilt);
  EXPECT_EQ(c.method, SumMethod::Mpi);
  EXPECT_TRUE(contains(c.why, "built without NCCL")) << c.why;

  SumSituation crowded = two_gpus_two_processes(SumMethod::Auto);
  crowded.processes = 4;
  crowded.local = {3, 4};
  c = choose_sum(crowded);
  EXPECT_EQ(c.method, SumMethod::Mpi);
  EXPECT_TRUE(contains(c.why, "4 processes on this machine share 2 GPUs")) << c.why;

  SumSituation alone = two_gpus_two_processes(SumMethod::Auto);
  alone.processes = 1;
  alone.local = {};
  EXPECT_EQ(choose_sum(alone).method, SumMethod::Mpi);
}

TEST(GradientSumChoice, MpiIsTakenWhenAsked) {
  EXPECT_EQ(choose_sum(two_gpus_two_processes(SumMethod::Mpi)).method, SumMethod::Mpi);
}

TEST(GradientSumChoice, NcclWhenAskedRunsWithOneProcessOrStopsSayingWhy) {
  SumSituation alone = two_gpus_two_processes(SumMethod::Nccl);
  alone.processes = 1;
  alone.local = {};
  EXPECT_EQ(choose_sum(alone).method, SumMethod::Nccl);

  SumSituation unbuilt = two_gpus_two_processes(SumMethod::Nccl);
  unbuilt.nccl_built = false;
  EXPECT_TRUE(contains(error_of(unbuilt), "--sync nccl: this attn was built without NCCL")) << error_of(unbuilt);
  SumSituation cpu = two_gpus_two_processes(SumMethod::Nccl);
  cpu.device = Device::CPU;
  EXPECT_TRUE(contains(error_of(cpu), "--device cuda")) << error_of(cpu);
  SumSituation crowded = two_gpus_two_processes(SumMethod::Nccl);
  crowded.local = {1, 3};
  EXPECT_TRUE(contains(error_of(crowded), "NCCL needs a GPU per process")) << error_of(crowded);
}

TEST(GradientSumChoice, ProcessesThatDisagreeUseMpiUnderAutoAndStopUnderNccl) {
  const SumChoice nccl{SumMethod::Nccl, "mine"};
  EXPECT_EQ(agree_on_sum(nccl, SumMethod::Auto, {1, 1, 1}).why, "mine");
  const SumChoice mixed = agree_on_sum(nccl, SumMethod::Auto, {1, 0, 1});
  EXPECT_EQ(mixed.method, SumMethod::Mpi);
  EXPECT_TRUE(contains(mixed.why, "only 2 of 3 processes")) << mixed.why;
  EXPECT_THROW(agree_on_sum(nccl, SumMethod::Nccl, {1, 0}), Error);
}

TEST(GradientSumChoice, NamesRoundTripAndUnknownOnesAreRefused) {
  for (SumMethod m : {SumMethod::Auto, SumMethod::Mpi, SumMethod::Nccl})
    EXPECT_EQ(parse_sum_method(sum_method_name(m)), m);
  EXPECT_THROW(parse_sum_method("gloo"), Error);
}

TEST(GradientSumChoice, MpiWithOneProcessSumsNothing) {
  SingleProcess alone;
  EXPECT_EQ(make_data_parallel_sync({SumMethod::Mpi, "one process"}, alone), nullptr);
  EXPECT_THROW(make_data_parallel_sync({SumMethod::Auto, ""}, alone), Error);
}

TEST(GradientSumChoice, NcclInABuildWithoutItIsRefused) {
  if (built_with_nccl()) GTEST_SKIP() << "this build has NCCL: constructing its sum needs a GPU (scripts/gpu_check.sh)";
  SingleProcess alone;
  EXPECT_THROW(make_data_parallel_sync({SumMethod::Nccl, "--sync nccl"}, alone), Error);
}

TEST(ProcessGpu, LocalRankModuloTheGpusElseTheRank) {
  EXPECT_EQ(gpu_for_process({3, 4}, 7, 2), 1);
  EXPECT_EQ(gpu_for_process({0, 4}, 7, 2), 0);
  EXPECT_EQ(gpu_for_process({}, 5, 4), 1);
  EXPECT_THROW(gpu_for_process({0, 1}, 0, 0), Error);
  std::string why;
  EXPECT_TRUE(one_gpu_per_process({1, 2}, 2, &why));
  EXPECT_TRUE(one_gpu_per_process({}, 1, &why));
  EXPECT_FALSE(one_gpu_per_process({0, 3}, 1, &why));
  EXPECT_EQ(why, "3 processes on this machine share 1 GPU");
}

// Sets an environment variable for one scope (gtest_discover_tests runs each
// test in its own process; the old value comes back all the same).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(ProcessGpu, LocalRankComesFromTheLauncher) {
  const ScopedEnv a("OMPI_COMM_WORLD_LOCAL_RANK", "3"), b("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
      c("MPI_LOCALRANKID", "1"), d("SLURM_LOCALID", nullptr), e("MPI_LOCALNRANKS", nullptr),
      f("SLURM_NTASKS_PER_NODE", nullptr);
  LocalProcesses local = local_processes_from_environment();
  EXPECT_EQ(local.rank, 3);  // Open MPI's comes first
  EXPECT_EQ(local.size, 4);
  const ScopedEnv g("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), h("OMPI_COMM_WORLD_LOCAL_SIZE", "2(x3)");
  local = local_processes_from_environment();
  EXPECT_EQ(local.rank, 1);
  EXPECT_EQ(local.size, -1);  // not a number: unknown
}

TEST(CudaUseDevice, AGpuThatDoesNotExistIsRefused) {
  EXPECT_THROW(cuda_use_device(cuda_device_count()), Error);
  EXPECT_THROW(cuda_use_device(-1), Error);
  if (cuda_available()) {
    EXPECT_NO_THROW(cuda_use_device(0));
  }
}

}  // namespace
}  // namespace attn
