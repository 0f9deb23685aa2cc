#!/usr/bin/python3
"""The classic PyTorch DDP MNIST tutorial, as the baseline that bench/run_bench.py compares with.

Faithful to the tutorial: a map-style Dataset whose __getitem__ converts ONE image at a time
(torchvision's MNIST way: PIL image, ToTensor, Normalize((0.1307,), (0.3081,)); hand-written
equivalents when torchvision is missing), a DataLoader (batch 64, no worker processes, as the
PyTorch MNIST example on CPU) over a DistributedSampler with set_epoch, DistributedDataParallel
over gloo (over NCCL with --device cuda, each batch copied to the GPU), SGD. The models are
mnist_ddp's (lib/model/*.cpp); the loss is cross-entropy on the logits (log_softmax + nll_loss,
as in the example).

It reads the same IDX files as mnist_ddp (raw or .gz) from --data-dir and runs under
`mpirun -np N` (rank and world size from OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE, or
RANK / WORLD_SIZE as torchrun sets them), rendezvous at MASTER_ADDR (default 127.0.0.1) and
--master-port. Rank 0 prints one final JSON line, like mnist_ddp's metrics summary:
train_images_per_sec (all ranks; training loop only: first step to end of epoch), train_s,
data_s (rank 0's time waiting for the DataLoader), startup_s (process start to the first training
step, rank 0), test_accuracy (rank 0 alone evaluates the whole test set, untimed).

With --preloaded it is no longer the tutorial but Python at its plainest: the training split
normalized once into one tensor before the clock, each batch taken from it by index_select in the
DistributedSampler's order (as mnist_ddp and recipe99.py take theirs), no DataLoader.

Run it with Debian's interpreter, which has python3-torch: /usr/bin/python3.
"""
import argparse
import gzip
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

try:
    from PIL import Image
except ImportError:  # without torchvision (which needs PIL) the transform takes numpy images
    Image = None

MEAN, STD = 0.1307, 0.3081


def seconds_since_process_start():
    """Seconds since the kernel created this process (as mnist_ddp measures its own start-up)."""
    with open("/proc/self/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time in clock ticks
    return time.clock_gettime(time.CLOCK_BOOTTIME) - started


def read_idx(path):
    """An IDX file (raw, or gzipped as path + '.gz') as a numpy uint8 array of its dimensions."""
    opener, name = (open, path) if os.path.exists(path) else (gzip.open, path + ".gz")
    with opener(name, "rb") as file:
        data = file.read()
    if data[:3] != b"\0\0\x08":
        raise ValueError(f"{name}: not an IDX file of unsigned bytes")
    rank = data[3]
    shape = tuple(int(n) for n in np.frombuffer(data, ">u4", count=rank, offset=4))
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(shape)


def load_split(data_dir, prefix):
    """(images N x 28 x 28 uint8, labels N int64) of the 'train' or 't10k' files."""
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte")).astype(np.int64)
    return images, labels


class ToTensor:
    """torchvision.transforms.ToTensor for a uint8 H x W image: float 1 x H x W in [0, 1]."""

    def __call__(self, image):
        return torch.from_numpy(np.array(image, copy=True)).unsqueeze(0).float().div(255)


class Normalize:
    """torchvision.transforms.Normalize for one channel: (x - mean) / std."""

    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, tensor):
        return tensor.sub_(self.mean).div_(self.std)


class Compose:
    """torchvision.transforms.Compose: the transforms one after the other."""

    def __init__(self, *steps):
        self.steps = steps

    def __call__(self, image):
        for step in self.steps:
            image = step(image)
        return image


def make_transform(kind):
    """The tutorial's per-image transform, and whether it takes PIL images (torchvision's).

    kind: 'torchvision', 'numpy' (the hand-written equivalents) or 'auto' (torchvision if present).
    """
    if kind != "numpy":
        try:
            from torchvision import transforms
            return transforms.Compose([transforms.ToTensor(),
                                       transforms.Normalize((MEAN,), (STD,))]), True
        except ImportError:
            if kind == "torchvision":
                raise
    return Compose(ToTensor(), Normalize(MEAN, STD)), False


class IdxMnist(Dataset):
    """MNIST-format images and labels, converted one image at a time as torchvision's MNIST."""

    def __init__(self, images, labels, transform="auto"):
        self.images, self.labels = images, labels
        self.transform, self.pil = make_transform(transform)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image = self.images[index]
        if self.pil:  # torchvision.datasets.MNIST hands its transform a PIL image (mode L)
            image = Image.fromarray(image)
        return self.transform(image), int(self.labels[index])


class Linear(nn.Module):
    """784 -> 10, as lib/model/linear_net.cpp."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(28 * 28, 10)

    def forward(self, x):
        return self.fc(torch.flatten(x, 1))


class Cnn(nn.Module):
    """PyTorch's MNIST example network, as lib/model/cnn_net.cpp."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(self.dropout1(x), 1)
        x = F.relu(self.fc1(x))
        return self.fc2(self.dropout2(x))


class Mlp(nn.Module):
    """784 -> 256 -> 128 -> 10 with ReLU, as lib/model/mlp_net.cpp."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc3(F.relu(self.fc2(x)))


MODELS = {"linear": Linear, "mlp": Mlp, "cnn": Cnn}


class PreloadedBatches:
    """The shard's batches from the split normalized once into one tensor, by index_select."""

    def __init__(self, images, labels, sampler, batch_size):
        self.images = torch.tensor(images).float().div_(255).sub_(MEAN).div_(STD).unsqueeze_(1)
        self.labels = torch.tensor(labels)
        self.sampler, self.batch_size = sampler, batch_size

    def __iter__(self):
        for batch in torch.tensor(list(self.sampler)).split(self.batch_size):
            yield self.images.index_select(0, batch), self.labels.index_select(0, batch)


def world_from_environment():
    """(rank, world size) from Open MPI's variables, else torchrun's, else a single process."""
    for rank_name, size_name in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                                 ("RANK", "WORLD_SIZE")):
        if rank_name in os.environ:
            return int(os.environ[rank_name]), int(os.environ[size_name])
    return 0, 1


def train_epoch(model, loader, optimizer, device):
    """One pass over this rank's shard: (training seconds, seconds waiting for the loader).

    On a GPU each batch is copied there, as the tutorial does; the epoch ends when the GPU is done.
    """
    model.train()
    start = mark = time.perf_counter()
    waiting = 0.0
    for images, labels in loader:
        waiting += time.perf_counter() - mark
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        mark = time.perf_counter()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start, waiting


def test_accuracy(model, loader, device):
    """Share of the loader's images that the model classifies correctly."""
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images.to(device)).argmax(1) == labels.to(device)).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="data/mnist")
    parser.add_argument("--model", choices=sorted(MODELS), default="linear")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--test-batch-size", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--transform", choices=("auto", "torchvision", "numpy"), default="auto",
                        help="per-image ToTensor + Normalize: torchvision's or hand-written")
    parser.add_argument("--preloaded", action="store_true",
                        help="batches by index_select from the split normalized once")
    parser.add_argument("--master-port", default=os.environ.get("MASTER_PORT", "29500"))
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: each rank on GPU local rank %% visible GPUs, DDP over NCCL")
    args = parser.parse_args()

    rank, world = world_from_environment()
    device = torch.device("cpu")
    if args.device == "cuda":
        local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ.get("LOCAL_RANK", 0)))
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(args.master_port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # one host: loopback, whatever the hostname
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank,
                            world_size=world)

    train_split = load_split(args.data_dir, "train")
    train_set = IdxMnist(*train_split, args.transform)
    sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, seed=args.seed)
    loader = (PreloadedBatches(*train_split, sampler, args.batch_size) if args.preloaded
              else DataLoader(train_set, batch_size=args.batch_size, sampler=sampler))
    model = DistributedDataParallel(MODELS[args.model]().to(device),
                                    device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    startup_s = seconds_since_process_start()
    train_s = data_s = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        seconds, waiting = train_epoch(model, loader, optimizer, device)
        train_s += seconds
        data_s += waiting

    if rank == 0:
        test_set = IdxMnist(*load_split(args.data_dir, "t10k"), args.transform)
        accuracy = test_accuracy(model.module, DataLoader(test_set, args.test_batch_size), device)
        images = len(sampler) * world * args.epochs  # padded to a multiple of the world size
        print(json.dumps({"event": "summary", "train_images_per_sec": images / train_s,
                          "train_s": train_s, "data_s": data_s, "startup_s": startup_s,
                          "test_accuracy": accuracy, "images": images, "world_size": world,
                          "model": args.model, "threads": args.threads, "device": str(device),
                          "per_image_transform": "none (preloaded)" if args.preloaded
                          else "torchvision" if train_set.pil else "numpy"}),
              flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
