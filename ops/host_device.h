// ATTN_HD: a function written once for the host and the device (host and
// device qualifiers when compiled by nvcc, plain inline otherwise).
#pragma once

#ifdef __CUDACC__
#define ATTN_HD __host__ __device__ inline
#else
#define ATTN_HD inline
#endif
