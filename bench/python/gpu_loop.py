#!/usr/bin/python3
"""A best-effort PyTorch training loop on one GPU, eager or at PyTorch's fastest GPU settings.

The whole data set is uploaded once and normalised there (no DataLoader); each epoch draws one
permutation on the GPU and each batch is an index into it; SGD (or Adam) with its multi-tensor
(foreach) kernels, gradients set to None between steps. The models are ddp_tutorial.py's and
recipe99.py's (mnist_ddp's networks). cuDNN's and cuBLAS's set-up and the kernels' loading are
paid before the clock starts, by one scratch forward and backward pass, as mnist_ddp pays them.
The epoch is timed from its first step until the GPU is done with its last.

--variant picks how each full batch's step runs:
- eager: as written;
- reduce-overhead, max-autotune: the model under torch.compile in that mode (Inductor's kernels,
  replayed as CUDA graphs), compiled and recorded on a zero batch before the clock (compile_s);
- cuda-graph: forward, backward and the optimizer step captured as one CUDA graph (Adam then
  capturable) and replayed on static input and label tensors that each batch is copied into;
  the first 3 steps run eagerly on a side stream and the capture follows them inside the first
  epoch, as mnist_ddp's --cuda-graph on does.
In every variant the last partial batch of an epoch (60000 % 64 = 32 images) runs eagerly, so
every variant trains on the same images ("partial_batch": "eager" in the summary).

    python3 bench/python/gpu_loop.py --model cnn --data-dir data/mnist [--variant cuda-graph]
        [--profile 20]

With --profile N it then runs N more steps under torch.profiler and reports the CUDA kernels and
the host time per step. It prints one JSON line: {"event": "summary", "variant",
"train_images_per_sec", "train_s", "epoch_images_per_sec" (each epoch's), "test_accuracy",
"steps", "compile_s", "kernels_per_step", "host_ms_per_step", ...}.
"""
import argparse
import contextlib
import functools
import json
import sys
import time

import torch
import torch.nn.functional as F

from ddp_tutorial import MEAN, MODELS, STD, load_split
from recipe99 import FastCnn, compile_before_the_clock, pay_one_time_costs

VARIANTS = ("eager", "reduce-overhead", "max-autotune", "cuda-graph")
# Eager steps before the capture: the optimizer's state and the libraries' workspaces then exist.
WARM_UP_STEPS = 3


def on_gpu(images, labels, device):
    """uint8 N x 28 x 28 and labels as normalised float N x 1 x 28 x 28 and int64, on `device`."""
    x = torch.from_numpy(images.copy()).to(device).float().div_(255).sub_(MEAN).div_(STD)
    return x.unsqueeze(1), torch.from_numpy(labels.astype("int64")).to(device)


def eager_step(model, optimizer, x, y, set_to_none=True):
    optimizer.zero_grad(set_to_none=set_to_none)
    F.cross_entropy(model(x), y).backward()
    optimizer.step()


class GraphedStep:
    """Full batches: WARM_UP_STEPS eager steps on a side stream, then one CUDA graph of the whole
    step, replayed on static tensors; a partial batch: an eager step."""

    def __init__(self, model, optimizer, batch_size):
        self.model, self.optimizer, self.batch_size = model, optimizer, batch_size
        self.warm_up_left = WARM_UP_STEPS
        self.graph, self.static = None, None

    def __call__(self, x, y):
        if len(y) != self.batch_size:
            # The captured gradients must stay the parameters' .grad: zeroed, not set to None.
            eager_step(self.model, self.optimizer, x, y, set_to_none=False)
        elif self.warm_up_left:
            self.warm_up_left -= 1
            side, main = torch.cuda.Stream(), torch.cuda.current_stream()
            side.wait_stream(main)
            with torch.cuda.stream(side):
                eager_step(self.model, self.optimizer, x, y)
            main.wait_stream(side)
        else:
            if self.graph is None:
                self.static = (torch.empty_like(x), torch.empty_like(y))
                self.graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(self.graph):
                    eager_step(self.model, self.optimizer, *self.static)
            for static, batch in zip(self.static, (x, y)):
                static.copy_(batch)
            self.graph.replay()


def make_step(variant, model, optimizer, batch_size, device):
    """(step(x, y), torch.compile's seconds before the clock or None) for --variant."""
    if variant == "eager":
        return functools.partial(eager_step, model, optimizer), None
    if variant == "cuda-graph":
        return GraphedStep(model, optimizer, batch_size), None
    compiled = torch.compile(model, mode=variant)
    compile_s = compile_before_the_clock(compiled, [batch_size], contextlib.nullcontext(), device)

    def step(x, y):
        # A partial batch would compile on the clock: it runs eagerly, on the same parameters.
        eager_step(compiled if len(y) == batch_size else model, optimizer, x, y)
    return step, compile_s


def profile_steps(step, x, y, count):
    """(CUDA kernels and copies, host milliseconds) per step, over `count` steps."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(count):
            step(x, y)
        host_s = time.perf_counter() - start
        torch.cuda.synchronize()
    kernels = sum(1 for e in prof.events() if e.device_type.name == "CUDA")
    return kernels / count, 1000 * host_s / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="data/mnist")
    parser.add_argument("--model", choices=sorted(MODELS) + ["fastcnn"], default="cnn")
    parser.add_argument("--variant", choices=VARIANTS, default="eager")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="then N more steps under torch.profiler: kernels and host time")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit(f"gpu_loop.py --variant {args.variant}: needs a CUDA GPU, and torch "
                 f"{torch.__version__} has none (torch.cuda.is_available() is False)")

    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    x, y = on_gpu(*load_split(args.data_dir, "train"), device)
    test_x, test_y = on_gpu(*load_split(args.data_dir, "t10k"), device)
    network = FastCnn if args.model == "fastcnn" else MODELS[args.model]
    model = network().to(device)
    if args.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, foreach=True,
                                     capturable=args.variant == "cuda-graph")
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                    foreach=True)
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)

    pay_one_time_costs(network, args.batch_size, device)
    model.train()
    step, compile_s = make_step(args.variant, model, optimizer, args.batch_size, device)
    epoch_s, steps = [], 0
    for _ in range(args.epochs):
        order = torch.randperm(len(y), device=device, generator=generator)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for first in range(0, len(y), args.batch_size):
            batch = order[first:first + args.batch_size]
            step(x[batch], y[batch])
            steps += 1
        torch.cuda.synchronize()
        epoch_s.append(time.perf_counter() - start)

    train_s = sum(epoch_s)
    summary = {"event": "summary", "model": args.model, "variant": args.variant,
               "batch_size": args.batch_size, "partial_batch": "eager",
               "train_images_per_sec": len(y) * args.epochs / train_s, "train_s": train_s,
               "epoch_images_per_sec": [len(y) / s for s in epoch_s], "steps": steps,
               "compile_s": compile_s, "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name()}
    # The uncompiled model: evaluation mode would recompile a compiled one.
    model.eval()
    with torch.no_grad():
        correct = sum((model(test_x[i:i + 1000]).argmax(1) == test_y[i:i + 1000]).sum().item()
                      for i in range(0, len(test_y), 1000))
    summary["test_accuracy"] = correct / len(test_y)
    if args.profile > 0:
        model.train()
        batch = order[:args.batch_size]
        summary["kernels_per_step"], summary["host_ms_per_step"] = profile_steps(
            step, x[batch], y[batch], args.profile)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
