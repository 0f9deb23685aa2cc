// tests/mpi/test_trainer_warmup.cpp — the Trainer's warm-up before its clock (Note [One-time costs
// before the clock]) is sized by the rank's shard, not by --batch-size alone.
#include <doctest/doctest.h>

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <string>

#include "distributed/mpi_communicator.hpp"
#include "model/classifier.hpp"
#include "support/cpu_plan.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::train {
namespace {

// LibTorch's RecordFunction::inputs() reads a flag that its release build never sets whenever
// NDEBUG is off, as in the sanitizer tree, where UBSan stops on that load: the case runs elsewhere.
#if defined(__has_feature)
#if __has_feature(undefined_behavior_sanitizer)
#define MNIST_DDP_UNDER_UBSAN 1
#endif
#endif
#ifdef MNIST_DDP_UNDER_UBSAN
constexpr bool kInputsUnreadable = true;
#else
constexpr bool kInputsUnreadable = false;
#endif

std::int64_t& largest_loss_batch() {
  static std::int64_t images = 0;
  return images;
}

TEST_CASE("Trainer: the warm-up pass takes at most the shard's images, whatever the batch size" *
          doctest::skip(kInputsUnreadable)) {
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const data::Dataset train_set = testing::synthetic_dataset(40, /*seed=*/21);
  config::TrainConfig config;
  config.batch_size = 1000;
  const auto model = model::make_model(config.model);
  largest_loss_batch() = 0;
  const at::CallbackHandle handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn)
                                     -> std::unique_ptr<at::ObserverContext> {
        if (std::string(fn.name()) == "mnist_ddp::classification_loss") {
          largest_loss_batch() = std::max(largest_loss_batch(), fn.inputs()[0].toTensor().size(0));
        }
        return nullptr;
      }).needsInputs(true));
  const Trainer trainer(config, testing::cpu_plan(alone), alone, *model, train_set, train_set);
  at::removeCallback(handle);
  CHECK(largest_loss_batch() == 40);
}

}  // namespace
}  // namespace mnist_ddp::train
