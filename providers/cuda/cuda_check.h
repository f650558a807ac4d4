// Every CUDA runtime, cuBLASLt and cuDNN call goes through these: a failure becomes an
// absl::Status naming the call and the library's own message (the runtime prefixes the
// node and op). Nothing aborts.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "absl/status/status.h"

namespace tandem::cuda {

inline absl::Status Check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();  // clear the sticky-free error state so later calls can proceed
  const std::string msg = std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return e == cudaErrorMemoryAllocation ? absl::ResourceExhaustedError(msg) : absl::InternalError(msg);
}

inline absl::Status Check(cublasStatus_t e, const char* call) {
  if (e == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string msg = std::string(call) + ": cuBLAS status " + std::to_string(static_cast<int>(e));
  return e == CUBLAS_STATUS_ALLOC_FAILED ? absl::ResourceExhaustedError(msg) : absl::InternalError(msg);
}

inline absl::Status Check(cudnnStatus_t e, const char* call) {
  if (e == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string msg = std::string(call) + ": " + cudnnGetErrorString(e);
  return e == CUDNN_STATUS_ALLOC_FAILED ? absl::ResourceExhaustedError(msg) : absl::InternalError(msg);
}

}  // namespace tandem::cuda

// Returns from the enclosing function (which returns absl::Status or StatusOr) on failure.
#define TANDEM_CUDA_RETURN(call)                                           \
  do {                                                                     \
    absl::Status tandem_cuda_status_ = ::tandem::cuda::Check((call), #call); \
    if (!tandem_cuda_status_.ok()) return tandem_cuda_status_;             \
  } while (0)
// The launch of a kernel of our own (<<<...>>>): checks the launch itself.
#define TANDEM_CUDA_RETURN_LAUNCH(what) TANDEM_CUDA_RETURN(cudaGetLastError())
