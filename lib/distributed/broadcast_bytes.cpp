// lib/distributed/broadcast_bytes.cpp — size, then contents, as two broadcasts.
#include "distributed/broadcast_bytes.hpp"

#include <cstring>

#include <ATen/ATen.h>

namespace mnist_ddp::distributed {

std::string broadcast_bytes(Communicator& comm, const std::string& bytes) {
  at::Tensor size = at::full({1}, static_cast<std::int64_t>(bytes.size()), at::kLong);
  comm.broadcast(size, /*root=*/0);
  at::Tensor buffer = at::empty({size.item<std::int64_t>()}, at::kByte);
  if (comm.rank() == 0) std::memcpy(buffer.data_ptr(), bytes.data(), bytes.size());
  comm.broadcast(buffer, /*root=*/0);
  return std::string(static_cast<const char*>(buffer.data_ptr()), buffer.numel());
}

}  // namespace mnist_ddp::distributed
