// TANDEM_HD marks a function compiled for both the host and, under nvcc, the GPU
// (__host__ __device__), so the CPU and CUDA kernels share one definition of index or
// bit arithmetic (Dropout's masks, Pad's source positions).
#pragma once

#ifdef __CUDACC__
#define TANDEM_HD __host__ __device__
#else
#define TANDEM_HD
#endif
