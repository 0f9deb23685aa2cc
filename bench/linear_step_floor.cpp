// bench/linear_step_floor.cpp — what LibTorch itself takes for one step of --model linear (batch
// 64, 784 -> 10, one thread), part by part: the floor under mnist_ddp's own step time.
//
//   g++ -O2 -std=c++17 bench/linear_step_floor.cpp -o /tmp/floor -ltorch -ltorch_cpu -lc10 \
//     -I/usr/include/torch/csrc/api/include && /tmp/floor
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kImages = 60'000;
constexpr int kSteps = 20'000;

/// Microseconds per call of `step`, the best of 5 runs of kSteps after a warm-up.
template <typename Step>
double microseconds_per_step(Step step) {
  for (int i = 0; i < 2'000; ++i) step(i);
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kSteps; ++i) step(i);
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count() / kSteps);
  }
  return best;
}

}  // namespace

int main() {
  at::set_num_threads(1);
  torch::manual_seed(0);
  const at::Tensor images = torch::randint(0, 256, {kImages, 784}, torch::kUInt8);
  const at::Tensor labels = torch::randint(0, 10, {kImages}, torch::kLong);
  const at::Tensor order = torch::randperm(kImages);
  const at::Tensor x = torch::rand({kBatch, 784});
  const at::Tensor y = labels.slice(0, 0, kBatch);
  torch::nn::Linear fc(784, 10);
  torch::optim::SGD sgd(fc->parameters(), 0.01);
  const at::Tensor w = fc->weight.detach().clone();
  const at::Tensor g = torch::rand({kBatch, 10});

  const auto batch_indices = [&](int i) {
    return order.slice(0, (i * kBatch) % (kImages - kBatch),
                       (i * kBatch) % (kImages - kBatch) + kBatch);
  };
  const auto print = [](const char* what, double us) {
    std::printf("%-62s %7.1f us  %9.0f img/s\n", what, us, kBatch / us * 1e6);
  };
  print("the two GEMMs alone (logits, weight gradient), no autograd",
        microseconds_per_step([&](int) {
          at::addmm(fc->bias.detach(), x, w.t());
          at::mm(g.t(), x);
        }));
  print("linear forward + backward, sum loss (autograd)", microseconds_per_step([&](int) {
          fc->zero_grad();
          fc->forward(x).sum().backward();
        }));
  print("  + cross-entropy instead of the sum", microseconds_per_step([&](int) {
          fc->zero_grad();
          torch::cross_entropy_loss(fc->forward(x), y).backward();
        }));
  print("  + SGD step", microseconds_per_step([&](int) {
          sgd.zero_grad();
          torch::cross_entropy_loss(fc->forward(x), y).backward();
          sgd.step();
        }));
  print("  + batch gathered from 60,000 uint8 images, normalized",
        microseconds_per_step([&](int i) {
          const at::Tensor index = batch_indices(i);
          const at::Tensor batch =
              images.index_select(0, index).to(at::kFloat).div_(255).sub_(0.1307).div_(0.3081);
          sgd.zero_grad();
          torch::cross_entropy_loss(fc->forward(batch), labels.index_select(0, index)).backward();
          sgd.step();
        }));
  print("the gather alone", microseconds_per_step([&](int i) {
          const at::Tensor index = batch_indices(i);
          images.index_select(0, index).to(at::kFloat).div_(255).sub_(0.1307).div_(0.3081);
          labels.index_select(0, index);
        }));
  return 0;
}
