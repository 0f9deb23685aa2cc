#!/usr/bin/python3
"""A best-effort PyTorch eager training loop on one GPU, the baseline a careful PyTorch user writes.

The whole data set is uploaded once and normalised there (no DataLoader); each epoch draws one
permutation on the GPU and each batch is an index into it; SGD (or Adam) with its multi-tensor
(foreach) kernels, gradients set to None between steps. The models are ddp_tutorial.py's and
recipe99.py's (mnist_ddp's networks). cuDNN's and cuBLAS's set-up and the kernels' loading are
paid before the clock starts, by one scratch forward and backward pass, as mnist_ddp pays them.
The epoch is timed from its first step until the GPU is done with its last.

    python3 bench/python/gpu_loop.py --model cnn --data-dir data/mnist [--profile 20]

With --profile N it also runs N more steps under torch.profiler and reports the CUDA kernels and
the host time per step. It prints one JSON line: {"event": "summary", "train_images_per_sec",
"train_s", "epoch_images_per_sec" (each epoch's), "test_accuracy", "steps", "kernels_per_step",
"host_ms_per_step", ...}.
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F

from ddp_tutorial import MEAN, MODELS, STD, load_split
from recipe99 import FastCnn, pay_one_time_costs


def on_gpu(images, labels, device):
    """uint8 N x 28 x 28 and labels as normalised float N x 1 x 28 x 28 and int64, on `device`."""
    x = torch.from_numpy(images.copy()).to(device).float().div_(255).sub_(MEAN).div_(STD)
    return x.unsqueeze(1), torch.from_numpy(labels.astype("int64")).to(device)


def step(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    optimizer.step()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="data/mnist")
    parser.add_argument("--model", choices=sorted(MODELS) + ["fastcnn"], default="cnn")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="then N more steps under torch.profiler: kernels and host time")
    args = parser.parse_args()

    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    x, y = on_gpu(*load_split(args.data_dir, "train"), device)
    test_x, test_y = on_gpu(*load_split(args.data_dir, "t10k"), device)
    network = FastCnn if args.model == "fastcnn" else MODELS[args.model]
    model = network().to(device)
    if args.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, foreach=True)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                    foreach=True)
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)

    pay_one_time_costs(network, args.batch_size, device)
    model.train()
    epoch_s, steps = [], 0
    for _ in range(args.epochs):
        order = torch.randperm(len(y), device=device, generator=generator)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for first in range(0, len(y), args.batch_size):
            batch = order[first:first + args.batch_size]
            step(model, optimizer, x[batch], y[batch])
            steps += 1
        torch.cuda.synchronize()
        epoch_s.append(time.perf_counter() - start)

    train_s = sum(epoch_s)
    summary = {"event": "summary", "model": args.model, "batch_size": args.batch_size,
               "train_images_per_sec": len(y) * args.epochs / train_s, "train_s": train_s,
               "epoch_images_per_sec": [len(y) / s for s in epoch_s], "steps": steps,
               "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    if args.profile > 0:
        from torch.profiler import ProfilerActivity, profile
        batch = order[:args.batch_size]
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(args.profile):
                step(model, optimizer, x[batch], y[batch])
            host_s = time.perf_counter() - start
            torch.cuda.synchronize()
        kernels = sum(1 for e in prof.events() if e.device_type.name == "CUDA")
        summary["kernels_per_step"] = kernels / args.profile
        summary["host_ms_per_step"] = 1000 * host_s / args.profile

    model.eval()
    with torch.no_grad():
        correct = sum((model(test_x[i:i + 1000]).argmax(1) == test_y[i:i + 1000]).sum().item()
                      for i in range(0, len(test_y), 1000))
    summary["test_accuracy"] = correct / len(test_y)
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
