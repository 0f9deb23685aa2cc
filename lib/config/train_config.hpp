// lib/config/train_config.hpp — provides: TrainConfig, every setting of a run with its default.
#pragma once

#include <cstdint>
#include <string>

#include "config/step_range.hpp"

namespace mnist_ddp::config {

/// Everything that shapes a run. Defaults follow the classic PyTorch DDP tutorial.
struct TrainConfig {
  // Data
  std::string data_dir = "data/mnist";  // folder with the four MNIST IDX files, raw or .gz
  double normalize_mean = 0.1307;       // MNIST pixel mean, applied after scaling to [0, 1]
  double normalize_std = 0.3081;        // MNIST pixel standard deviation
  bool drop_last = false;               // drop the tail that does not split evenly across ranks

  // Model and optimization
  std::string model = "linear";  // linear | mlp | cnn
  int epochs = 5;                // passes over the training set
  int batch_size = 64;           // images per step on each rank, as in the tutorial
  // If > 0: images per step over all ranks, split evenly (sets batch_size; split_global_batch).
  int global_batch_size = 0;
  // Evaluation images per step on each rank. Not 1000 as in the PyTorch example: the cnn's
  // activations scale with it (peak 600 MiB per rank at 1000, 270 MiB at 100), its speed does not.
  int test_batch_size = 100;
  std::string optimizer = "sgd";  // sgd | adam
  double lr = 0.01;               // learning rate
  double momentum = 0.0;          // SGD momentum
  double weight_decay = 0.0;      // L2 penalty added by the optimizer
  double adam_beta1 = 0.9;        // Adam's decay of the gradient average, as PyTorch's default
  double adam_beta2 = 0.999;      // Adam's decay of the squared-gradient average
  std::string lr_schedule = "constant";  // constant | onecycle | cosine, over the run's steps
  std::int64_t warmup_steps = 0;         // linear warm-up steps (constant, cosine); 0: none
  std::int64_t seed = 1;                 // model initialisation and data order; same on every rank
  std::int64_t max_steps = 0;            // stop after this many optimizer steps; 0 means no limit
  double target_accuracy = 0;   // stop once an evaluation reaches this test accuracy; 0: off
  std::int64_t eval_every = 0;  // also evaluate every N optimizer steps; 0: at epoch ends only

  // Distribution
  double bucket_mb = 25;            // gradient bucket cap in MB, as PyTorch DDP
  int grad_accum = 1;               // micro-batches per optimizer step; communicate on the last
  std::string grad_dtype = "fp32";  // fp32 | bf16 | fp16: how gradients travel
  // A collective that waits longer than this (seconds) ends the job with exit 5, naming the ranks
  // that had not joined: generous, as PyTorch's NCCL watchdog, so slow file systems never trip it.
  double comm_timeout = 300;
  // Run every collective even at world size 1 (a testing aid: the communication path of a
  // multi-rank run on one GPU, with the same results as a plain 1-rank run).
  bool communicate_alone = false;

  // Execution
  int threads = 0;  // intra-op threads per rank; 0 means cores on the node / ranks on the node
  std::string device = "auto";     // auto (cuda when LibTorch sees a GPU, else cpu) | cpu | cuda
  std::string backend = "auto";    // auto (nccl on cuda when built in, else mpi) | nccl | mpi
  std::string mode = "ddp";        // ddp (one process per device) | dp (one process, all GPUs)
  std::string precision = "fp32";  // fp32 | bf16 (autocast forward; fp32 master weights)
  // off | auto (on where a step can be captured: CUDA, NCCL or no communication, ddp, fp32, no
  // --grad-accum) | on (refused where it cannot): replay each step as one CUDA graph (Note [The
  // step as one CUDA graph]).
  std::string cuda_graph = "auto";

  // Checkpoints
  std::string checkpoint_dir;         // where rank 0 writes checkpoints; empty means none
  std::int64_t checkpoint_every = 0;  // also every N optimizer steps; 0 means epoch ends only
  int keep_last = 3;                  // checkpoints kept in checkpoint_dir, newest first
  std::string resume = "never";       // never | auto (newest intact in checkpoint_dir) | a path
  bool replace_checkpoints = false;   // delete checkpoint_dir's checkpoints the run won't continue
  bool eval_only = false;             // evaluate the --resume checkpoint; no training
  std::string export_model;           // after training, save the model alone here (torch::save)

  // Output
  std::string metrics_file;       // JSON Lines metrics written by rank 0; empty means none
  bool log_all_ranks = false;     // let every rank log, not only rank 0
  std::int64_t log_every = 100;   // progress line, metrics step record, TensorBoard scalars; 0: off
  std::string progress = "auto";  // auto (live on a terminal, else lines) | live | lines | off
  std::string tensorboard_dir;    // TensorBoard event files written by rank 0; empty means none
  std::string report;             // self-contained HTML run report by rank 0; empty means none
  std::string timeline;           // Chrome trace of every rank's phases; empty means none
  // The optimizer steps the timeline records: a window, so a long run's trace stays small enough
  // to open (a step is 5 phase spans plus one per gradient bucket on each rank).
  StepRange timeline_steps{1, 1000};
  double min_accuracy = 0.0;  // exit non-zero when the final test accuracy is below this
};

}  // namespace mnist_ddp::config
