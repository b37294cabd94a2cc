// The NCCL stand-in of the emulated CUDA build (nccl.h here): NCCL's calls
// mapped onto MPI over host memory.
#include "nccl.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

struct ncclComm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, size = 0;
  std::string last_error;
};

namespace {

std::string g_last_error;  // of the calls without a communicator
int g_group_depth = 0;

ncclResult_t failed(ncclComm_t comm, ncclResult_t result, const std::string& detail) {
  (comm ? comm->last_error : g_last_error) = detail;
  return result;
}

}  // namespace

ncclResult_t ncclGetVersion(int* version) {
  if (!version) return failed(nullptr, ncclInvalidArgument, "ncclGetVersion: version is null");
  *version = 0;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (!id) return failed(nullptr, ncclInvalidArgument, "ncclGetUniqueId: id is null");
  std::random_device device;
  for (char& c : id->internal) c = static_cast<char>(device());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  if (!comm) return failed(nullptr, ncclInvalidArgument, "ncclCommInitRank: comm is null");
  *comm = nullptr;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    // One process started without a launcher: a communicator of one rank,
    // as NCCL makes without MPI.
    if (nranks != 1 || rank != 0)
      return failed(nullptr, ncclSystemError,
                    "the NCCL stand-in runs over MPI, and MPI is not initialised (rank " + std::to_string(rank) +
                        " of " + std::to_string(nranks) + ")");
    auto alone = new ncclComm;
    alone->size = 1;
    *comm = alone;
    return ncclSuccess;
  }
  int mpi_rank = 0, mpi_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  if (nranks != mpi_size || rank != mpi_rank)
    return failed(nullptr, ncclInvalidArgument,
                  "the NCCL stand-in needs MPI's ranks: rank " + std::to_string(rank) + " of " +
                      std::to_string(nranks) + " against MPI's " + std::to_string(mpi_rank) + " of " +
                      std::to_string(mpi_size));
  auto made = new ncclComm;
  MPI_Comm_dup(MPI_COMM_WORLD, &made->mpi);
  made->rank = rank;
  made->size = nranks;
  // Every process must hold the same id, and a device of its own.
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) device = -1;
  std::vector<char> ids(static_cast<size_t>(nranks) * NCCL_UNIQUE_ID_BYTES);
  std::vector<int> devices(static_cast<size_t>(nranks));
  MPI_Allgather(id.internal, NCCL_UNIQUE_ID_BYTES, MPI_CHAR, ids.data(), NCCL_UNIQUE_ID_BYTES, MPI_CHAR, made->mpi);
  MPI_Allgather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, made->mpi);
  ncclResult_t result = ncclSuccess;
  for (int r = 0; r < nranks && result == ncclSuccess; ++r) {
    if (std::memcmp(ids.data() + static_cast<size_t>(r) * NCCL_UNIQUE_ID_BYTES, id.internal, NCCL_UNIQUE_ID_BYTES))
      result = failed(made, ncclInvalidArgument, "process " + std::to_string(r) + " passed another unique id");
    else if (r != rank && devices[static_cast<size_t>(r)] == device)
      result = failed(made, ncclInvalidUsage,
                      "Duplicate GPU detected: rank " + std::to_string(rank) + " and rank " + std::to_string(r) +
                          " both on device " + std::to_string(device));
  }
  if (result != ncclSuccess) {
    g_last_error = made->last_error;
    MPI_Comm_free(&made->mpi);
    delete made;
    return result;
  }
  *comm = made;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return failed(nullptr, ncclInvalidArgument, "ncclCommDestroy: comm is null");
  if (comm->mpi != MPI_COMM_NULL) MPI_Comm_free(&comm->mpi);
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  // The others may never arrive at a collective free: drop the handle
  // without one (MPI reclaims the duplicate at exit).
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t /*stream: synchronous here*/) {
  if (!comm) return failed(nullptr, ncclInvalidArgument, "ncclAllReduce: comm is null");
  if (op != ncclSum) return failed(comm, ncclInvalidArgument, "ncclAllReduce: the stand-in sums only");
  if (datatype != ncclFloat32 && datatype != ncclFloat64)
    return failed(comm, ncclInvalidArgument, "ncclAllReduce: the stand-in sums float32 or float64");
  const size_t element = datatype == ncclFloat64 ? 8 : 4;
  if (count == 0) return ncclSuccess;
  if (!attn::emu::is_device_range(recvbuff, count * element) || !attn::emu::is_device_range(sendbuff, count * element))
    return failed(comm, ncclInvalidArgument, "ncclAllReduce: a buffer is not device memory");
  if (sendbuff != recvbuff) std::memmove(recvbuff, sendbuff, count * element);
  if (comm->size == 1) return ncclSuccess;
  const MPI_Datatype type = datatype == ncclFloat64 ? MPI_DOUBLE : MPI_FLOAT;
  // MPI counts are int: sum in pieces.
  char* data = static_cast<char*>(recvbuff);
  for (size_t done = 0; done < count;) {
    const size_t piece = std::min(count - done, static_cast<size_t>(INT_MAX));
    if (MPI_Allreduce(MPI_IN_PLACE, data + done * element, static_cast<int>(piece), type, MPI_SUM, comm->mpi) !=
        MPI_SUCCESS)
      return failed(comm, ncclRemoteError, "MPI_Allreduce failed");
    done += piece;
  }
  return ncclSuccess;
}

// Calls run when made (the emulation is synchronous); a group only has to be
// closed as it was opened.
ncclResult_t ncclGroupStart() {
  ++g_group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (g_group_depth == 0) return failed(nullptr, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  --g_group_depth;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
  }
  return "unknown result code";
}

const char* ncclGetLastError(ncclComm_t comm) { return (comm ? comm->last_error : g_last_error).c_str(); }
