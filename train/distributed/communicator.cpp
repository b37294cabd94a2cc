#include "attn/train/distributed/communicator.h"

#include <cstdio>
#include <cstdlib>

#include "attn/util/error.h"

namespace attn {

std::unique_ptr<Communicator> make_mpi_communicator(double timeout_seconds);  // mpi_communicator.cpp

void SingleProcess::abort_all(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(1);
}

bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    const char* value = std::getenv(name);
    if (value && *value) return true;
  }
  return false;
}

std::unique_ptr<Communicator> make_communicator(double timeout_seconds) {
  ATTN_CHECK(timeout_seconds > 0, "distributed", "the collective timeout must be positive, got ", timeout_seconds,
             " s");
  if (!started_by_mpi_launcher()) return std::make_unique<SingleProcess>();
  ATTN_CHECK(built_with_mpi(), "distributed",
             "this process was started by an MPI launcher (mpirun), but this attn was built without MPI, so every "
             "process would train alone on the whole data; install Open MPI (apt-get install -y libopenmpi-dev "
             "openmpi-bin) and configure again (cmake -DATTN_MPI=ON), or run attn without mpirun");
  return make_mpi_communicator(timeout_seconds);
}

}  // namespace attn
