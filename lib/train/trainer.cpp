// lib/train/trainer.cpp — the training loop.
#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include "common/error.hpp"
#include "common/process_clock.hpp"
#include "ddp/parameter_broadcast.hpp"
#include "model/autocast_scope.hpp"
#include "train/default_generators.hpp"
#include "train/make_optimizer.hpp"
#include "train/one_time_costs.hpp"

namespace mnist_ddp::train {
namespace {

using Clock = std::chrono::steady_clock;

// On a GPU, reading the stop flag makes the host wait for the step's kernels, so it is read only
// every this many steps (a few milliseconds of MNIST work), and before the host reads the device
// anyway (Note [The device's time in the phases]); on the CPU, after every step.
constexpr std::int64_t kCudaStopCheckSteps = 100;

// Eager steps before a step is captured (Note [The step as one CUDA graph]).
constexpr int kGraphWarmupSteps = 3;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Dropout masks must differ between ranks (each sees other images) yet repeat run to run.
std::uint64_t dropout_seed(std::int64_t seed, int rank, std::int64_t step) {
  return static_cast<std::uint64_t>(seed) * 1000003u + static_cast<std::uint64_t>(rank) +
         static_cast<std::uint64_t>(step) * 7919u;
}

at::ScalarType wire_dtype(config::GradDtype dtype) {
  if (dtype == config::GradDtype::kBf16) return at::kBFloat16;
  if (dtype == config::GradDtype::kFp16) return at::kHalf;
  return at::kFloat;
}

/// Whether step `step` is one of every `interval` steps (an option's; 0 turns it off).
bool every(std::int64_t step, std::int64_t interval) {
  return interval > 0 && step % interval == 0;
}

/// Optimizer steps that train `samples` images of one rank.
std::int64_t steps_for(std::int64_t samples, std::int64_t batch_size, std::int64_t grad_accum) {
  const std::int64_t batches = (samples + batch_size - 1) / batch_size;
  return (batches + grad_accum - 1) / grad_accum;
}

}  // namespace

Trainer::Trainer(const config::TrainConfig& config, const distributed::DevicePlan& plan,
                 distributed::Communicator& comm, model::Classifier& model,
                 const data::Dataset& train_set, const data::Dataset& test_set,
                 const GraphPlan& graphs)
    : config_(config),
      device_(plan.device),
      comm_(comm),
      model_(model),
      train_set_(train_set),
      test_set_(test_set),
      stream_(plan.device, comm, graphs.capture),
      train_batches_(train_set, config.normalize_mean, config.normalize_std),
      test_batches_(test_set, config.normalize_mean, config.normalize_std),
      sampler_(train_set.size(), comm.size(), comm.rank(), config.seed, /*shuffle=*/true,
               config.drop_last),
      optimizer_(make_optimizer(config, model.parameters())),
      device_optimizer_(*optimizer_),
      schedule_(config.lr_schedule, config.lr, config.warmup_steps, total_steps()),
      reducer_(comm, model.parameters(), config.bucket_mb, wire_dtype(config.grad_dtype),
               config.communicate_alone),
      loss_sums_(at::zeros({2}, at::TensorOptions(at::kDouble).device(device_))),
      epoch_tally_(loss_sums_[0]),
      window_tally_(loss_sums_[1]) {
  // Note [One-time costs before the clock], on every device this process trains on, with the
  // first step's batch: no larger than the shard.
  const std::vector<c10::Device> devices =
      plan.replicas.empty() ? std::vector<c10::Device>{device_} : plan.replicas;
  const std::int64_t device_batch = ddp::ModelReplicas::chunk_size(
      std::min<std::int64_t>(config.batch_size, sampler_.num_samples()), devices.size());
  for (const c10::Device& device : devices) {
    one_time_seconds_ += pay_one_time_costs(config.model, device, device_batch,
                                            config.precision == config::Precision::kBf16);
  }
  if (config.mode == config::Mode::kDp) {
    replicas_ = std::make_unique<ddp::ModelReplicas>(model_, config.model, plan.replicas);
  }
  if (graphs.capture) {
    if (config.grad_accum > 1 || replicas_) {  // plan_cuda_graph never asks for these
      throw Error(ExitCode::kFailure,
                  "Trainer: a graphed step is one micro-batch on one device (no --grad-accum, "
                  "no --mode dp)");
    }
    cursor_ =
        std::make_unique<data::ShardCursor>(config.batch_size, sampler_.num_samples(), device_);
    graphed_ = std::make_unique<GraphedStep>([this] { step_on_device(); }, device_, comm_,
                                             kGraphWarmupSteps);
  }
  ddp::broadcast_parameters(comm_, model_, config.communicate_alone);
  torch::manual_seed(dropout_seed(config.seed, comm.rank(), /*step=*/0));
}

std::int64_t Trainer::steps_per_epoch() const {
  return steps_for(sampler_.num_samples(), config_.batch_size, config_.grad_accum);
}

std::int64_t Trainer::total_steps_on(int world_size) const {
  const data::DistributedSampler sampler(train_set_.size(), world_size, /*rank=*/0, config_.seed,
                                         /*shuffle=*/true, config_.drop_last);
  const int batch_size =
      config_.global_batch_size > 0 ? config_.global_batch_size / world_size : config_.batch_size;
  return steps_for(sampler.num_samples(), batch_size, config_.grad_accum) * config_.epochs;
}

bool Trainer::agree_to_stop(const TrainerHooks& hooks) {
  at::Tensor flag = at::full({1}, hooks.stop_requested() ? 1 : 0, at::kLong);
  comm_.all_reduce(flag, distributed::ReduceOp::kMax);
  return flag.item<std::int64_t>() != 0;
}

void Trainer::gather_epoch_sums() {
  at::Tensor sums = epoch_tally_.take();
  comm_.all_reduce(sums, distributed::ReduceOp::kSum);
  const auto* sum = sums.data_ptr<double>();
  progress_.loss_sum += sum[TrainingTally::kLoss];
  progress_.loss_count += static_cast<std::int64_t>(sum[TrainingTally::kLosses]);
  progress_.images += static_cast<std::int64_t>(sum[TrainingTally::kImages]);
}

LogWindow Trainer::reduce_window() {
  LogWindow window;
  window.steps = window_tally_.steps();
  at::Tensor sums = window_tally_.take();
  const auto* sum = sums.data_ptr<double>();
  // Images per second of this rank's own time in the window, so read before the reduction.
  const double seconds = PhaseTimes{sum[TrainingTally::kData], sum[TrainingTally::kForward],
                                    sum[TrainingTally::kBackward], sum[TrainingTally::kCommWait],
                                    sum[TrainingTally::kOptimizer]}
                             .total();
  comm_.all_reduce(sums, distributed::ReduceOp::kSum);
  const double ranks = comm_.size();
  window.loss = sum[TrainingTally::kLoss] / std::max(1.0, sum[TrainingTally::kLosses]);
  window.images_per_sec = sum[TrainingTally::kImages] / std::max(seconds, 1e-12);
  window.phases = {sum[TrainingTally::kData] / ranks, sum[TrainingTally::kForward] / ranks,
                   sum[TrainingTally::kBackward] / ranks, sum[TrainingTally::kCommWait] / ranks,
                   sum[TrainingTally::kOptimizer] / ranks};
  return window;
}

std::vector<at::Tensor> Trainer::micro_batch_losses(const data::Batch& batch) {
  const model::AutocastScope autocast(device_.type(),
                                      config_.precision == config::Precision::kBf16);
  if (replicas_) return replicas_->weighted_losses(batch);
  // Logits in float32 for the loss, whatever precision the forward ran in.
  return {at::cross_entropy_loss(model_.forward(batch.inputs).to(at::kFloat), batch.targets)};
}

EvalResult Trainer::evaluate_test_set() {
  return evaluate(model_, test_set_, test_batches_, comm_, config_.test_batch_size,
                  config_.precision == config::Precision::kBf16);
}

EvalReport Trainer::evaluate_and_report(const TrainerHooks& hooks, double train_seconds) {
  const Clock::time_point start = Clock::now();
  EvalReport report;
  report.epoch = progress_.epoch + 1;
  report.step = progress_.step;
  report.test = evaluate_test_set();
  if (hooks.on_span) hooks.on_span(Span{"evaluate", start, Clock::now(), progress_.step});
  report.train_seconds = train_seconds;
  report.elapsed_seconds = seconds_since(run_start_);
  report.launch_seconds = seconds_since_process_start();
  if (!target_ && config_.target_accuracy > 0 && report.test.accuracy >= config_.target_accuracy) {
    target_ = report;
  }
  if (hooks.on_evaluation) hooks.on_evaluation(report);
  return report;
}

// Note [One add for both loss sums]
// Every micro-batch's loss goes into two sums, the epoch's and the log window's. As the two
// elements of one device tensor they take one add per step, not two: one kernel fewer in a
// captured step, which on a GPU costs in launches rather than in arithmetic.
void Trainer::sum_loss(const at::Tensor& loss) { loss_sums_.add_(loss); }

void Trainer::count_loss() {
  epoch_tally_.count_loss();
  window_tally_.count_loss();
}

// Note [The device's time in the phases]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// On a GPU the host queues a step's kernels (a graphed step's, with one replay call) and goes on
// to the next step; it waits for the device only where it reads a value back. The phases (data,
// forward, ...) time the host, so the device's time would be missing from them, and the rates
// made from them, a log window's images/s and each rank's in the summary, would count launches
// rather than steps: with --cuda-graph, one call queues a whole step. So reading the stop flag,
// which waits for every step queued before it, is timed as the step's comm_wait (the flag
// arrives with the step's allreduce), and on a GPU the flag is read, besides every
// kCudaStopCheckSteps steps, after each step that the host follows with a read of the device:
// a log window's sums, an evaluation, a checkpoint, the end of the epoch or of the run. Those
// reads then find the device done, and every second the device trained is in some step's
// phases. On the CPU each kernel has run when its call returns, and the read costs nothing.
bool Trainer::stop_agreed_after_step(bool device_read_follows) {
  if (device_.is_cuda() && progress_.step % kCudaStopCheckSteps != 0 && !device_read_follows) {
    return false;
  }
  return reducer_.any_rank_stopping();
}

at::Tensor Trainer::train_micro_batch(const at::Tensor& indices, int micro_batches,
                                      bool communicate, const TrainerHooks& hooks,
                                      PhaseClock& clock) {
  if (hooks.on_batch) hooks.on_batch(indices);
  const data::Batch batch = train_batches_.make(indices);
  clock.lap(&PhaseTimes::data, "data");
  std::vector<at::Tensor> losses = micro_batch_losses(batch);
  clock.lap(&PhaseTimes::forward, "forward");
  // Note [Stop agreement]: the stop flag rides on the gradient allreduce, so agreeing on a
  // preemption signal costs no extra message per step.
  reducer_.request_stop(hooks.stop_requested());
  reducer_.prepare_backward(communicate);
  // The micro-batch's loss (the sum of the replicas' weighted shares under --mode dp).
  at::Tensor detached = losses[0].detach();
  for (size_t r = 1; r < losses.size(); ++r) detached = detached + losses[r].detach().to(device_);
  if (micro_batches > 1) {
    for (at::Tensor& loss : losses) loss = loss / static_cast<double>(micro_batches);
  }
  // One call for every replica's loss: the GPUs run their backward passes concurrently.
  torch::autograd::backward(losses);
  clock.lap(&PhaseTimes::backward, "backward");
  return detached;
}

void Trainer::step_on_device() {
  reducer_.zero_grad();
  const data::Batch batch = train_batches_.make(cursor_->next());
  const at::Tensor loss = micro_batch_losses(batch).at(0);
  reducer_.prepare_backward(/*communicate=*/true);
  torch::autograd::backward({loss});
  reducer_.finish();
  device_optimizer_.apply();
  sum_loss(loss.detach());
}

Trainer::StepResult Trainer::graphed_step(const at::Tensor& shard, std::int64_t& first,
                                          const TrainerHooks& hooks) {
  StepResult step;
  step.graphed = true;
  PhaseClock clock(step.phases, hooks.on_span, progress_.step + 1);
  const std::int64_t size = config_.batch_size;
  if (hooks.on_batch) hooks.on_batch(shard.narrow(0, first, size));
  reducer_.request_stop(hooks.stop_requested());
  step.lr = schedule_.lr_at(progress_.step);
  device_optimizer_.prepare(step.lr);
  graphed_->run();
  clock.lap(&PhaseTimes::forward, "graphed_step");
  count_loss();
  step.images = size;
  progress_.position += size * comm_.size();
  first += size;
  ++progress_.step;
  return step;
}

Trainer::StepResult Trainer::train_step(const at::Tensor& shard, std::int64_t& first,
                                        const TrainerHooks& hooks) {
  // The last partial batch of an epoch has a shape of its own: it runs eagerly.
  if (graphed_ && shard.size(0) - first >= config_.batch_size) {
    return graphed_step(shard, first, hooks);
  }
  const std::int64_t batches_left =
      (shard.size(0) - first + config_.batch_size - 1) / config_.batch_size;
  const int micro_batches =
      static_cast<int>(std::min<std::int64_t>(config_.grad_accum, batches_left));
  StepResult step;
  PhaseClock clock(step.phases, hooks.on_span, progress_.step + 1);
  reducer_.zero_grad();
  for (int micro = 0; micro < micro_batches; ++micro) {
    const std::int64_t size = std::min<std::int64_t>(config_.batch_size, shard.size(0) - first);
    const at::Tensor loss =
        train_micro_batch(shard.narrow(0, first, size), micro_batches,
                          /*communicate=*/micro + 1 == micro_batches, hooks, clock);
    sum_loss(loss);
    count_loss();
    step.images += size;
    progress_.position += size * comm_.size();
    first += size;
  }
  if (replicas_) replicas_->gather_gradients();
  reducer_.finish();
  clock.lap(&PhaseTimes::comm_wait, "comm_wait");
  step.lr = schedule_.lr_at(progress_.step);
  device_optimizer_.prepare(step.lr);
  device_optimizer_.apply();
  if (replicas_) replicas_->broadcast_parameters();
  clock.lap(&PhaseTimes::optimizer, "optimizer");
  ++progress_.step;
  return step;
}

void Trainer::report_step(const StepResult& step, std::int64_t samples_left,
                          const TrainerHooks& hooks) {
  if (hooks.on_span && !step.graphed && (comm_.size() > 1 || config_.communicate_alone)) {
    for (const ddp::GradientReducer::CollectiveTiming& t : reducer_.last_collectives())
      hooks.on_span(Span{"allreduce", t.launched, t.done, progress_.step, t.bytes});
  }
  if (!hooks.on_step) return;
  StepReport report;
  report.step = progress_.step;
  report.epoch = progress_.epoch + 1;
  report.epoch_steps = steps_per_epoch();
  report.epoch_steps_done =
      report.epoch_steps - steps_for(samples_left, config_.batch_size, config_.grad_accum);
  report.images = step.images * comm_.size();
  report.seconds = step.phases.total();
  report.lr = step.lr;
  if (every(progress_.step, config_.log_every)) report.window = reduce_window();
  hooks.on_step(report);
}

EpochReport Trainer::train_epoch(std::int64_t step_limit, const TrainerHooks& hooks,
                                 bool& stopped) {
  const Clock::time_point start = Clock::now();
  const std::int64_t images_before = progress_.images;
  model_.train();
  sampler_.set_epoch(progress_.epoch);
  // On the training device, so that batches are gathered there (Dataset lives there too).
  const at::Tensor shard = sampler_.indices_from(progress_.position).to(device_);
  if (cursor_) cursor_->start(shard);
  std::int64_t first = 0;
  PhaseTimes phases;
  double evaluation_seconds = 0;  // of this epoch's --eval-every evaluations
  if (hooks.on_first_step && first_step_pending_) hooks.on_first_step();
  first_step_pending_ = false;

  while (first < shard.size(0) && progress_.step < step_limit) {
    StepResult step = train_step(shard, first, hooks);
    const bool last_step = first >= shard.size(0);
    const bool ends_run = progress_.step >= step_limit;
    const Clock::time_point check_start = Clock::now();  // Note [The device's time in the phases]
    const bool stop =
        stop_agreed_after_step(last_step || ends_run || every(progress_.step, config_.log_every) ||
                               every(progress_.step, config_.checkpoint_every) ||
                               every(progress_.step, config_.eval_every));
    step.phases.comm_wait += seconds_since(check_start);
    epoch_tally_.add_step(step.images, step.phases);
    window_tally_.add_step(step.images, step.phases);
    phases += step.phases;
    report_step(step, shard.size(0) - first, hooks);
    if (stop) {
      stopped = true;
      break;
    }
    if (every(progress_.step, config_.checkpoint_every) && !last_step) {
      checkpoint_at(hooks, checkpoint::CheckpointPoint::kEveryNSteps);
    }
    // The epoch's end, or the step limit, evaluates anyway (Trainer::run).
    if (every(progress_.step, config_.eval_every) && !last_step && !ends_run) {
      const Clock::time_point evaluation_start = Clock::now();
      evaluate_and_report(hooks, train_seconds_ + seconds_since(start) - evaluation_seconds);
      evaluation_seconds += seconds_since(evaluation_start);
      if (target_) break;
    }
  }
  const bool complete = first >= shard.size(0) && !stopped;
  gather_epoch_sums();

  EpochReport report;
  report.epoch = progress_.epoch + 1;
  report.step = progress_.step;
  report.complete = complete;
  report.train_loss = progress_.loss_sum / std::max<std::int64_t>(1, progress_.loss_count);
  report.images = progress_.images;
  report.train_seconds = seconds_since(start) - evaluation_seconds;
  report.images_per_sec = (progress_.images - images_before) / report.train_seconds;
  report.phases = phases;
  return report;
}

TrainSummary Trainer::run(const TrainerHooks& hooks) {
  const Clock::time_point start = Clock::now();
  run_start_ = start;
  const std::int64_t step_limit =
      config_.max_steps > 0 ? config_.max_steps : std::numeric_limits<std::int64_t>::max();
  TrainSummary summary;
  bool evaluated = false;
  while (progress_.epoch < config_.epochs && progress_.step < step_limit) {
    bool stopped = false;
    const std::int64_t images_before = progress_.images;
    EpochReport report = train_epoch(step_limit, hooks, stopped);
    summary.images += progress_.images - images_before;
    summary.train_seconds += report.train_seconds;
    train_seconds_ = summary.train_seconds;
    summary.phases += report.phases;
    if (stopped || agree_to_stop(hooks)) {
      checkpoint_at(hooks, checkpoint::CheckpointPoint::kStop);
      summary.preempted = true;
      break;
    }
    // An epoch that the target ended was evaluated at its last step already.
    const bool target_reached = target_ && target_->step == progress_.step;
    report.test =
        target_reached ? target_->test : evaluate_and_report(hooks, summary.train_seconds).test;
    evaluated = true;
    report.elapsed_seconds = seconds_since(start);
    summary.train_loss = report.train_loss;
    summary.test = report.test;
    if (report.complete) {  // the next epoch starts from the beginning of its order
      ++progress_.epoch;
      progress_ = checkpoint::TrainProgress{progress_.epoch, progress_.step};
    }
    report.target_reached = target_.has_value();
    hooks.on_epoch(report);
    if (target_) {
      checkpoint_at(hooks, checkpoint::CheckpointPoint::kTargetReached);
      break;
    }
    checkpoint_at(hooks, checkpoint::CheckpointPoint::kEpochEnd);
  }
  summary.target = target_;
  if (!evaluated && !summary.preempted) {  // resumed from the end: still report the result
    summary.test = evaluate_test_set();
    summary.train_loss = progress_.loss_sum / std::max<std::int64_t>(1, progress_.loss_count);
  }
  summary.steps = progress_.step;
  if (graphed_) summary.graph_nodes = graphed_->nodes();
  summary.allreduce_bytes = reducer_.bytes_per_step();
  summary.one_time_seconds = one_time_seconds_;
  summary.images_per_sec = summary.images / std::max(summary.train_seconds, 1e-9);
  return summary;
}

void Trainer::checkpoint_at(const TrainerHooks& hooks, checkpoint::CheckpointPoint point) {
  const Clock::time_point start = Clock::now();
  hooks.on_checkpoint(point);
  if (hooks.on_span) hooks.on_span(Span{"checkpoint", start, Clock::now(), progress_.step});
}

checkpoint::CheckpointContents Trainer::checkpoint() {
  gather_epoch_sums();
  const at::Tensor rng_states = comm_.all_gather(default_generator(c10::kCPU).get_state());
  // On a GPU, dropout draws from the device's generator.
  const at::Tensor cuda_rng_states =
      device_.is_cuda() ? comm_.all_gather(default_generator(device_).get_state()) : at::Tensor();
  return checkpoint::make_checkpoint(config_, train_set_.size(), comm_.size(), progress_, model_,
                                     *optimizer_, rng_states, cuda_rng_states);
}

void Trainer::restore(const checkpoint::CheckpointContents& contents) {
  // The schedule spans the steps of --epochs, which depend on the world size: another world
  // continues it unchanged only where it has as many steps (with --global-batch-size, usually).
  const int writers = checkpoint::read_checkpoint_meta(contents.meta).world_size;
  if (config_.lr_schedule != config::Schedule::kConstant &&
      total_steps_on(writers) != total_steps()) {
    throw CheckpointError("the checkpoint was written by " + std::to_string(writers) +
                          " ranks, whose --lr-schedule " + config::to_string(config_.lr_schedule) +
                          " spans " + std::to_string(total_steps_on(writers)) + " steps; on " +
                          std::to_string(comm_.size()) + " ranks it would span " +
                          std::to_string(total_steps()) +
                          ": resume with as many ranks, or give the run a --global-batch-size");
  }
  const checkpoint::RestoredRun run =
      checkpoint::restore_checkpoint(contents, config_, train_set_.size(), model_, *optimizer_);
  progress_ = run.progress;  // identical on every rank, partial epoch sums included
  if (replicas_) replicas_->broadcast_parameters();
  if (run.world_size == comm_.size()) {
    default_generator(c10::kCPU).set_state(
        checkpoint::generator_state(run.rng_states, comm_.rank()));
    if (device_.is_cuda() && run.cuda_rng_states.defined()) {
      try {
        default_generator(device_).set_state(
            checkpoint::generator_state(run.cuda_rng_states, comm_.rank()));
      } catch (const c10::Error& e) {
        throw CheckpointError("the checkpoint's CUDA RNG state of rank " +
                              std::to_string(comm_.rank()) + " is not one that " + device_.str() +
                              "'s generator accepts: " + e.what_without_backtrace());
      }
    }
  } else {  // another world: fresh dropout streams, still reproducible
    torch::manual_seed(dropout_seed(config_.seed, comm_.rank(), progress_.step));
  }
}

}  // namespace mnist_ddp::train
