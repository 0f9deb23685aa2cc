// lib/config/option_table.cpp — train_options(), bench_options(): every option, one entry each.
#include "config/bench_options.hpp"
#include "config/options.hpp"

namespace mnist_ddp::config {
namespace {

// Far above any real run: an absurd value is a usage error, not a failed allocation or overflow.
constexpr int kMaxBatchSize = 1 << 20;  // images per step, for each batch option
constexpr int kMaxThreads = 1024;
constexpr double kMaxBucketMb = 4096;

constexpr Scope kRank = Scope::kRank;
constexpr Scope kJob = Scope::kJob;
constexpr Scope kTraining = Scope::kTraining;

}  // namespace

const OptionTable& train_options() {
  using C = TrainConfig;
  static const Check max_batch = at_most(kMaxBatchSize);
  static const Check unit_open = in_unit_interval(/*with_one=*/false);
  static const Check unit_closed = in_unit_interval(/*with_one=*/true);
  // One entry per option: --name, the member it sets, its scope, its checks, its --help text.
  // clang-format off
  static const OptionTable table = {
    {"Data", {
    option("data-dir", &C::data_dir, kRank, {}, "folder with train-images-idx3-ubyte, "
      "train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (each raw or .gz)"),
    option("normalize-mean", &C::normalize_mean, kTraining, {}, "pixel mean subtracted after "
      "scaling pixels to [0, 1]"),
    option("normalize-std", &C::normalize_std, kTraining, {greater_than(0)}, "pixel standard "
      "deviation divided out after the mean"),
    option("drop-last", &C::drop_last, kTraining, {}, "drop the training samples that do not split "
      "evenly across ranks instead of padding"),
    }},
    {"Model and optimization", {
    option("model", &C::model, kTraining, {}, "network: "
      "linear (784-10), mlp (784-256-128-10), cnn (conv32-conv64-fc128) or fastcnn "
      "(conv24-conv32-fc256, the net of the fastest MNIST recipe; configs/mnist99.conf)"),
    option("epochs", &C::epochs, kJob, {at_least(1)}, "passes over the training set"),
    option("batch-size", &C::batch_size, kTraining, {at_least(1), max_batch}, "training images per "
      "step on each rank, " + max_batch.rule + " (global batch = this x ranks)", " per rank"),
    option("global-batch-size", &C::global_batch_size, kTraining, {at_least(0), max_batch},
      "training images per step over all ranks, split evenly (instead of --batch-size; 0: off; "
      + max_batch.rule + "), so one recipe means the same at any number of ranks"),
    option("test-batch-size", &C::test_batch_size, kJob, {at_least(1), max_batch}, "evaluation "
      "images per step on each rank, " + max_batch.rule, " per rank"),
    option("optimizer", &C::optimizer, kTraining, {}, "sgd or adam"),
    option("lr", &C::lr, kTraining, {greater_than(0)}, "learning rate"),
    option("momentum", &C::momentum, kTraining, {unit_open}, "SGD momentum, in [0, 1)"),
    option("weight-decay", &C::weight_decay, kTraining, {at_least(0)}, "L2 penalty applied by the "
      "optimizer"),
    option("adam-beta1", &C::adam_beta1, kTraining, {unit_open}, "Adam's beta1, in [0, 1): the "
      "decay of its gradient average"),
    option("adam-beta2", &C::adam_beta2, kTraining, {unit_open}, "Adam's beta2, in [0, 1): the "
      "decay of its squared-gradient average"),
    option("lr-schedule", &C::lr_schedule, kTraining, {}, "constant; onecycle (PyTorch's "
      "OneCycleLR: from lr/25 up to --lr over the first 30% of the steps of --epochs, then down to "
      "lr/25/1e4); or cosine (down to 0 over the steps of --epochs after the warm-up)"),
    option("warmup-steps", &C::warmup_steps, kTraining, {at_least(0)}, "with constant or cosine: "
      "raise the rate linearly to --lr over this many first steps"),
    option("seed", &C::seed, kTraining, {at_least(0)}, "seed for initialisation and data order; "
      "the same on every rank"),
    option("max-steps", &C::max_steps, kJob, {at_least(0)}, "stop after this many optimizer steps "
      "(0: no limit); the run still evaluates and summarises"),
    option("target-accuracy", &C::target_accuracy, kJob, {unit_closed}, "stop as soon as an "
      "evaluation reaches this test accuracy (0..1; 0: off) and report the training time to it"),
    option("eval-every", &C::eval_every, kJob, {at_least(0)}, "also evaluate on the test set every "
      "N optimizer steps (0: after each epoch only), so the step a --target-accuracy is reached is "
      "found finely"),
    }},
    {"Distribution", {
    option("bucket-mb", &C::bucket_mb, kJob, {greater_than(0), at_most(kMaxBucketMb)}, "gradient "
      "bucket size in MB of --grad-dtype, " + at_most(kMaxBucketMb).rule + ": each bucket's allreduce starts as "
      "soon as its gradients are ready during backward"),
    option("grad-accum", &C::grad_accum, kTraining, {at_least(1)}, "micro-batches of --batch-size "
      "per optimizer step; gradients are communicated on the last"),
    option("grad-dtype", &C::grad_dtype, kTraining, {}, "fp32, bf16 or fp16: the type gradients "
      "travel in (averaged back in fp32)"),
    option("comm-timeout", &C::comm_timeout, kJob, {greater_than(0)}, "seconds a collective may "
      "wait for the other ranks before the job ends with exit 5, naming the ranks that had not "
      "joined", " s"),
    option("communicate-alone", &C::communicate_alone, kJob, {}, "a testing aid: a single rank "
      "still allreduces its gradient buckets and broadcasts its parameters, as each of N ranks "
      "does (same results; exercises NCCL on one GPU)"),
    }},
    {"Execution", {
    option("threads", &C::threads, kJob, {at_least(0), at_most(kMaxThreads)}, "intra-op threads "
      "per rank, " + at_most(kMaxThreads).rule + " (0: cores on the node / ranks on the node, at "
      "least 1)"),
    option("device", &C::device, kJob, {}, "auto (cuda when LibTorch has CUDA and sees a GPU, else "
      "cpu), cpu or cuda; on cuda each rank uses GPU local rank % visible GPUs"),
    option("backend", &C::backend, kJob, {}, "gradient transport: auto (nccl on cuda when built "
      "in, else mpi), nccl or mpi (on cuda through host memory)"),
    option("mode", &C::mode, kJob, {}, "ddp (one process per device, start with mpirun) or dp (one "
      "process drives every visible GPU, like torch.nn.DataParallel; needs CUDA)"),
    option("precision", &C::precision, kJob, {}, "fp32 or bf16 (forward under autocast in "
      "bfloat16; weights, gradients and optimizer in fp32)"),
    option("cuda-graph", &C::cuda_graph, kJob, {}, "off, auto or on: capture one whole training "
      "step (batch, forward, backward, NCCL allreduces, optimizer) as a CUDA graph and replay it; "
      "auto: where a step can be captured, else eager (the banner says why); on: refused where it "
      "cannot"),
    }},
    {"Checkpoints", {
    option("checkpoint-dir", &C::checkpoint_dir, kJob, {}, "rank 0 writes checkpoints here at "
      "every epoch end, on SIGTERM/SIGUSR1 (then exits 6) and every --checkpoint-every steps"),
    option("checkpoint-every", &C::checkpoint_every, kJob, {at_least(0)}, "also checkpoint every N "
      "optimizer steps (0: epoch ends only)"),
    option("keep-last", &C::keep_last, kJob, {at_least(1)}, "checkpoints of this run to keep in "
      "--checkpoint-dir, newest first; pruning never touches another run's"),
    option("resume", &C::resume, kJob, {}, "never; auto (the newest intact checkpoint in "
      "--checkpoint-dir, if any); or the path of a checkpoint (.mddp) or its manifest (.json)"),
    option("replace-checkpoints", &C::replace_checkpoints, kJob, {}, "let a run write into a "
      "--checkpoint-dir holding checkpoints it does not continue from (any, for a fresh start; "
      "another run's or its own later ones, for a resume), deleting them once it has written its "
      "first checkpoint; without it such a run exits 2"),
    option("eval-only", &C::eval_only, kJob, {}, "evaluate the --resume checkpoint on the test set "
      "and exit; no training"),
    option("export-model", &C::export_model, kJob, {}, "after training, save the model alone to "
      "this file for inference (torch::load)"),
    }},
    {"Output", {
    option("metrics-file", &C::metrics_file, kJob, {}, "write JSON Lines metrics (step records "
      "every --log-every steps, one per epoch, a summary) from rank 0 to this file; a resumed run "
      "appends to it, any other replaces it"),
    option("log-every", &C::log_every, kJob, {at_least(0)}, "every N optimizer steps: a progress "
      "line (when not live), a metrics step record and TensorBoard scalars (0: epoch ends only)"),
    option("progress", &C::progress, kJob, {}, "auto (a live line when stdout is a terminal, else "
      "plain lines), live, lines or off"),
    option("tensorboard-dir", &C::tensorboard_dir, kJob, {}, "write TensorBoard event files (loss, "
      "accuracy, lr, throughput, comm share) here: a new file each run, resumed ones too; "
      "TensorBoard shows the folder's files as one run"),
    option("report", &C::report, kJob, {}, "write a self-contained HTML report (curves, "
      "throughput, per-rank step time) to this file"),
    option("timeline", &C::timeline, kJob, {}, "write a Chrome trace (chrome://tracing, Perfetto) "
      "of every rank's phases and collectives"),
    option("timeline-steps", &C::timeline_steps, kJob, {}, "the optimizer steps FIRST:LAST the "
      "--timeline records (evaluations and checkpoints among them too)"),
    option("log-all-ranks", &C::log_all_ranks, kJob, {}, "let every rank log, prefixed with its "
      "rank, not only rank 0"),
    option("min-accuracy", &C::min_accuracy, kJob, {unit_closed}, "exit with code 1 when the final "
      "test accuracy (0..1) is below this"),
    }},
  };
  // clang-format on
  return table;
}

const BasicOptionTable<BenchConfig>& bench_options() {
  using B = BenchConfig;
  // One entry per option, as train_options(); "min-bytes,b" is also -b, as in nccl-tests.
  // clang-format off
  static const BasicOptionTable<BenchConfig> table = {
    {"Sweep", {
    option("backend", &B::backend, kJob, {}, "the transport: auto (nccl where every rank has a "
      "GPU and NCCL, else mpi), nccl or mpi"),
    option("min-bytes,b", &B::min_bytes, kJob, {at_least(4)}, "smallest message in bytes"),
    option("max-bytes,e", &B::max_bytes, kJob, {}, "largest message in bytes, at least "
      "--min-bytes"),
    option("factor,f", &B::factor, kJob, {at_least(2)}, "multiply the size by this between steps"),
    option("iters,n", &B::iters, kJob, {at_least(1)}, "timed iterations per size"),
    option("warmup,w", &B::warmup, kJob, {at_least(0)}, "untimed iterations per size before "
      "timing"),
    }},
  };
  // clang-format on
  return table;
}

}  // namespace mnist_ddp::config
