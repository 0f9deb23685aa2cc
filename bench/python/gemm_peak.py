#!/usr/bin/python3
"""One core's float32 GEMM peak through PyTorch (the BLAS that LibTorch uses), in GFLOP/s.

Multiplies square float32 matrices of a few sizes with one intra-op thread, best of several
tries each, and prints one JSON line: {"gflops": {size: GFLOP/s}, "best_gflops": ...}.
Run it with Debian's interpreter, which has python3-torch: /usr/bin/python3.

Usage: gemm_peak.py [SIZE ...]   (default 512 1024 1536 2048)
"""
import json
import sys
import time

import torch


def gemm_gflops(size, seconds=0.5):
    """Best GFLOP/s of size x size float32 matrix products over about `seconds` of tries."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    out = torch.empty(size, size)
    torch.mm(a, b, out=out)  # warm up: page in, pick the kernel
    best = float("inf")
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or best == float("inf"):
        start = time.perf_counter()
        torch.mm(a, b, out=out)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


def main():
    torch.set_num_threads(1)
    sizes = [int(arg) for arg in sys.argv[1:]] or [512, 1024, 1536, 2048]
    gflops = {size: gemm_gflops(size) for size in sizes}
    print(json.dumps({"gflops": gflops, "best_gflops": max(gflops.values()),
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
