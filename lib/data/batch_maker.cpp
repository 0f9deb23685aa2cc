// lib/data/batch_maker.cpp — one pass on one thread on the CPU, one gather on a GPU.
#include "data/batch_maker.hpp"

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "common/error.hpp"

namespace mnist_ddp::data {
namespace {

// Note [Batches on one thread]: ATen's parallel regions cost more than a CPU batch's work, so one
// loop gathers and normalizes it, rounding as the tensor operations do (tests compare bits).

/// One image: `count` pixels to `pixel * scale + shift`.
void normalize_image(const std::uint8_t* __restrict pixels, std::int64_t count, float scale,
                     float shift, float* __restrict out) {
  for (std::int64_t i = 0; i < count; ++i) {
    const float scaled = static_cast<float>(pixels[i]) * scale;
    out[i] = scaled + shift;
  }
}

// Images read ahead: a batch's images lie at random in a data set that outgrows the caches.
constexpr std::int64_t kPrefetchAhead = 2;
constexpr std::int64_t kCacheLine = 64;

/// Asks for image `k`'s pixels and label; an index outside the data set is left to the check.
void prefetch(const std::uint8_t* images, const std::int64_t* labels, std::int64_t k,
              std::int64_t pixels, std::int64_t count) {
  if (k < 0 || k >= count) return;
  const std::uint8_t* first = images + k * pixels;
  for (std::int64_t offset = 0; offset < pixels; offset += kCacheLine)
    __builtin_prefetch(first + offset);
  __builtin_prefetch(labels + k);
}

// Note [A normalized copy on the GPU]: a GPU step is bound by kernel launches, so the data set is
// normalized once and a batch is one gather; the CPU keeps uint8, where memory reads are the cost.

double scale_for(double std) { return 1.0 / (255.0 * std); }

double shift_for(double mean, double std) { return -mean / std; }

}  // namespace

at::Tensor normalized_images(const at::Tensor& images, double mean, double std) {
  return images.to(at::kFloat).mul_(scale_for(std)).add_(shift_for(mean, std)).unsqueeze_(1);
}

BatchMaker::BatchMaker(const Dataset& dataset, double mean, double std)
    : dataset_(dataset), scale_(scale_for(std)), shift_(shift_for(mean, std)) {
  if (!dataset.images.is_cpu()) normalized_ = normalized_images(dataset.images, mean, std);
}

Batch BatchMaker::make(const at::Tensor& indices) const {
  if (normalized_.defined()) {  // Note [A normalized copy on the GPU]
    return Batch{normalized_.index_select(0, indices), dataset_.labels.index_select(0, indices)};
  }
  // Note [Batches on one thread]
  const at::Tensor order = indices.to(at::kLong).contiguous();
  const at::Tensor images = dataset_.images.contiguous();
  const at::Tensor labels = dataset_.labels.contiguous();
  const std::int64_t count = order.numel();
  const std::int64_t pixels = images.size(1) * images.size(2);
  Batch batch{at::empty({count, 1, images.size(1), images.size(2)}, at::kFloat),
              at::empty({count}, at::kLong)};
  const std::int64_t* index = order.data_ptr<std::int64_t>();
  const std::uint8_t* image = images.data_ptr<std::uint8_t>();
  const std::int64_t* label = labels.data_ptr<std::int64_t>();
  float* input = batch.inputs.data_ptr<float>();
  std::int64_t* target = batch.targets.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t k = index[i];
    if (k < 0 || k >= dataset_.size()) {
      throw Error(ExitCode::kFailure, "BatchMaker: index " + std::to_string(k) +
                                          " is outside the data set of " +
                                          std::to_string(dataset_.size()) + " images");
    }
    if (i + kPrefetchAhead < count)
      prefetch(image, label, index[i + kPrefetchAhead], pixels, dataset_.size());
    normalize_image(image + k * pixels, pixels, static_cast<float>(scale_),
                    static_cast<float>(shift_), input + i * pixels);
    target[i] = label[k];
  }
  return batch;
}

}  // namespace mnist_ddp::data
