// lib/train/evaluator.hpp — provides: EvalResult and evaluate, test-set evaluation sharded
// across ranks and combined with one allreduce.
#pragma once

#include <cstdint>

#include "data/batch_maker.hpp"
#include "dist/communicator.hpp"
#include "model/classifier.hpp"

namespace mnist_ddp::train {

struct EvalResult {
  double loss = 0;      // mean cross-entropy over the whole set
  double accuracy = 0;  // correct / count, in [0, 1]
  std::int64_t correct = 0;
  std::int64_t count = 0;  // every sample exactly once, whatever the world size
};

/// Rank r evaluates samples r, r + W, ... (no padding), then one allreduce sums loss and
/// correct counts, so the result is what a single rank evaluating everything would get. Runs
/// where `dataset` lives (the model must be there too); `bf16`: the forward under autocast, as
/// training's with --precision bf16.
EvalResult evaluate(model::Classifier& model, const data::Dataset& dataset,
                    const data::BatchMaker& batches, dist::Communicator& comm, int batch_size,
                    bool bf16 = false);

}  // namespace mnist_ddp::train
