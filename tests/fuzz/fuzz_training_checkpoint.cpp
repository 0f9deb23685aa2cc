// tests/fuzz/fuzz_training_checkpoint.cpp — provides: the libFuzzer harness of the checks between
// a checkpoint file and the run it is loaded into (restore_checkpoint, restore_model).
// Input: the bytes of a checkpoint file; its CRC trailer is made correct first, so mutations reach
// the header and the tensors instead of all failing the CRC (fuzz_checkpoint_file covers the
// CRC). The decoded contents are restored into a fresh linear model with SGD with momentum, and
// again with Adam (the seeds of tests/fuzz/make_seeds.py match these runs' options, so mutations
// get past the options check to the tensors), and into a model alone, as --eval-only does.
// Outcome: CheckpointError, or a restore that loaded the checkpoint's tensors bit for bit (never
// converted to another type) and after which the run works: every RNG state is one the CPU
// generator accepts, and the optimizer takes a step from the restored state.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include "checkpoint/checkpoint_meta.hpp"
#include "checkpoint/optimizer_state.hpp"
#include "checkpoint/training_checkpoint.hpp"
#include "common/error.hpp"
#include "config/train_config.hpp"
#include "model/classifier.hpp"
#include "outcome.hpp"
#include "train/device_optimizer.hpp"

namespace {

namespace checkpoint = mnist_ddp::checkpoint;
using mnist_ddp::CheckpointError;
using mnist_ddp::fuzz::expect_only;
using mnist_ddp::fuzz::require_property;

constexpr std::size_t kTrailer = 4;           // the CRC-32 at the end of the file
constexpr std::int64_t kTrainImages = 60000;  // the data set size the seeds were written for

/// The runs the seeds were written for: the default options (linear model, lr 0.01, batch 64,
/// seed 1) with SGD and momentum 0.9, or with Adam.
mnist_ddp::config::TrainConfig run_config(mnist_ddp::config::Optimizer optimizer) {
  mnist_ddp::config::TrainConfig config;
  config.optimizer = optimizer;
  config.momentum = optimizer == mnist_ddp::config::Optimizer::kSgd ? 0.9 : 0.0;
  return config;
}

/// True when both tensors have the same type, shape and bytes.
bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || !a.sizes().equals(b.sizes())) return false;
  const at::Tensor ca = a.contiguous();
  const at::Tensor cb = b.contiguous();
  const size_t bytes = static_cast<size_t>(ca.numel()) * ca.element_size();
  return bytes == 0 || std::memcmp(ca.data_ptr(), cb.data_ptr(), bytes) == 0;
}

/// The checkpoint's tensor `name` (the first of that name, as the restore reads them).
const at::Tensor* saved_tensor(const checkpoint::CheckpointContents& contents,
                               const std::string& name) {
  for (const auto& [entry, tensor] : contents.tensors) {
    if (entry == name) return &tensor;
  }
  return nullptr;
}

/// After a successful restore: every parameter is the checkpoint's, bit for bit and of the same
/// type (never converted).
void require_parameters_loaded(const checkpoint::CheckpointContents& contents,
                               mnist_ddp::model::Classifier& model) {
  for (const auto& item : model.named_parameters()) {
    const at::Tensor* saved = saved_tensor(contents, "model/" + item.key());
    require_property(saved && same_bits(*saved, item.value()),
                     "restored parameters are the checkpoint's, bit for bit");
  }
}

/// ... and so is every optimizer state tensor.
void require_loaded(const checkpoint::CheckpointContents& contents,
                    mnist_ddp::model::Classifier& model, torch::optim::Optimizer& optimizer) {
  require_parameters_loaded(contents, model);
  for (const auto& [name, tensor] :
       checkpoint::optimizer_state_tensors(optimizer, model.parameters())) {
    const at::Tensor* saved = saved_tensor(contents, name);
    require_property(saved && same_bits(*saved, tensor),
                     "restored optimizer state is the checkpoint's, bit for bit");
  }
}

/// Restores `loaded` into a fresh run of `config`; on success, the run must be able to go on.
void restore_run(const checkpoint::LoadedCheckpoint& loaded,
                 const mnist_ddp::config::TrainConfig& config) {
  torch::manual_seed(0);  // the same initial model for every input
  const std::shared_ptr<mnist_ddp::model::Classifier> model = mnist_ddp::model::make_linear_net();
  const auto optimizer = mnist_ddp::train::make_optimizer(config, model->parameters());
  expect_only<CheckpointError>([&] {
    const checkpoint::RestoredRun run =
        checkpoint::restore_checkpoint(loaded, config, kTrainImages, *model, *optimizer);
    require_loaded(loaded.contents, *model, *optimizer);
    // What the trainer does next: hand this rank's RNG state to the CPU generator (any rank's,
    // when the world size is unchanged), then train. Any exception here escapes as a finding.
    at::Generator generator = at::detail::createCPUGenerator();
    for (std::int64_t rank = 0; rank < loaded.meta.world_size; ++rank) {
      generator.set_state(checkpoint::generator_state(run.rng_states, rank));
    }
    optimizer->zero_grad();
    model->forward(at::ones({1, 1, 28, 28})).sum().backward();
    optimizer->step();
  });
}

void restore_model_only(const checkpoint::LoadedCheckpoint& loaded) {
  const std::shared_ptr<mnist_ddp::model::Classifier> model = mnist_ddp::model::make_linear_net();
  expect_only<CheckpointError>([&] {
    checkpoint::restore_model(loaded, mnist_ddp::config::Model::kLinear, *model);
    require_parameters_loaded(loaded.contents, *model);
    require_property(model->forward(at::zeros({1, 1, 28, 28})).sizes().equals({1, 10}),
                     "a restored model evaluates");
  });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  at::set_num_threads(1);  // one input at a time; no thread pool to wake per tiny tensor
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= kTrailer) {
    const std::uint32_t crc = checkpoint::checkpoint_checksum(bytes);
    for (std::size_t i = 0; i < kTrailer; ++i) {
      bytes[bytes.size() - kTrailer + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
    }
  }
  checkpoint::LoadedCheckpoint loaded;
  try {
    loaded = checkpoint::decode_training_checkpoint(bytes, "fuzz input");
  } catch (const CheckpointError&) {
    return 0;  // fuzz_checkpoint_file's ground, or a header the resume refuses before restoring
  }
  restore_run(loaded, run_config(mnist_ddp::config::Optimizer::kSgd));
  restore_run(loaded, run_config(mnist_ddp::config::Optimizer::kAdam));
  restore_model_only(loaded);
  return 0;
}
