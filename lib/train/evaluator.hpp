// lib/train/evaluator.hpp — provides: evaluate, test-set evaluation sharded
// across ranks and combined with one allreduce.
#pragma once

#include <cstdint>

#include "data/batch_maker.hpp"
#include "distributed/communicator.hpp"
#include "model/classifier.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::train {

/// Rank r evaluates samples r, r + W, ... (no padding), then one allreduce sums loss and
/// correct counts, so the result is what a single rank evaluating everything would get. Runs
/// where `dataset` lives (the model must be there too); `bf16`: the forward under autocast, as
/// training's with --precision bf16.
EvalResult evaluate(model::Classifier& model, const data::Dataset& dataset,
                    const data::BatchMaker& batches, distributed::Communicator& comm,
                    int batch_size, bool bf16 = false);

}  // namespace mnist_ddp::train
