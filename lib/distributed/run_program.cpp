// lib/distributed/run_program.cpp — the World, the program, and the last catch.
#include "distributed/run_program.hpp"

#include <exception>
#include <optional>

#include "distributed/agreement.hpp"

namespace mnist_ddp::distributed {

int run_program(int* argc, char*** argv, const std::function<int(World&)>& program) {
  std::optional<World> world;
  try {
    world.emplace(argc, argv);
    return program(*world);
  } catch (const AgreedFailure& failure) {
    return failure.code;  // already reported by the rank that saw it
  } catch (const std::exception& error) {
    // Other ranks may be inside a collective this rank will never join: end them all.
    abort_job(report_error(world ? world->label() : process_label(), error));
  }
}

}  // namespace mnist_ddp::distributed
