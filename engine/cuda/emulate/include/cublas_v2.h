// ATTN_CUDA=EMULATE: stands in for the CUDA toolkit's <cublas_v2.h> (the GEMM
// subset the backend calls, computed by OpenBLAS with cuBLAS's conventions).
#pragma once
#include "attn/engine/cuda/emulate/cublas_api.h"
