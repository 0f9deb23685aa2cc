// tests/mpi/test_gradient_reducer.cpp — bucketed, overlapped gradient reduction: many tiny
// buckets equal one bucket, K micro-batches equal one batch of K*B, compressed gradients stay
// close, a stop request on one rank stops every rank at the same step, buckets launch in bucket
// order, ranks whose forward skips parameters still agree, float16 gradients near its limit
// survive, a world of one rank can communicate as N ranks do, and the bucket cap counts the type
// gradients travel in.
#include <doctest/doctest.h>

#include <cmath>

#include <mpi.h>

#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include "ddp/gradient_reducer.hpp"
#include "distributed/mpi_communicator.hpp"
#include "model/classifier.hpp"
#include "support/cpu_plan.hpp"
#include "support/flat_parameters.hpp"
#include "support/mpi_test_world.hpp"
#include "support/synthetic_dataset.hpp"
#include "train/trainer.hpp"

namespace mnist_ddp::ddp {
namespace {

config::TrainConfig reducer_config() {
  config::TrainConfig config;
  config.model = config::Model::kMlp;
  config.epochs = 1;
  config.batch_size = 8;
  config.max_steps = 6;
  config.lr = 0.05;
  config.momentum = 0.9;
  config.seed = 5;
  return config;
}

/// Final parameters after training `config` on every rank, with the summary.
std::pair<at::Tensor, train::TrainSummary> trained(
    const config::TrainConfig& config, const train::TrainerHooks& hooks = train::TrainerHooks{}) {
  static const data::Dataset train_set = testing::synthetic_dataset(960, /*seed=*/31);
  static const data::Dataset test_set = testing::synthetic_dataset(32, /*seed=*/32);
  distributed::MpiCommunicator comm(testing::test_world().comm());
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  const auto model = model::make_model(config.model);
  train::Trainer trainer(config, testing::cpu_plan(comm), comm, *model, train_set, test_set);
  const train::TrainSummary summary = trainer.run(hooks);
  return {testing::flat_parameters(*model), summary};
}

double max_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST_CASE("one bucket per parameter gives the parameters of a single bucket") {
  distributed::MpiCommunicator comm(testing::test_world().comm());
  torch::manual_seed(1);
  const auto model = model::make_model(config::Model::kMlp);
  GradientReducer tiny(comm, model->parameters(), /*bucket_mb=*/1e-6, at::kFloat,
                       /*communicates=*/true);
  CHECK(tiny.bucket_count() == model->parameters().size());

  config::TrainConfig one_bucket = reducer_config();
  config::TrainConfig many_buckets = reducer_config();
  many_buckets.bucket_mb = 1e-6;
  const double difference = max_difference(trained(one_bucket).first, trained(many_buckets).first);
  CAPTURE(difference);
  // Same sums; Open MPI may pick another reduction order for other message sizes.
  CHECK(difference <= (comm.size() == 2 ? 0.0 : 1e-6));
}

TEST_CASE("the bytes allreduced per step are every bucket in the type it travels in") {
  distributed::MpiCommunicator comm(testing::test_world().comm());
  const auto model = model::make_model(config::Model::kMlp);
  std::int64_t parameters = 0;
  for (const at::Tensor& p : model->parameters()) parameters += p.numel();
  for (const double bucket_mb : {1e-6, 25.0}) {  // one bucket per parameter, or one in all
    CAPTURE(bucket_mb);
    const GradientReducer fp32(comm, model->parameters(), bucket_mb, at::kFloat,
                               /*communicates=*/true);
    CHECK(fp32.bytes_per_step() == (parameters + 1) * 4);  // the gradients and the stop flag
    const GradientReducer bf16(comm, model->parameters(), bucket_mb, at::kBFloat16,
                               /*communicates=*/true);
    CHECK(bf16.bytes_per_step() == (parameters + 1) * 2);
  }
}

TEST_CASE("K micro-batches of B take the step of one batch of K*B") {
  config::TrainConfig accumulated = reducer_config();
  accumulated.grad_accum = 4;
  config::TrainConfig large = reducer_config();
  large.batch_size = accumulated.batch_size * accumulated.grad_accum;
  const auto [with_accumulation, summary] = trained(accumulated);
  CHECK(summary.steps == 6);
  const double difference = max_difference(with_accumulation, trained(large).first);
  CAPTURE(difference);
  CHECK(difference < 1e-6);
}

TEST_CASE("gradients sent as bfloat16 or float16 stay close to float32") {
  const at::Tensor exact = trained(reducer_config()).first;
  for (const config::GradDtype dtype : {config::GradDtype::kBf16, config::GradDtype::kFp16}) {
    CAPTURE(config::to_string(dtype));
    config::TrainConfig compressed = reducer_config();
    compressed.grad_dtype = dtype;
    const double difference = max_difference(trained(compressed).first, exact);
    CAPTURE(difference);
    CHECK(difference < 1e-2);
    CHECK(difference > 0);  // the compression really happened
  }
}

TEST_CASE("a stop request on the last rank stops every rank after the same step") {
  const distributed::World& world = testing::test_world();
  int steps_seen = 0;
  train::TrainerHooks hooks;
  hooks.on_batch = [&](const at::Tensor&) { ++steps_seen; };
  hooks.stop_requested = [&] { return world.rank() == world.size() - 1 && steps_seen >= 3; };
  const train::TrainSummary summary = trained(reducer_config(), hooks).second;
  CHECK(summary.preempted);
  CHECK(summary.steps == 3);
}

/// A collective that is done from the start.
class DoneCollective final : public distributed::PendingCollective {
 public:
  bool test() override { return true; }
  void wait() override {}
};

/// A world of `size` ranks as far as its user can tell, which only records the collectives it is
/// asked for and leaves every tensor as it is.
class RecordingCommunicator final : public distributed::Communicator {
 public:
  explicit RecordingCommunicator(int size) : size_(size) {}

  int rank() const override { return 0; }
  int size() const override { return size_; }
  std::string backend() const override { return "recording"; }
  void all_reduce(at::Tensor&, distributed::ReduceOp) override {}
  std::unique_ptr<distributed::PendingCollective> all_reduce_async(at::Tensor& tensor,
                                                                   distributed::ReduceOp) override {
    all_reduced.push_back(tensor.data_ptr());
    return std::make_unique<DoneCollective>();
  }
  void broadcast(at::Tensor&, int) override { ++broadcasts; }
  at::Tensor all_gather(const at::Tensor& tensor) override {
    return at::stack(std::vector<at::Tensor>(static_cast<size_t>(size_), tensor));
  }
  void barrier() override {}

  std::vector<const void*> all_reduced;  // the start of each tensor, in launch order
  int broadcasts = 0;

 private:
  int size_;
};

/// Leaf tensors that require gradients, 1, 2, 3, ... in order, each of size `numel`.
std::vector<at::Tensor> leaves(int count, std::int64_t numel) {
  std::vector<at::Tensor> tensors;
  for (int i = 0; i < count; ++i) {
    tensors.push_back(at::full({numel}, i + 1.0).requires_grad_());
  }
  return tensors;
}

/// Every tensor flattened into one float32 vector; an undefined one (no gradient) as zeros.
at::Tensor concatenated(const std::vector<at::Tensor>& tensors,
                        const std::vector<at::Tensor>& shapes_of) {
  std::vector<at::Tensor> flat;
  for (size_t i = 0; i < tensors.size(); ++i) {
    flat.push_back(tensors[i].defined() ? tensors[i].detach().reshape({-1})
                                        : at::zeros({shapes_of[i].numel()}));
  }
  return at::cat(flat);
}

TEST_CASE("the bucket cap counts gradients in the type they travel in") {
  RecordingCommunicator comm(/*size=*/2);
  // Three parameters of 256 elements: 1 KiB each in float32, 512 bytes in 16 bits.
  const std::vector<at::Tensor> parameters = leaves(3, /*numel=*/256);
  const double two_kib = 2048.0 / (1024 * 1024);
  const auto buckets = [&](at::ScalarType wire) {
    return GradientReducer(comm, parameters, two_kib, wire, /*communicate_alone=*/false)
        .bucket_count();
  };
  CHECK(buckets(at::kFloat) == 2);  // two parameters fill the first bucket
  CHECK(buckets(at::kBFloat16) == 1);
  CHECK(buckets(at::kHalf) == 1);
}

TEST_CASE("buckets launch in bucket order whatever order autograd completes them in") {
  RecordingCommunicator comm(/*size=*/2);
  // One bucket each, in reverse order: c is bucket 0, b bucket 1, a bucket 2.
  std::vector<at::Tensor> parameters = leaves(3, /*numel=*/4);
  const at::Tensor &a = parameters[0], &b = parameters[1], &c = parameters[2];
  GradientReducer reducer(comm, parameters, /*bucket_mb=*/1e-6, at::kFloat,
                          /*communicates=*/true);
  REQUIRE(reducer.bucket_count() == 3);
  // Each bucket starts with its one gradient.
  const std::vector<const void*> bucket_order = {c.grad().data_ptr(), b.grad().data_ptr(),
                                                 a.grad().data_ptr()};
  const at::Tensor x = at::ones({4});

  SUBCASE("every parameter used") {
    // c is used first, so its gradient arrives last: autograd completes bucket 2, 1, then 0.
    reducer.prepare_backward(/*communicate=*/true);
    (x * c * b * a).sum().backward();
    reducer.finish();
    CHECK(comm.all_reduced == bucket_order);
    CHECK(reducer.last_unused_parameters() == 0);
  }
  SUBCASE("the middle parameter unused") {
    reducer.prepare_backward(/*communicate=*/true);
    (x * c * a).sum().backward();  // a's gradient first: bucket 2 is ready before bucket 0
    reducer.finish();
    CHECK(comm.all_reduced == bucket_order);
    CHECK(reducer.last_unused_parameters() == 1);
    CHECK(b.grad().eq(0).all().item<bool>());
  }
  CHECK(reducer.last_collectives().size() == 3);
}

/// A shared layer, then one of two branches.
struct TwoBranches : torch::nn::Module {
  TwoBranches()
      : trunk(register_module("trunk", torch::nn::Linear(4, 3))),
        branches{register_module("branch0", torch::nn::Linear(3, 2)),
                 register_module("branch1", torch::nn::Linear(3, 2))} {}

  at::Tensor loss(const at::Tensor& x, int branch) {
    return branches[branch]->forward(trunk->forward(x).tanh()).pow(2).sum();
  }

  torch::nn::Linear trunk;
  torch::nn::Linear branches[2];
};

TEST_CASE("ranks whose forward skips parameters average them as zeros, without hanging") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  torch::manual_seed(11);  // the same parameters on every rank
  TwoBranches model;
  const std::vector<at::Tensor> parameters = model.parameters();
  REQUIRE(parameters.size() == 6);
  // This rank's images, and the branch each of its backward passes takes.
  torch::manual_seed(100 + static_cast<std::uint64_t>(world.rank()));
  const at::Tensor first = at::randn({5, 4});
  const at::Tensor second = at::randn({5, 4});
  const int mine = world.rank() % 2;
  const int other = 1 - mine;

  // The expectation, independent of the reducer: this rank's own gradients (none for the skipped
  // branch), summed over ranks by one plain MPI_Allreduce, divided by the world size.
  const auto expected_average = [&](const at::Tensor& local) {
    at::Tensor sum = local.clone();
    MPI_Allreduce(MPI_IN_PLACE, sum.data_ptr<float>(), static_cast<int>(sum.numel()), MPI_FLOAT,
                  MPI_SUM, world.comm());
    return sum / world.size();
  };
  const auto local_gradients = [&](const at::Tensor& x, int branch) {
    return concatenated(torch::autograd::grad({model.loss(x, branch)}, parameters, {},
                                              /*retain_graph=*/false, /*create_graph=*/false,
                                              /*allow_unused=*/true),
                        parameters);
  };
  const at::Tensor one_branch = expected_average(local_gradients(first, mine));
  const at::Tensor both_branches =
      expected_average(local_gradients(first, other) + local_gradients(second, mine));

  GradientReducer reducer(comm, parameters, /*bucket_mb=*/1e-6, at::kFloat,
                          /*communicates=*/comm.size() > 1);
  REQUIRE(reducer.bucket_count() == 6);
  const auto gradients = [&] {
    std::vector<at::Tensor> grads;
    for (const at::Tensor& p : parameters) grads.push_back(p.grad());
    return concatenated(grads, parameters);
  };

  // One backward: the other branch's weight and bias get no gradient on this rank.
  reducer.zero_grad();
  reducer.prepare_backward(/*communicate=*/true);
  model.loss(first, mine).backward();
  reducer.finish();
  // Open MPI may sum a small message and a larger one in different orders.
  CHECK(max_difference(gradients(), one_branch) < 1e-5);
  CHECK(reducer.last_unused_parameters() == (world.size() > 1 ? 2u : 0u));

  // Two micro-batches: the branch of the first only accumulates, so in the communicating
  // backward its buckets never count down and go in finish(); no parameter is unused.
  reducer.zero_grad();
  reducer.prepare_backward(/*communicate=*/false);
  model.loss(first, other).backward();
  reducer.prepare_backward(/*communicate=*/true);
  model.loss(second, mine).backward();
  reducer.finish();
  CHECK(max_difference(gradients(), both_branches) < 1e-5);
  CHECK(reducer.last_unused_parameters() == 0);
}

TEST_CASE("float16 gradients near its largest value are averaged without overflow") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  const at::Tensor p = at::zeros({2}).requires_grad_();
  GradientReducer reducer(comm, {p}, /*bucket_mb=*/25, at::kHalf, /*communicates=*/true);
  // Element 0: 30,000 on every rank, so a sum before dividing passes float16's 65,504 at 3 ranks.
  // Element 1: all of it on rank 0 (30,000 * size), beyond float16 until divided in float32.
  const double size = world.size();
  const at::Tensor weights =
      at::tensor({30000.0, world.rank() == 0 ? 30000.0 * size : 0.0}, at::kFloat);
  reducer.zero_grad();
  reducer.request_stop(world.rank() == world.size() - 1);
  reducer.prepare_backward(/*communicate=*/true);
  (p * weights).sum().backward();
  reducer.finish();
  const at::Tensor grad = p.grad();
  CAPTURE(grad);
  CHECK(grad.isfinite().all().item<bool>());
  // Each of the `size` partial sums rounds to float16's 11 bits.
  CHECK(max_difference(grad, at::full({2}, 30000.0)) <= 30000.0 * size / 2048);
  CHECK(reducer.any_rank_stopping() == StopReason::kRequested);
}

TEST_CASE("a loss that is not finite on one rank stops every rank, told apart from a request") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  for (const at::ScalarType wire : {at::kFloat, at::kHalf, at::kBFloat16}) {
    CAPTURE(wire);
    const at::Tensor p = at::zeros({3}).requires_grad_();
    GradientReducer reducer(comm, {p}, /*bucket_mb=*/25, wire, /*communicates=*/true);
    for (const bool not_finite : {false, true}) {
      CAPTURE(not_finite);
      const bool last = world.rank() == world.size() - 1;
      reducer.zero_grad();
      reducer.request_stop(world.rank() == 0);  // every rank but the last asks in larger worlds
      reducer.stop_if_not_finite(at::full({}, not_finite && last ? NAN : 2.5));
      reducer.prepare_backward(/*communicate=*/true);
      p.sum().backward();
      reducer.finish();
      CHECK(reducer.any_rank_stopping() ==
            (not_finite ? StopReason::kNotFinite : StopReason::kRequested));
    }
  }
}

TEST_CASE("on a GPU a loss that is not finite marks the stop flag on the device" *
          doctest::test_suite("gpu")) {
  // The CPU reads its loss at once; a GPU's check runs as kernels, in a captured step too.
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  const at::Tensor p = at::zeros({3}, cuda).requires_grad_();
  GradientReducer reducer(alone, {p}, /*bucket_mb=*/25, at::kFloat, /*communicates=*/false);
  for (const double loss : {2.5, double{NAN}, double{INFINITY}}) {
    CAPTURE(loss);
    reducer.zero_grad();
    reducer.request_stop(false);
    reducer.stop_if_not_finite(at::full({}, loss, cuda));
    reducer.prepare_backward(/*communicate=*/false);
    p.sum().backward();
    reducer.finish();
    CHECK(reducer.any_rank_stopping() ==
          (std::isfinite(loss) ? StopReason::kNone : StopReason::kNotFinite));
  }
}

TEST_CASE("a world of one rank that communicates does as N ranks do, with the same result") {
  distributed::MpiCommunicator alone(MPI_COMM_SELF);
  const at::Tensor x = at::linspace(-1, 1, 6);
  // The gradients of one backward, one bucket per parameter, and the collectives it started.
  const auto reduced = [&](at::ScalarType wire, bool communicates) {
    std::vector<at::Tensor> parameters = leaves(3, /*numel=*/6);
    GradientReducer reducer(alone, parameters, /*bucket_mb=*/1e-6, wire, communicates);
    reducer.zero_grad();
    reducer.prepare_backward(/*communicate=*/true);
    (x * parameters[0] * parameters[1] + x.exp() / 3 * parameters[2]).sum().backward();
    reducer.finish();
    std::vector<at::Tensor> grads;
    for (const at::Tensor& p : parameters) grads.push_back(p.grad());
    return std::pair{concatenated(grads, parameters), reducer.last_collectives().size()};
  };
  const auto [plain, no_collectives] = reduced(at::kFloat, /*communicates=*/false);
  CHECK(no_collectives == 0);
  const auto [communicated, collectives] = reduced(at::kFloat, /*communicates=*/true);
  CHECK(collectives == 3);
  CHECK(at::equal(communicated, plain));
  // Compressed, the gradients travel as float16 as at N ranks: rounded once, nothing else.
  const auto [compressed, compressed_collectives] = reduced(at::kHalf, /*communicates=*/true);
  CHECK(compressed_collectives == 3);
  CHECK(at::equal(compressed, plain.to(at::kHalf).to(at::kFloat)));

  torch::nn::Linear module(3, 2);
  RecordingCommunicator recording(/*size=*/1);
  broadcast_parameters(recording, *module, /*communicate=*/false);
  CHECK(recording.broadcasts == 0);
  broadcast_parameters(recording, *module, /*communicate=*/true);
  CHECK(recording.broadcasts == 2);  // weight and bias
}

}  // namespace
}  // namespace mnist_ddp::ddp
