// ATTN_CUDA=EMULATE with MPI: stands in for NCCL's <nccl.h>, so the
// data-parallel code's NCCL path (train/distributed/nccl_gradient_sync.cpp)
// compiles unchanged and runs in CI without a GPU. Only the calls that file
// makes exist. The collectives are MPI's over the emulated device memory,
// which is host memory; the emulation's streams are synchronous, so a call
// has finished when it returns. A float32 sum is added in float32, as NCCL
// adds it. Like NCCL 2.28, a communicator refuses two processes on one device.
#pragma once
#include <cstddef>

#include <cuda_runtime.h>

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
} ncclResult_t;

typedef enum { ncclFloat32 = 7, ncclFloat64 = 8 } ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;

struct ncclComm;
typedef ncclComm* ncclComm_t;

// 0: not a release of NCCL; the log names the stand-in instead.
ncclResult_t ncclGetVersion(int* version);
ncclResult_t ncclGetUniqueId(ncclUniqueId* id);
// Collective over MPI_COMM_WORLD, which must be initialised: nranks and rank
// must be MPI's, and every process must pass the same id.
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
const char* ncclGetErrorString(ncclResult_t result);
// The last failure's detail, of `comm` or (nullptr) of the process.
const char* ncclGetLastError(ncclComm_t comm);
