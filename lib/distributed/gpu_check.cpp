// lib/distributed/gpu_check.cpp — CUDA runtime and NCCL result checking.
#include "distributed/gpu_check.hpp"

#include <string>

#include "common/error.hpp"
#include "distributed/gpu_libraries.hpp"

namespace mnist_ddp::distributed {

void check_cuda(cudaError_t result, const char* expression, const char* file, int line) {
  if (result == cudaSuccess) return;
  // Clear the sticky last error so a later, unrelated check does not report it again.
  cuda_runtime().cudaGetLastError();
  throw Error(ExitCode::kFailure, std::string(expression) +
                                      " failed: " + cuda_runtime().cudaGetErrorName(result) + " (" +
                                      cuda_runtime().cudaGetErrorString(result) + ") @ " + file +
                                      ":" + std::to_string(line));
}

std::string nccl_error_text(ncclResult_t result, ncclComm_t comm) {
  std::string text = nccl().ncclGetErrorString(result);
  // NCCL keeps a more specific message for the last failure (which peer, which system call).
  const char* last = nccl().ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

void check_nccl(ncclResult_t result, const char* expression, const char* file, int line) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw CommError(std::string(expression) + " failed: " + nccl_error_text(result, nullptr) + " @ " +
                  file + ":" + std::to_string(line));
}

}  // namespace mnist_ddp::distributed
