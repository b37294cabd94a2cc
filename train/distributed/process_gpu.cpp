#include "attn/train/distributed/process_gpu.h"

#include <cstdlib>
#include <string>

#include "attn/util/error.h"

namespace attn {

namespace {

// A non-negative whole number from the environment, -1 when unset or not one.
int environment_number(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return -1;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (*end != '\0' || n < 0 || n > 1 << 20) return -1;
  return static_cast<int>(n);
}

int first_of(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const int n = environment_number(name); n >= 0) return n;
  return -1;
}

}  // namespace

LocalProcesses local_processes_from_environment() {
  LocalProcesses local;
  local.rank = first_of({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  local.size = first_of({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"});
  return local;
}

int gpu_for_process(const LocalProcesses& local, int rank, int gpus) {
  ATTN_CHECK(gpus >= 1, "distributed", "no GPU to give process ", rank, " (", gpus, " visible)");
  return (local.rank >= 0 ? local.rank : rank) % gpus;
}

bool one_gpu_per_process(const LocalProcesses& local, int gpus, std::string* why) {
  if (local.size < 0 || local.size <= gpus) return true;
  if (why)
    *why = std::to_string(local.size) + " processes on this machine share " + std::to_string(gpus) + " GPU" +
           (gpus == 1 ? "" : "s");
  return false;
}

}  // namespace attn
