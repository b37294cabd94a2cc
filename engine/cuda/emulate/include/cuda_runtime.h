// ATTN_CUDA=EMULATE: stands in for the CUDA toolkit's <cuda_runtime.h>, so
// the backend's .cu sources compile unchanged as host C++ and their kernels
// run on the CPU (engine/cuda/emulate/, docs/gpu.md "Emulated build").
#pragma once
#include "attn/engine/cuda/emulate/builtins.h"
#include "attn/engine/cuda/emulate/runtime_api.h"
