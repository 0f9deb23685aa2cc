#!/usr/bin/python3
"""The 99% recipes of configs/mnist99*.conf in Python PyTorch, as fast as Python does it.

The network of tuomaso/train_mnist_fast (conv 1->24 5x5, max-pool 2, ReLU, conv 24->32 3x3, max-pool
2, ReLU, fc 800->256, ReLU, fc 10), Adam lr 0.01 with betas (0.7, 0.9), OneCycleLR over one epoch
(cycle_momentum=False: mnist_ddp's onecycle schedules the learning rate only), global batch 256
split across the ranks, DistributedDataParallel over gloo (over NCCL with --device cuda, a GPU
per rank), a DistributedSampler order, every image pre-loaded and normalised as one tensor (no
DataLoader: the batches are index_select on it, as mnist_ddp makes them; on the GPU with --device
cuda), and the libraries' first-use costs paid before the clock starts, as mnist_ddp pays them
(pay_one_time_costs). Every --eval-every steps the ranks evaluate the test set (each its share,
r, r+W, ...) and stop at the first evaluation at --target; training time excludes the
evaluations, as mnist_ddp's target_train_s does (on a GPU each step's clock stops when the GPU is
done with it). With --target 0 it trains every epoch, and with --eval-every 0 it evaluates at the
end only. --epochs 2 is configs/mnist99-sure.conf.

--variant picks how PyTorch runs it: eager (NCHW, Adam's for-loop: what the recipe's code does as
written), channels-last (channels_last model and batches, fused Adam: PyTorch 2.x's fastest eager
setting on a CPU) or compile (channels-last under torch.compile, mode --compile-mode; compiled on
a zero batch of each batch size before the clock starts, compile_s in the summary; on a GPU,
--compile-mode reduce-overhead replays CUDA graphs, recorded then too).
--precision bf16 runs the forward pass and loss under torch.autocast in bfloat16, as mnist_ddp's
--precision bf16 does.

    mpirun -np 2 /usr/bin/python3 bench/python/recipe99.py --seed 1 --master-port 29511
    python3 bench/python/recipe99.py --device cuda --epochs 2 --variant compile \
        --compile-mode reduce-overhead

Rank 0 prints one JSON line: {"event": "summary", "seed", "target_reached", "target_step",
"target_train_s", "test_accuracy", "train_images_per_sec", "torch", "cpu_capability", ...}.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ddp_tutorial import MEAN, STD, load_split, world_from_environment


class FastCnn(nn.Module):
    """lib/model/fast_cnn_net.cpp, layer for layer."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 24, 5)
        self.conv2 = nn.Conv2d(24, 32, 3)
        self.fc1 = nn.Linear(800, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


def pay_one_time_costs(make_network, batch, device="cpu"):
    """What mnist_ddp does before its training clock starts (Note [One-time costs before the
    clock] in lib/train/trainer.cpp): one forward and backward pass of a scratch network
    on a zero batch, so that the libraries' first-use costs (cuDNN's and cuBLAS's set-up, kernels
    loaded on first use, the CPU's thread pool) are not counted as training time. The random
    generators are put back: the run draws what it would have drawn without it."""
    device = torch.device(device)
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
    network = make_network().to(device).train()
    labels = torch.zeros(batch, dtype=torch.long, device=device)
    F.cross_entropy(network(torch.zeros(batch, 1, 28, 28, device=device)), labels).backward()
    if cuda_state is not None:
        torch.cuda.synchronize(device)
        torch.cuda.set_rng_state(cuda_state, device)
    torch.set_rng_state(cpu_state)


def normalised(images):
    """uint8 N x 28 x 28 as float N x 1 x 28 x 28, normalised with MNIST's mean and deviation."""
    return ((torch.from_numpy(images.copy()).float() / 255 - MEAN) / STD).unsqueeze(1)


def evaluate(model, images, labels, rank, world):
    """Test accuracy over every rank's share (r, r+W, ...), summed with one allreduce."""
    model.eval()
    with torch.no_grad():
        mine = slice(rank, None, world)
        correct = (model(images[mine]).argmax(1) == labels[mine]).sum()
    totals = torch.tensor([float(correct), float(labels[mine].numel())], device=labels.device)
    dist.all_reduce(totals)
    model.train()
    return (totals[0] / totals[1]).item()


VARIANTS = ("eager", "channels-last", "compile")


def cpu_capability():
    """The vector instructions ATen's CPU kernels use ("AVX512", "AVX2", ...)."""
    if hasattr(torch.backends, "cpu"):
        return torch.backends.cpu.get_cpu_capability()
    lines = [line for line in torch.__config__.show().splitlines() if "CPU capability" in line]
    return lines[0].split(":")[-1].strip() if lines else "unknown"


def make_network(variant):
    network = FastCnn()
    return network if variant == "eager" else network.to(memory_format=torch.channels_last)


def make_optimizer(parameters, variant):
    """Adam as the recipe has it; fused (one kernel over every parameter) but for eager."""
    fused = {} if variant == "eager" else {"fused": True}
    return torch.optim.Adam(parameters, lr=0.01, betas=(0.7, 0.9), **fused)


def synchronize(device):
    """Waits until the GPU is done with the work queued so far: before a clock is read."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# Passes of each batch size before the clock: torch.compile's CUDA graphs (mode reduce-overhead,
# max-autotune) run a new graph once, record it on the second call and replay it from the third.
COMPILE_PASSES = 3


def compile_before_the_clock(model, batch_sizes, autocast, device=torch.device("cpu")):
    """torch.compile's seconds: the compiled model run forward and backward on a zero batch of
    each size the epochs use, so no compilation happens on the clock; gradients are cleared."""
    start = time.perf_counter()
    for size in batch_sizes:
        for _ in range(COMPILE_PASSES):
            model.zero_grad(set_to_none=True)
            with autocast:
                loss = F.cross_entropy(model(torch.zeros(size, 1, 28, 28, device=device)),
                                       torch.zeros(size, dtype=torch.long, device=device))
            loss.backward()
    model.zero_grad(set_to_none=True)
    synchronize(device)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="data/mnist")
    parser.add_argument("--global-batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=1)
    # As mnist_ddp's --eval-every and --target-accuracy: 0 is the end only, and no target.
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", choices=VARIANTS, default="eager")
    parser.add_argument("--compile-mode", default="default",
                        help="torch.compile's mode for --variant compile")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--master-port", default=os.environ.get("MASTER_PORT", "29500"))
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error(f"--device cuda needs a CUDA GPU, and torch {torch.__version__} has none "
                     f"(torch.cuda.is_available() is False)")
    torch_version = tuple(int(part) for part in torch.__version__.split(".")[:2])
    if args.variant != "eager" and torch_version < (2, 4):
        parser.error(f"--variant {args.variant} needs PyTorch 2.4 or newer (fused Adam on the "
                     f"CPU); this is torch {torch.__version__}")

    rank, world = world_from_environment()
    device = torch.device("cpu")
    if args.device == "cuda":
        local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ.get("LOCAL_RANK", 0)))
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(args.master_port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank,
                            world_size=world)

    train_images, train_labels = load_split(args.data_dir, "train")
    test_images, test_labels = load_split(args.data_dir, "t10k")
    train_x, train_y = (normalised(train_images).to(device),
                        torch.from_numpy(train_labels).to(device))
    test_x, test_y = normalised(test_images).to(device), torch.from_numpy(test_labels).to(device)
    batch = args.global_batch_size // world
    shard_size = len(range(rank, len(train_y), world))
    steps_per_epoch = (shard_size + batch - 1) // batch
    steps = steps_per_epoch * args.epochs

    network = make_network(args.variant).to(device)
    model = DistributedDataParallel(network)
    optimizer = make_optimizer(model.parameters(), args.variant)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, total_steps=steps,
                                                   cycle_momentum=False)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.precision == "bf16")
    compile_s = None
    if args.variant == "compile":
        model = torch.compile(model, mode=args.compile_mode)
        compile_s = compile_before_the_clock(model, sorted({batch, shard_size % batch} - {0}),
                                             autocast, device)
    else:
        pay_one_time_costs(lambda: make_network(args.variant), batch, device)
    train_s = 0.0
    reached_step, accuracy, step = None, 0.0, 0
    for epoch in range(args.epochs):
        # DistributedSampler's order: a permutation seeded by (seed, epoch); rank r takes r, r+W..
        generator = torch.Generator().manual_seed(args.seed + epoch)
        shard = torch.randperm(len(train_y), generator=generator)[rank::world].to(device)
        for first in range(0, shard_size, batch):
            step += 1
            start = time.perf_counter()
            index = shard[first:first + batch]
            optimizer.zero_grad()
            with autocast:
                loss = F.cross_entropy(model(train_x.index_select(0, index)),
                                       train_y.index_select(0, index))
            loss.backward()
            optimizer.step()
            schedule.step()
            synchronize(device)
            train_s += time.perf_counter() - start
            if (args.eval_every and step % args.eval_every == 0) or step == steps:
                accuracy = evaluate(network, test_x, test_y, rank, world)
                if args.target and accuracy >= args.target:
                    reached_step = step
                    break
        if reached_step:
            break
    if rank == 0:
        done = reached_step or steps
        images = sum(min(batch, shard_size - (s % steps_per_epoch) * batch)
                     for s in range(done)) * world
        print(json.dumps({"event": "summary", "seed": args.seed, "world_size": world,
                          "threads": args.threads, "variant": args.variant,
                          "precision": args.precision, "torch": torch.__version__,
                          "cpu_capability": cpu_capability(), "compile_s": compile_s,
                          "target_accuracy": args.target,
                          "target_reached": reached_step is not None,
                          "target_step": reached_step, "target_train_s": train_s,
                          "test_accuracy": accuracy,
                          "train_images_per_sec": images / train_s}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
