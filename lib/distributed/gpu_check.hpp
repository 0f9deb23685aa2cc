// lib/distributed/gpu_check.hpp — provides: MDDP_CUDA_CHECK, MDDP_NCCL_CHECK; NCCL builds only.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace mnist_ddp::distributed {

void check_cuda(cudaError_t result, const char* expression, const char* file, int line);

/// ncclInProgress passes: the caller of a non-blocking communicator polls it.
void check_nccl(ncclResult_t result, const char* expression, const char* file, int line);

/// "<ncclGetErrorString> (<ncclGetLastError>)", for errors found by polling.
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm);

}  // namespace mnist_ddp::distributed

#define MDDP_CUDA_CHECK(expr) \
  ::mnist_ddp::distributed::check_cuda((expr), #expr, __FILE__, __LINE__)
#define MDDP_NCCL_CHECK(expr) \
  ::mnist_ddp::distributed::check_nccl((expr), #expr, __FILE__, __LINE__)
