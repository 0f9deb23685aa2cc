// lib/train/trainer.cpp — the training loop.
#include "train/trainer.hpp"

#include <chrono>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "train/make_optimizer.hpp"
#include "train/parameter_broadcast.hpp"

namespace mnist_ddp::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Trainer::Trainer(const config::TrainConfig& config, dist::Communicator& comm,
                 model::Classifier& model, const data::Dataset& train_set,
                 const data::Dataset& test_set)
    : config_(config),
      comm_(comm),
      model_(model),
      train_set_(train_set),
      test_set_(test_set),
      train_batches_(train_set, config.normalize_mean, config.normalize_std),
      test_batches_(test_set, config.normalize_mean, config.normalize_std),
      sampler_(train_set.size(), comm.size(), comm.rank(), config.seed, /*shuffle=*/true,
               config.drop_last),
      optimizer_(make_optimizer(config, model.parameters())),
      averager_(comm, model.parameters()) {
  broadcast_parameters(comm_, model_);
  // Dropout masks must differ between ranks (each sees other images) yet repeat run to run.
  torch::manual_seed(static_cast<std::uint64_t>(config.seed) * 1000003u +
                     static_cast<std::uint64_t>(comm.rank()));
}

std::int64_t Trainer::steps_per_epoch() const {
  return (sampler_.num_samples() + config_.batch_size - 1) / config_.batch_size;
}

EpochReport Trainer::train_epoch(std::int64_t epoch, std::int64_t step_limit) {
  const Clock::time_point start = Clock::now();
  model_.train();
  sampler_.set_epoch(epoch);
  const at::Tensor shard = sampler_.indices();
  // Summed as tensors so the loop never waits for a value: no host sync per step.
  at::Tensor loss_sum = at::zeros({}, at::kDouble);
  std::int64_t steps = 0;
  std::int64_t images = 0;

  for (std::int64_t first = 0; first < shard.size(0) && step_ < step_limit;
       first += config_.batch_size) {
    const std::int64_t size = std::min<std::int64_t>(config_.batch_size, shard.size(0) - first);
    const data::Batch batch = train_batches_.make(shard.narrow(0, first, size));
    optimizer_->zero_grad();
    const at::Tensor loss = at::cross_entropy_loss(model_.forward(batch.inputs), batch.targets);
    loss.backward();
    averager_.average();
    optimizer_->step();
    loss_sum += loss.detach();
    ++steps;
    ++step_;
    images += size;
  }

  at::Tensor totals =
      at::stack({loss_sum, at::scalar_tensor(static_cast<double>(steps), at::kDouble),
                 at::scalar_tensor(static_cast<double>(images), at::kDouble)});
  comm_.all_reduce(totals, dist::ReduceOp::kSum);

  EpochReport report;
  report.epoch = epoch + 1;
  report.step = step_;
  report.complete = steps == steps_per_epoch();
  report.train_loss = totals[0].item<double>() / std::max(1.0, totals[1].item<double>());
  report.images = static_cast<std::int64_t>(totals[2].item<double>());
  report.train_seconds = seconds_since(start);
  report.images_per_sec = report.images / report.train_seconds;
  return report;
}

TrainSummary Trainer::run(const std::function<void(const EpochReport&)>& on_epoch) {
  const Clock::time_point start = Clock::now();
  const std::int64_t step_limit =
      config_.max_steps > 0 ? config_.max_steps : std::numeric_limits<std::int64_t>::max();
  TrainSummary summary;
  for (std::int64_t epoch = 0; epoch < config_.epochs && step_ < step_limit; ++epoch) {
    EpochReport report = train_epoch(epoch, step_limit);
    report.test = evaluate(model_, test_set_, test_batches_, comm_, config_.test_batch_size);
    report.elapsed_seconds = seconds_since(start);
    summary.images += report.images;
    summary.train_seconds += report.train_seconds;
    summary.train_loss = report.train_loss;
    summary.test = report.test;
    on_epoch(report);
  }
  summary.steps = step_;
  summary.images_per_sec = summary.images / summary.train_seconds;
  return summary;
}

}  // namespace mnist_ddp::train
