// lib/train/step.cpp — the eager step and the device work a graphed step captures.
#include "train/step.hpp"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "common/error.hpp"
#include "model/autocast_scope.hpp"
#include "model/classification_loss.hpp"

namespace mnist_ddp::train {
namespace {

// On a GPU reading the stop flag waits for the queued steps (Note [The device's time in the
// phases]).
constexpr std::int64_t kCudaStopCheckSteps = 100;

// Eager steps before a step is captured (Note [The step as one CUDA graph]).
constexpr int kGraphWarmupSteps = 3;

at::ScalarType wire_dtype(config::GradDtype dtype) {
  if (dtype == config::GradDtype::kBf16) return at::kBFloat16;
  if (dtype == config::GradDtype::kFp16) return at::kHalf;
  return at::kFloat;
}

const std::function<void(const Span&)> kUntraced;
}  // namespace

Step::Step(const config::TrainConfig& config, const distributed::DevicePlan& plan,
           distributed::Communicator& comm, model::Classifier& model,
           const data::Dataset& train_set, torch::optim::Optimizer& optimizer,
           std::int64_t total_steps, std::int64_t shard_capacity, RunMetrics& metrics,
           checkpoint::TrainProgress& progress, const GraphPlan& graphs)
    : config_(config),
      device_(plan.device),
      world_size_(comm.size()),
      log_(comm.rank(), /*all_ranks=*/false),
      model_(model),
      metrics_(metrics),
      progress_(progress),
      train_batches_(train_set, config.normalize_mean, config.normalize_std),
      device_optimizer_(optimizer),
      schedule_(config.lr_schedule, config.lr, config.warmup_steps, total_steps),
      reducer_(comm, model.parameters(), config.bucket_mb, wire_dtype(config.grad_dtype),
               plan.communicates) {
  if (config.mode == config::Mode::kDp) {
    replicas_ = std::make_unique<ddp::ModelReplicas>(model_, config.model, plan.replicas);
  }
  if (!graphs.capture) return;
  if (config.grad_accum > 1 || replicas_) {  // plan_cuda_graph never asks for these
    throw Error(ExitCode::kFailure,
                "Trainer: a graphed step is one micro-batch on one device (no --grad-accum, no "
                "--mode dp)");
  }
  cursor_ = std::make_unique<data::ShardCursor>(config.batch_size, shard_capacity, device_);
  graphed_ = std::make_unique<GraphedStep>(
      [this] {
        PhaseTimes host_only;  // a replay runs none of this host code
        PhaseClock clock(host_only, kUntraced, 0);
        reducer_.zero_grad();
        forward_backward(cursor_->next(), /*micro_batches=*/1, /*communicate=*/true, clock);
        update(clock);
      },
      device_, comm, kGraphWarmupSteps,
      /*required=*/config.cuda_graph == config::CudaGraph::kOn, graphs.after_replay);
}

void Step::start_epoch(const at::Tensor& shard) {
  shard_ = shard;
  first_ = 0;
  if (cursor_) cursor_->start(shard);
}

StepResult Step::run(const TrainerHooks& hooks) {
  StepResult step;
  // The last partial batch of an epoch has a shape of its own: it runs eagerly.
  step.graphed = graphed_ && graphed_->fallback().empty() && samples_left() >= config_.batch_size;
  step.lr = schedule_.lr_at(progress_.step);
  PhaseClock clock(step.phases, hooks.on_span, progress_.step + 1);
  std::vector<at::Tensor> batches;
  while (samples_left() > step.images && batches.size() < static_cast<size_t>(config_.grad_accum)) {
    const std::int64_t size =
        std::min<std::int64_t>(config_.batch_size, samples_left() - step.images);
    batches.push_back(shard_.narrow(0, first_ + step.images, size));
    step.images += size;
    if (hooks.on_batch) hooks.on_batch(batches.back());
  }
  reducer_.request_stop(hooks.stop_requested());  // Note [Stop agreement]
  device_optimizer_.prepare(step.lr);
  step.micro_batches = static_cast<int>(batches.size());
  if (step.graphed && !graphed_->run(hooks.in_capture)) {
    step.graphed = false;  // Note [A failed capture]: this step and the rest run eagerly
    log_.line("# cuda graph: off from step %lld, the steps run eagerly (the capture failed on %s)",
              static_cast<long long>(progress_.step + 1), graphed_->fallback().c_str());
  }
  if (step.graphed) {
    clock.lap(Phase::kLaunch);
  } else {
    reducer_.zero_grad();
    for (int micro = 0; micro < step.micro_batches; ++micro) {
      forward_backward(batches[micro], step.micro_batches,
                       /*communicate=*/micro + 1 == step.micro_batches, clock);
    }
    update(clock);
    if (hooks.on_span) {
      for (const ddp::GradientReducer::CollectiveTiming& t : reducer_.last_collectives())
        hooks.on_span(Span{kAllreduceSpan, t.launched, t.done, progress_.step + 1, t.bytes});
    }
  }
  first_ += step.images;
  progress_.position += step.images * world_size_;
  ++progress_.step;
  return step;
}

// Note [Stop agreement]
// ~~~~~~~~~~~~~~~~~~~~~~
// A stop request (a preemption's signal, Ctrl-C) reaches ranks at different steps, yet all must
// stop after the same step, or one waits in a collective the others never join. So each step's
// last gradient bucket carries this rank's request as one more element, 0 or 1, averaged with the
// gradients: above 0 exactly when some rank asked, read by every rank after the same step, at no
// cost of a message of its own (on a GPU only every kCudaStopCheckSteps and before other reads,
// Note [The device's time in the phases]). A loss that is not finite marks the same element with a
// far larger value, on the device: every rank stops for that (exit 8), and only then does
// Note [One agreement] run, to find the rank that saw it. Ranks that do not communicate read their
// own request.

void Step::forward_backward(const at::Tensor& indices, int micro_batches, bool communicate,
                            PhaseClock& clock) {
  const data::Batch batch = train_batches_.make(indices);
  clock.lap(Phase::kData);
  std::vector<at::Tensor> losses;  // this rank's (each replica's under --mode dp)
  {
    const model::AutocastScope autocast(device_.type(),
                                        config_.precision == config::Precision::kBf16);
    losses = replicas_ ? replicas_->weighted_losses(batch)
                       : std::vector<at::Tensor>{model::classification_loss(
                             model_.forward(batch.inputs), batch.targets)};
  }
  clock.lap(Phase::kForward);
  reducer_.prepare_backward(communicate);
  at::Tensor detached = losses[0].detach();
  for (size_t r = 1; r < losses.size(); ++r) detached = detached + losses[r].detach().to(device_);
  if (micro_batches > 1) {
    for (at::Tensor& loss : losses) loss = loss / static_cast<double>(micro_batches);
  }
  reducer_.stop_if_not_finite(detached);
  // One call for every replica's loss: the GPUs run their backward passes concurrently.
  torch::autograd::backward(losses);
  clock.lap(Phase::kBackward);
  metrics_.add_loss(detached);
  last_loss_ = detached;
}

void Step::update(PhaseClock& clock) {
  if (replicas_) replicas_->gather_gradients();
  reducer_.finish();
  clock.lap(Phase::kCommWait);
  device_optimizer_.apply();
  if (replicas_) replicas_->broadcast_parameters();
  clock.lap(Phase::kOptimizer);
}

// Note [The device's time in the phases]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// On a GPU the host waits only where it reads a value back, so host-timed phases count launches.
// The stop-flag read, which waits for every queued step, is timed in the step: an eager step's
// drain phase, a graphed step's device phase. It must happen every kCudaStopCheckSteps, before any
// other device read (log, evaluation, checkpoint, epoch end) and before an eager step follows a
// graphed one, so all device time lands in the phases. CPU kernels finish within their call.
ddp::StopReason Step::stop_agreed(StepResult& step, bool device_read_follows,
                                  const TrainerHooks& hooks) {
  PhaseClock clock(step.phases, hooks.on_span, progress_.step);
  // An eager step next (the partial batch) would otherwise wait for this one's device work.
  const bool eager_next = step.graphed && samples_left() < config_.batch_size;
  const bool read = !device_.is_cuda() || progress_.step % kCudaStopCheckSteps == 0 ||
                    device_read_follows || eager_next;
  const ddp::StopReason stop = read ? reducer_.any_rank_stopping() : ddp::StopReason::kNone;
  // On the CPU nothing is queued: an eager step has no drain.
  if (step.graphed || device_.is_cuda()) clock.lap(step.graphed ? Phase::kDevice : Phase::kDrain);
  return stop;
}

void Step::parameters_replaced() {
  if (replicas_) replicas_->broadcast_parameters();
}

}  // namespace mnist_ddp::train
