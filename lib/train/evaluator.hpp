// lib/train/evaluator.hpp — provides: evaluate, sharded test-set evaluation.
#pragma once

#include "data/batch_maker.hpp"
#include "distributed/communicator.hpp"
#include "model/classifier.hpp"
#include "train/train_reports.hpp"

namespace mnist_ddp::train {

/// Rank r evaluates samples r, r + W, ... (no padding); one allreduce gives every rank the whole
/// set's result. Runs where `dataset` lives, as the model must; `bf16`: forward under autocast.
EvalResult evaluate(model::Classifier& model, const data::Dataset& dataset,
                    const data::BatchMaker& batches, distributed::Communicator& comm,
                    int batch_size, bool bf16 = false);

}  // namespace mnist_ddp::train
