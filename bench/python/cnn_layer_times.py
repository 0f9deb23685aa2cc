#!/usr/bin/python3
"""The cnn's GEMM-class layers timed alone: conv2 and fc1, forward and backward, at batch 64.

One intra-op thread, channels-last convolutions as lib/model/cnn_net.cpp runs them, median of
several tries; prints GFLOP/s per layer and pass, and the milliseconds they add up to per step.
Run it with Debian's interpreter, which has python3-torch (the same LibTorch and oneDNN as
mnist_ddp): /usr/bin/python3 bench/python/cnn_layer_times.py [--bf16]; --bf16 times the same
layers on bfloat16 tensors, as autocast runs them.
"""
import argparse
import statistics
import time

import torch

BATCH = 64


def median_ms(function, tries=7, repeats=10):
    """Median over `tries` of the mean milliseconds of `repeats` calls, after a warm-up."""
    for _ in range(3):
        function()
    times = []
    for _ in range(tries):
        start = time.perf_counter()
        for _ in range(repeats):
            function()
        times.append((time.perf_counter() - start) / repeats * 1e3)
    return statistics.median(times)


def forward_and_backward(make_output, inputs, upstream):
    """(forward ms, backward ms) of make_output(*inputs) and its gradients for all inputs."""
    with torch.no_grad():
        forward = median_ms(lambda: make_output(*inputs))
    both = median_ms(lambda: torch.autograd.grad(make_output(*inputs), inputs, upstream))
    return forward, both - forward


def report(name, forward_macs, forward_ms, backward_ms):
    """Prints one layer's line; a backward computes input and weight gradients: twice the MACs."""
    flop = 2 * forward_macs * BATCH
    print(f"{name:6s} forward {forward_ms:6.2f} ms {flop / forward_ms / 1e6:6.0f} GFLOP/s   "
          f"backward {backward_ms:6.2f} ms {2 * flop / backward_ms / 1e6:6.0f} GFLOP/s")
    return forward_ms + backward_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bf16", action="store_true", help="bfloat16 tensors instead of float32")
    dtype = torch.bfloat16 if parser.parse_args().bf16 else torch.float32
    torch.set_num_threads(1)
    channels_last = torch.channels_last

    def tensor(*shape):
        return torch.randn(*shape, dtype=dtype)

    conv_in = tensor(BATCH, 32, 26, 26).contiguous(memory_format=channels_last)
    conv_weight = tensor(64, 32, 3, 3).contiguous(memory_format=channels_last)
    conv_inputs = [t.requires_grad_() for t in (conv_in, conv_weight, tensor(64))]
    conv_upstream = tensor(BATCH, 64, 24, 24).contiguous(memory_format=channels_last)
    conv = forward_and_backward(torch.nn.functional.conv2d, conv_inputs, conv_upstream)

    fc_inputs = [tensor(*shape).requires_grad_() for shape in ((BATCH, 9216), (128, 9216), (128,))]
    fc = forward_and_backward(torch.nn.functional.linear, fc_inputs, tensor(BATCH, 128))

    total = report("conv2", 64 * 32 * 9 * 24 * 24, *conv) + report("fc1", 9216 * 128, *fc)
    print(f"together {total:.1f} ms per step of {BATCH} images, {dtype}")


if __name__ == "__main__":
    main()
