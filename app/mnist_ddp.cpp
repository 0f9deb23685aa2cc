// app/mnist_ddp.cpp — the program: start the world -> parse options -> help, version or a
// training run (lib/run) -> exit code. Errors in phases every rank runs are agreed on (same exit
// code everywhere); any other error aborts the whole job so no rank waits forever.
#include <cstdio>

#include "common/blas_core.hpp"
#include "common/error.hpp"
#include "common/heap_reuse.hpp"
#include "config/options.hpp"
#include "distributed/agreement.hpp"
#include "distributed/world.hpp"
#include "report/versions.hpp"
#include "run/training_run.hpp"

using namespace mnist_ddp;

// Before any library initialises: OpenBLAS reads its core then (Note [BLAS core]).
[[gnu::section(".preinit_array"), gnu::used]] constexpr auto kChooseBlasCore = &choose_blas_core;

int main(int argc, char** argv) {
  check_blas_core();
  keep_freed_memory_for_reuse();  // a refusal only costs speed
  run::install_stop_handlers();   // before anything slow: a stop during the start-up is agreed
  return distributed::run_program(&argc, &argv, [&](distributed::World& world) {
    config::Command command;
    distributed::run_agreed(world, "parsing the options", [&] {
      command = config::parse_command(argc, argv);
      command.config = config::split_global_batch(command.config, world.size());
    });
    switch (command.action) {
      case config::Action::kHelp:
        if (world.rank() == 0) std::printf("%s", config::help_text().c_str());
        return 0;
      case config::Action::kVersion:
        if (world.rank() == 0) {
          for (const auto& [component, version] : report::component_versions()) {
            std::printf("%-10s %s\n", component.c_str(), version.c_str());
          }
        }
        return 0;
      case config::Action::kTrain:
        world.set_comm_timeout(command.config.comm_timeout);
        return run::run_training(world, command.config);
    }
    return static_cast<int>(ExitCode::kFailure);
  });
}
