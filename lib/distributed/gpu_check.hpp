// lib/distributed/gpu_check.hpp — provides: MDDP_CUDA_CHECK(expr) and MDDP_NCCL_CHECK(expr), which
// turn a failed CUDA runtime call into an Error (exit code 1) and a failed NCCL call into a
// CommError, naming the call, the error text and the call site (only built with the NCCL backend).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace mnist_ddp::distributed {

/// Throws Error (exit code 1) unless `result` is cudaSuccess.
void check_cuda(cudaError_t result, const char* expression, const char* file, int line);

/// Throws CommError unless `result` is ncclSuccess. ncclInProgress is not an error here: the
/// caller of a non-blocking communicator polls it (NcclCommunicator does).
void check_nccl(ncclResult_t result, const char* expression, const char* file, int line);

/// "ncclX failed: <ncclGetErrorString> (<ncclGetLastError>)", for errors found by polling.
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm);

}  // namespace mnist_ddp::distributed

#define MDDP_CUDA_CHECK(expr) \
  ::mnist_ddp::distributed::check_cuda((expr), #expr, __FILE__, __LINE__)
#define MDDP_NCCL_CHECK(expr) \
  ::mnist_ddp::distributed::check_nccl((expr), #expr, __FILE__, __LINE__)
