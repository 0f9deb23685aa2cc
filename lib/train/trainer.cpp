// lib/train/trainer.cpp — the training loop; evaluation; the one-time costs paid before it.
#include "train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include "common/error.hpp"
#include "common/process_clock.hpp"
#include "config/options.hpp"
#include "ddp/gradient_reducer.hpp"
#include "distributed/agreement.hpp"
#include "model/autocast_scope.hpp"
#include "model/classification_loss.hpp"

namespace mnist_ddp::train {
namespace {

/// Dropout masks must differ between ranks (each sees other images) yet repeat run to run.
std::uint64_t dropout_seed(std::int64_t seed, int rank, std::int64_t step) {
  return static_cast<std::uint64_t>(seed) * 1000003u + static_cast<std::uint64_t>(rank) +
         static_cast<std::uint64_t>(step) * 7919u;
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

/// LibTorch's default generator of `device`; a handle, so changes through it reach the generator.
at::Generator default_generator(c10::Device device) {
  return device.is_cuda() ? at::globalContext().defaultGenerator(device)
                          : at::detail::getDefaultCPUGenerator();
}

/// Restores `device`'s default generator state at scope exit.
class GeneratorStateGuard {
 public:
  explicit GeneratorStateGuard(c10::Device device)
      : generator_(default_generator(device)), state_(generator_.get_state()) {}
  ~GeneratorStateGuard() { generator_.set_state(state_); }
  GeneratorStateGuard(const GeneratorStateGuard&) = delete;
  GeneratorStateGuard& operator=(const GeneratorStateGuard&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

/// Note [One-time costs before the clock] on every device, at the first step's batch size.
double pay_first_uses(const config::TrainConfig& config, const distributed::DevicePlan& plan,
                      std::int64_t shard) {
  const std::vector<c10::Device> devices =
      plan.replicas.empty() ? std::vector<c10::Device>{plan.device} : plan.replicas;
  const std::int64_t device_batch = ddp::ModelReplicas::chunk_size(
      std::min<std::int64_t>(config.batch_size, shard), devices.size());
  double seconds = 0;
  for (const c10::Device& device : devices) {
    seconds += pay_one_time_costs(config.model, device, device_batch,
                                  config.precision == config::Precision::kBf16);
  }
  return seconds;
}

}  // namespace

// Note [One-time costs before the clock]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A process's first forward and backward pays set-up (cuDNN/cuBLAS handles, algorithm choice,
// lazy kernel loading, thread pools, oneDNN primitives) that is not training. So it is paid before
// the clock, on a network of its own with the batch shape: the trained model, its hooks (no
// collective runs) and its random draws are untouched. startup_s and one_time_costs_s show it.

double pay_one_time_costs(config::Model architecture, c10::Device device, std::int64_t batch_size,
                          bool bf16) {
  const auto start = std::chrono::steady_clock::now();
  const GeneratorStateGuard cpu_generator{c10::Device(c10::kCPU)};  // the network's initial values
  std::optional<GeneratorStateGuard> device_generator;              // its dropout masks
  if (device.is_cuda()) device_generator.emplace(device);
  {
    const std::shared_ptr<model::Classifier> network = model::make_model(architecture);
    network->to(device);
    network->train();
    const at::TensorOptions on_device = at::TensorOptions().device(device);
    const at::Tensor images = at::zeros({batch_size, 1, 28, 28}, on_device.dtype(at::kFloat));
    const at::Tensor labels = at::zeros({batch_size}, on_device.dtype(at::kLong));
    at::Tensor loss;
    {
      const model::AutocastScope autocast(device.type(), bf16);
      loss = model::classification_loss(network->forward(images), labels);
    }
    torch::autograd::backward({loss});
  }
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return seconds_since(start);
}

EvalResult evaluate(model::Classifier& model, const data::Dataset& dataset,
                    const data::BatchMaker& batches, distributed::Communicator& comm,
                    int batch_size, bool bf16) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();

  const at::Device device = dataset.images.device();
  const at::Tensor shard = at::arange(comm.rank(), dataset.size(), comm.size(),
                                      at::TensorOptions(at::kLong).device(device));
  // Double sums, so splitting into batches and ranks changes only a double's last bits.
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions(at::kDouble).device(device));
  at::Tensor correct = at::zeros({}, at::TensorOptions(at::kLong).device(device));
  for (std::int64_t start = 0; start < shard.size(0); start += batch_size) {
    const data::Batch batch = batches.make(
        shard.narrow(0, start, std::min<std::int64_t>(batch_size, shard.size(0) - start)));
    const at::Tensor logits = [&] {
      const model::AutocastScope autocast(device.type(), bf16);
      return model.forward(batch.inputs);
    }();
    loss_sum +=
        at::cross_entropy_loss(logits.to(at::kDouble), batch.targets, {}, at::Reduction::Sum);
    correct += logits.argmax(1).eq(batch.targets).sum();
  }
  at::Tensor totals =
      at::stack({loss_sum.cpu(), correct.cpu().to(at::kDouble),
                 at::scalar_tensor(static_cast<double>(shard.size(0)), at::kDouble)});
  comm.all_reduce(totals, distributed::ReduceOp::kSum);
  if (was_training) model.train();

  EvalResult result;
  result.count = static_cast<std::int64_t>(totals[2].item<double>());
  result.correct = static_cast<std::int64_t>(totals[1].item<double>());
  result.loss = totals[0].item<double>() / static_cast<double>(result.count);
  result.accuracy = static_cast<double>(result.correct) / static_cast<double>(result.count);
  return result;
}

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
      stream_(plan.device, graphs.capture),
      test_batches_(test_set, config.normalize_mean, config.normalize_std),
      sampler_(train_set.size(), comm.size(), comm.rank(), config.seed, /*shuffle=*/true,
               config.drop_last),
      one_time_seconds_(pay_first_uses(config, plan, sampler_.num_samples())),
      optimizer_(make_optimizer(config, model.parameters())),
      metrics_(plan.device, comm),
      steps_(config, plan, comm, model, train_set, *optimizer_, total_steps_on(comm.size()),
             sampler_.num_samples(), metrics_, progress_, graphs) {
  ddp::broadcast_parameters(comm_, model_, plan.communicates);
  torch::manual_seed(dropout_seed(config.seed, comm.rank(), /*step=*/0));
}

std::int64_t Trainer::steps_per_epoch() const {
  return steps_for(sampler_.num_samples(), config_.batch_size, config_.grad_accum);
}

std::int64_t Trainer::total_steps_on(int world_size) const {
  const data::DistributedSampler sampler(train_set_.size(), world_size, /*rank=*/0, config_.seed,
                                         /*shuffle=*/true, config_.drop_last);
  const int batch_size = config::split_global_batch(config_, world_size).batch_size;
  return steps_for(sampler.num_samples(), batch_size, config_.grad_accum) * config_.epochs;
}

bool Trainer::agree_to_stop(const TrainerHooks& hooks) {
  const int code = hooks.stop_requested() ? static_cast<int>(ExitCode::kPreempted) : 0;
  return distributed::agree(comm_, code, "a stop signal", /*share_reason=*/false).failed();
}

EvalResult Trainer::evaluate_test_set() {
  return evaluate(model_, test_set_, test_batches_, comm_, config_.test_batch_size,
                  config_.precision == config::Precision::kBf16);
}

EvalReport Trainer::evaluate_and_report(const TrainerHooks& hooks, double train_seconds) {
  const TraceClock::time_point start = TraceClock::now();
  EvalReport report;
  report.epoch = progress_.epoch + 1;
  report.step = progress_.step;
  report.test = evaluate_test_set();
  if (hooks.on_span) hooks.on_span(Span{kEvaluateSpan, start, TraceClock::now(), progress_.step});
  report.train_seconds = train_seconds;
  report.elapsed_seconds = seconds_since(run_start_);
  report.launch_seconds = seconds_since_process_start();
  if (!target_ && config_.target_accuracy > 0 && report.test.accuracy >= config_.target_accuracy) {
    target_ = report;
  }
  if (hooks.on_evaluation) hooks.on_evaluation(report);
  return report;
}

void Trainer::report_step(const StepResult& step, const TrainerHooks& hooks) {
  if (!hooks.on_step) return;
  StepReport report;
  report.step = progress_.step;
  report.epoch = progress_.epoch + 1;
  report.epoch_steps = steps_per_epoch();
  report.epoch_steps_done =
      report.epoch_steps - steps_for(steps_.samples_left(), config_.batch_size, config_.grad_accum);
  report.images = step.images * comm_.size();
  report.seconds = step.phases.total();
  report.lr = step.lr;
  if (every(progress_.step, config_.log_every)) report.window = metrics_.take_window();
  hooks.on_step(report);
}

EpochReport Trainer::train_epoch(std::int64_t step_limit, double seconds_before,
                                 const TrainerHooks& hooks) {
  const TraceClock::time_point start = TraceClock::now();
  const std::int64_t images_before = progress_.images;
  model_.train();
  sampler_.set_epoch(progress_.epoch);
  // On the training device, where batches are gathered.
  steps_.start_epoch(sampler_.indices_from(progress_.position).to(device_));
  EpochReport report;
  report.epoch = progress_.epoch + 1;
  double evaluation_seconds = 0;  // of this epoch's --eval-every evaluations
  if (hooks.on_first_step && first_step_pending_) hooks.on_first_step();
  first_step_pending_ = false;

  while (steps_.samples_left() > 0 && progress_.step < step_limit) {
    StepResult result = steps_.run(hooks);
    const bool last_of_epoch = steps_.samples_left() == 0;           // the shard is used up
    const bool ends_run = progress_.step >= step_limit;              // --max-steps reached
    const bool log_step = every(progress_.step, config_.log_every);  // a --log-every step
    // A --checkpoint-every or --eval-every (short of the limit) step inside the epoch: the epoch's
    // end checkpoints and evaluates anyway (Trainer::run).
    const bool checkpoint_step = every(progress_.step, config_.checkpoint_every) && !last_of_epoch;
    const bool evaluation_step =
        every(progress_.step, config_.eval_every) && !last_of_epoch && !ends_run;
    // Whether the host reads the device after the step anyway (Note [Stop agreement]).
    const bool reads_device =
        last_of_epoch || ends_run || log_step || checkpoint_step || evaluation_step;
    const ddp::StopReason stop = steps_.stop_agreed(result, reads_device, hooks);
    if (stop == ddp::StopReason::kNotFinite) stop_not_finite();
    metrics_.add_step(result.images, result.micro_batches, result.phases);
    report.phases += result.phases;
    report_step(result, hooks);
    if (stop == ddp::StopReason::kRequested) {
      report.stopped = true;
      break;
    }
    if (checkpoint_step) checkpoint_at(hooks, checkpoint::CheckpointPoint::kEveryNSteps);
    if (evaluation_step) {
      const TraceClock::time_point evaluation_start = TraceClock::now();
      evaluate_and_report(hooks, seconds_before + seconds_since(start) - evaluation_seconds);
      evaluation_seconds += seconds_since(evaluation_start);
      if (target_) break;
    }
  }
  metrics_.gather_epoch(progress_);
  report.step = progress_.step;
  report.complete = steps_.samples_left() == 0 && !report.stopped;
  report.train_loss = progress_.loss_sum / std::max<std::int64_t>(1, progress_.loss_count);
  report.images = progress_.images;
  report.train_seconds = seconds_since(start) - evaluation_seconds;
  report.images_per_sec = (progress_.images - images_before) / report.train_seconds;
  return report;
}

void Trainer::stop_not_finite(const std::string& what) {
  const std::string where =
      (device_.is_cuda() ? " by step " : " at step ") + std::to_string(progress_.step);
  bool mine = true;  // the weights are the same everywhere; a loss is this rank's
  std::string reason = what + " not finite" + where;
  if (what.empty()) {
    const double loss = steps_.last_loss();
    mine = !std::isfinite(loss);
    reason =
        "a training loss is not finite" + where + " (" + std::to_string(loss) + " on this rank)";
  }
  reason += ": training stopped there, and no checkpoint holds these weights; try a lower --lr";
  // The rank that saw it says so (Note [One agreement]).
  distributed::Verdict verdict = distributed::agree(
      comm_, mine ? static_cast<int>(ExitCode::kNotFinite) : 0, reason, /*share_reason=*/false);
  if (!verdict.failed()) {  // only the summed flag saw it: every rank's loss reads finite now
    verdict = {static_cast<int>(ExitCode::kNotFinite), 0, reason};
  }
  distributed::end_agreed(verdict, comm_.rank(), distributed::process_label());
}

TrainSummary Trainer::run(const TrainerHooks& hooks) {
  run_start_ = TraceClock::now();
  const std::int64_t step_limit =
      config_.max_steps > 0 ? config_.max_steps : std::numeric_limits<std::int64_t>::max();
  TrainSummary summary;
  bool evaluated = false;
  while (progress_.epoch < config_.epochs && progress_.step < step_limit) {
    const std::int64_t images_before = progress_.images;
    EpochReport report = train_epoch(step_limit, summary.train_seconds, hooks);
    summary.images += progress_.images - images_before;
    summary.train_seconds += report.train_seconds;
    summary.phases += report.phases;
    if (report.stopped || agree_to_stop(hooks)) {
      checkpoint_at(hooks, checkpoint::CheckpointPoint::kStop);
      summary.preempted = true;
      break;
    }
    // An epoch that the target ended was evaluated at its last step already.
    const bool target_reached = target_ && target_->step == progress_.step;
    report.test =
        target_reached ? target_->test : evaluate_and_report(hooks, summary.train_seconds).test;
    evaluated = true;
    report.elapsed_seconds = seconds_since(run_start_);
    summary.train_loss = report.train_loss;
    summary.test = report.test;
    // The next epoch starts from the beginning of its order.
    if (report.complete) progress_ = checkpoint::TrainProgress{progress_.epoch + 1, progress_.step};
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
  summary.graph_nodes = steps_.graph_nodes();
  summary.graph_fallback = steps_.graph_fallback();
  summary.allreduce_bytes = steps_.allreduce_bytes();
  summary.one_time_seconds = one_time_seconds_;
  summary.images_per_sec = summary.images / std::max(summary.train_seconds, 1e-9);
  return summary;
}

void Trainer::checkpoint_at(const TrainerHooks& hooks, checkpoint::CheckpointPoint point) {
  // A finite loss may still have stepped to weights that are not (the same on every rank).
  std::vector<at::Tensor> finite;
  for (const at::Tensor& parameter : model_.parameters())
    finite.push_back(at::isfinite(parameter).all());
  if (!at::stack(finite).all().item<bool>()) stop_not_finite("the weights are");
  const TraceClock::time_point start = TraceClock::now();
  hooks.on_checkpoint(point);
  if (hooks.on_span) hooks.on_span(Span{kCheckpointSpan, start, TraceClock::now(), progress_.step});
}

checkpoint::CheckpointContents Trainer::checkpoint() {
  metrics_.gather_epoch(progress_);
  const at::Tensor rng_states = comm_.all_gather(default_generator(c10::kCPU).get_state());
  // On a GPU, dropout draws from the device's generator.
  const at::Tensor cuda_rng_states =
      device_.is_cuda() ? comm_.all_gather(default_generator(device_).get_state()) : at::Tensor();
  return checkpoint::make_checkpoint(config_, train_set_.size(), comm_.size(), progress_, model_,
                                     *optimizer_, rng_states, cuda_rng_states);
}

void Trainer::restore(const checkpoint::LoadedCheckpoint& saved) {
  const checkpoint::RestoredRun run =
      checkpoint::restore_checkpoint(saved, config_, train_set_.size(), model_, *optimizer_);
  // The schedule's length depends on the world size: another world must have as many steps.
  const int writers = saved.meta.world_size;
  if (config_.lr_schedule != config::Schedule::kConstant &&
      total_steps_on(writers) != total_steps_on(comm_.size())) {
    throw CheckpointError("the checkpoint was written by " + std::to_string(writers) +
                          " ranks, whose --lr-schedule " + config::to_string(config_.lr_schedule) +
                          " spans " + std::to_string(total_steps_on(writers)) + " steps; on " +
                          std::to_string(comm_.size()) + " ranks it would span " +
                          std::to_string(total_steps_on(comm_.size())) +
                          ": resume with as many ranks, or give the run a --global-batch-size");
  }
  progress_ = saved.meta.progress;  // identical on every rank, partial epoch sums included
  steps_.parameters_replaced();
  if (writers != comm_.size()) {  // another world: fresh dropout streams, still reproducible
    torch::manual_seed(dropout_seed(config_.seed, comm_.rank(), progress_.step));
    return;
  }
  default_generator(c10::kCPU).set_state(checkpoint::generator_state(run.rng_states, comm_.rank()));
  if (!device_.is_cuda() || !run.cuda_rng_states.defined()) return;
  try {
    default_generator(device_).set_state(
        checkpoint::generator_state(run.cuda_rng_states, comm_.rank()));
  } catch (const c10::Error& e) {
    throw CheckpointError("the checkpoint's CUDA RNG state of rank " +
                          std::to_string(comm_.rank()) + " is not one that " + device_.str() +
                          "'s generator accepts: " + e.what_without_backtrace());
  }
}

}  // namespace mnist_ddp::train
