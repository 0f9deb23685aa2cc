// lib/distributed/agreement.cpp — one max and one broadcast decide; options compared; last catch.
#include "distributed/agreement.hpp"

#include <array>
#include <cerrno>  // program_invocation_short_name (GNU)
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "common/error.hpp"
#include "config/options.hpp"

namespace mnist_ddp::distributed {
namespace {

/// Note [One agreement] over any transport: `max_of` reduces one integer, `bytes_of` broadcasts.
template <typename MaxOf, typename BytesOf>
Verdict decide(int rank, int size, int code, const std::string& reason, bool share_reason,
               MaxOf max_of, BytesOf bytes_of) {
  // Higher codes first, then lower ranks: code * size + (size - 1 - rank), 0 for success.
  const std::int64_t mine = code == 0 ? 0 : std::int64_t{code} * size + (size - 1 - rank);
  const std::int64_t agreed = max_of(mine);
  if (agreed == 0) return {};
  Verdict verdict;
  verdict.code = static_cast<int>(agreed / size);
  verdict.rank = size - 1 - static_cast<int>(agreed % size);
  const bool its_rank = verdict.rank == rank;
  if (share_reason) {
    verdict.reason = bytes_of(its_rank ? reason : std::string(), verdict.rank);
  } else if (its_rank) {
    verdict.reason = reason;
  }
  return verdict;
}

/// Collective over MPI: `root`'s bytes, watched as `what`.
std::string mpi_bytes_of(MpiWatchdog& watched, const std::string& bytes, int root,
                         const std::string& what) {
  // Shared, so that the buffers outlive an abandoned wait.
  const auto size = std::make_shared<std::uint64_t>(bytes.size());
  MPI_Request request = MPI_REQUEST_NULL;
  MDDP_MPI_CHECK(MPI_Ibcast(size.get(), 1, MPI_UINT64_T, root, watched.comm(), &request));
  watched.wait(request, what, size);
  const auto text = std::make_shared<std::string>(bytes);
  text->resize(*size);
  MDDP_MPI_CHECK(
      MPI_Ibcast(text->data(), static_cast<int>(*size), MPI_CHAR, root, watched.comm(), &request));
  watched.wait(request, what, text);
  return *text;
}

ExitCode exit_code(const std::exception& error) {
  const auto* known = dynamic_cast<const Error*>(&error);
  return known != nullptr ? known->code() : ExitCode::kFailure;
}

/// What went wrong, without the C++ backtrace that LibTorch's errors carry in what().
std::string error_text(const std::exception& error) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  return torch_error != nullptr ? torch_error->what_without_backtrace() : error.what();
}

void print_error(const std::string& label, int code, const std::string& text) {
  const char* program = program_invocation_short_name;
  std::fprintf(stderr, "%s: error: %s %s\n", program, label.c_str(), text.c_str());
  if (code == static_cast<int>(ExitCode::kUsage)) {
    std::fprintf(stderr, "Try '%s --help'.\n", program);
  }
  std::fflush(stderr);
}

}  // namespace

Verdict agree(MpiWatchdog& watched, int code, const std::string& reason, const std::string& what,
              bool share_reason) {
  const auto max_of = [&](std::int64_t mine) {
    const auto values = std::make_shared<std::array<std::int64_t, 2>>();
    (*values)[0] = mine;
    MPI_Request request = MPI_REQUEST_NULL;
    MDDP_MPI_CHECK(MPI_Iallreduce(&(*values)[0], &(*values)[1], 1, MPI_INT64_T, MPI_MAX,
                                  watched.comm(), &request));
    watched.wait(request, what, values);
    return (*values)[1];
  };
  const auto bytes_of = [&](const std::string& bytes, int root) {
    return mpi_bytes_of(watched, bytes, root, what);
  };
  return decide(watched.rank(), watched.size(), code, reason, share_reason, max_of, bytes_of);
}

Verdict agree(Communicator& comm, int code, const std::string& reason, bool share_reason) {
  const auto max_of = [&](std::int64_t mine) {
    at::Tensor value = at::full({1}, mine, at::kLong);
    if (comm.size() > 1) comm.all_reduce(value, ReduceOp::kMax);
    return value.item<std::int64_t>();
  };
  const auto bytes_of = [&](const std::string& bytes, int root) {
    return broadcast_bytes(comm, bytes, root);
  };
  return decide(comm.rank(), comm.size(), code, reason, share_reason, max_of, bytes_of);
}

void end_agreed(const Verdict& verdict, int rank, const std::string& label) {
  if (verdict.rank == rank) print_error(label, verdict.code, verdict.reason);
  throw AgreedFailure(verdict.code);
}

void run_agreed(const World& world, const std::string& what, const std::function<void()>& phase) {
  run_agreed(world.watchdog(), what, phase);
}

void run_agreed(MpiWatchdog& watched, const std::string& what, const std::function<void()>& phase) {
  int code = 0;
  std::string reason;
  try {
    phase();
  } catch (const AgreedFailure&) {
    throw;
  } catch (const CommTimeout&) {
    throw;
  } catch (const std::exception& e) {
    code = static_cast<int>(exit_code(e));
    reason = error_text(e);
  }
  const Verdict verdict =
      agree(watched, code, reason, "the agreement after " + what, /*share_reason=*/false);
  if (verdict.failed()) end_agreed(verdict, watched.rank(), process_label());
}

std::string broadcast_bytes(const World& world, const std::string& bytes, int root) {
  return mpi_bytes_of(world.watchdog(), bytes, root,
                      "a broadcast from rank " + std::to_string(root));
}

std::string broadcast_bytes(Communicator& comm, const std::string& bytes, int root) {
  if (comm.size() == 1) return bytes;
  at::Tensor size = at::full({1}, static_cast<std::int64_t>(bytes.size()), at::kLong);
  comm.broadcast(size, root);
  at::Tensor buffer = at::empty({size.item<std::int64_t>()}, at::kByte);
  if (comm.rank() == root) std::memcpy(buffer.data_ptr(), bytes.data(), bytes.size());
  comm.broadcast(buffer, root);
  return std::string(static_cast<const char*>(buffer.data_ptr()), buffer.numel());
}

void check_same_options(const World& world, const config::TrainConfig& config) {
  std::string mine;
  for (const auto& [name, value] : config::describe_config(config, config::Scope::kJob)) {
    mine += name + '\n' + value + '\n';
  }
  const std::string rank0 = broadcast_bytes(world, mine);
  if (rank0 == mine) return;
  // Both lists come from the same describe_config: the same names in the same order.
  std::istringstream here(mine);
  std::istringstream there(rank0);
  std::string name, value, name0, value0;
  while (std::getline(here, name) && std::getline(here, value) && std::getline(there, name0) &&
         std::getline(there, value0)) {
    if (name == name0 && value == value0) continue;
    throw UsageError("--" + name + " is " + value + " on this rank but " + value0 +
                     " on rank 0: every rank must run with the same options (check the "
                     "MNIST_DDP_* variables and --config files each rank sees)");
  }
  throw UsageError(
      "the options of this rank differ from rank 0's: is the same mnist_ddp running on every "
      "rank?");
}

int run_program(int* argc, char*** argv, const std::function<int(World&)>& program) {
  std::optional<World> world;
  try {
    world.emplace(argc, argv);
    return program(*world);
  } catch (const AgreedFailure& failure) {
    return failure.code;  // already reported by the rank that saw it
  } catch (const std::exception& error) {
    // Other ranks may be inside a collective this rank will never join: end them all.
    const int code = static_cast<int>(exit_code(error));
    print_error(world ? world->label() : process_label(), code, error_text(error));
    abort_job(code);
  }
}

}  // namespace mnist_ddp::distributed
