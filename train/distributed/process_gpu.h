// Which GPU a process of a data-parallel run uses: one process per GPU, the
// processes of one machine spread over its GPUs by their local rank (their
// number among the processes of that machine, which the launcher sets), as
// llm.c and PyTorch's DDP do.
#pragma once
#include <string>

namespace attn {

// The processes on this machine: this one's number among them and how many
// there are; -1 where the launcher did not say. Read from Open MPI
// (OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE), MPICH (MPI_LOCALRANKID /
// MPI_LOCALNRANKS) or Slurm (SLURM_LOCALID; SLURM_NTASKS_PER_NODE when it is
// a plain number).
struct LocalProcesses {
  int rank = -1;
  int size = -1;
};
LocalProcesses local_processes_from_environment();

// The GPU of process `rank` of a run: its local rank modulo the GPUs, or,
// where the launcher gave no local rank, its rank modulo the GPUs (right on
// one machine). Throws attn::Error when `gpus` < 1.
int gpu_for_process(const LocalProcesses& local, int rank, int gpus);

// Whether every process on this machine can have a GPU of its own (unknown
// local counts are taken as yes); `why` says why not, for the log and errors.
bool one_gpu_per_process(const LocalProcesses& local, int gpus, std::string* why);

}  // namespace attn
