#!/usr/bin/env python3
"""Where the two ranks' time goes on a 2-core machine: each rank's compute and wait, by placement.

Trains `configs/mnist99-sure.conf` on the real MNIST for --steps steps, 2 ranks x 1 thread, with
the ranks bound by mpirun (its default: rank r on core r), unbound, pinned by taskset to core r,
and pinned swapped (rank r on core 1 - r), interleaved for --runs rounds. From each run's
--timeline it sums every rank's phases: compute (data, forward, backward, optimizer) and comm
wait, and the step time of the slower rank; it prints the medians as a Markdown table with the
machine, commit and BLAS core above it.

    bench/rank_balance.py [--build build] [--runs 12] [--steps 300] [--out FILE]
"""
import argparse
import collections
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

from run_bench import MPI_ENV, ROOT, machine, provenance, write_atomically

PHASES = ("data", "forward", "backward", "comm_wait", "optimizer")
PLACEMENTS = {
    "bound by mpirun (its default)": ([], ""),
    "unbound": (["--bind-to", "none"], ""),
    "taskset: rank r on core r": (["--bind-to", "none"], "$OMPI_COMM_WORLD_RANK"),
    "taskset: rank r on core 1 - r": (["--bind-to", "none"], "$((1 - OMPI_COMM_WORLD_RANK))"),
}


def run(binary, steps, placement, timeline):
    """One training run; each rank's (compute seconds, comm wait seconds) from its timeline."""
    options, core = PLACEMENTS[placement]
    argv = [binary, "--config", os.path.join(ROOT, "configs/mnist99-sure.conf"), "--data-dir",
            os.path.join(ROOT, "data/mnist"), "--threads", "1", "--target-accuracy", "0",
            "--eval-every", "0", "--max-steps", str(steps), "--progress", "off", "--timeline",
            timeline]
    command = ["mpirun", "-np", "2", *options, *argv] if not core else [
        "mpirun", "-np", "2", *options, "sh", "-c", f"exec taskset -c {core} {shlex.join(argv)}"]
    subprocess.run(command, env=MPI_ENV, capture_output=True, check=True)
    events = json.load(open(timeline))
    events = events["traceEvents"] if isinstance(events, dict) else events
    sums = collections.defaultdict(collections.Counter)
    for event in events:
        if event.get("ph") == "X" and event["name"] in PHASES:
            sums[event["pid"]][event["name"]] += event["dur"] / 1e6
    return [(sum(sums[r].values()) - sums[r]["comm_wait"], sums[r]["comm_wait"])
            for r in sorted(sums)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--out")
    args = parser.parse_args()
    binary = os.path.join(args.build, "mnist_ddp")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: build the program first (scripts/setup.sh)")
    results = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as work:
        for round_ in range(args.runs):
            for placement in PLACEMENTS:
                ranks = run(binary, args.steps, placement, os.path.join(work, "timeline.json"))
                results[placement].append(ranks)
                print(f"round {round_ + 1}: {placement:30} " + "; ".join(
                    f"rank {r}: compute {c:.2f} s, wait {w:.2f} s"
                    for r, (c, w) in enumerate(ranks)), flush=True)
    lines = [f"Machine: {machine()}.", provenance(binary),
             f"Run: {datetime.date.today().isoformat()}, "
             f"`{shlex.join(['bench/rank_balance.py', *sys.argv[1:]])}`; configs/mnist99-sure.conf "
             f"on the real MNIST, {args.steps} steps, 2 ranks x 1 thread, {args.runs} interleaved "
             "rounds, medians. Compute: data, forward, backward and optimizer phases; wait: comm "
             "wait (the allreduce's end and the other rank); step time: the slower rank's sum.", "",
             "| placement | rank 0 compute s | rank 1 compute s | rank 0 wait | rank 1 wait | "
             "step time s |", "|---|---:|---:|---:|---:|---:|"]
    for placement, runs in results.items():
        def median(pick):
            return statistics.median(pick(ranks) for ranks in runs)
        share = [median(lambda ranks, r=r: ranks[r][1] / sum(ranks[r])) for r in (0, 1)]
        lines.append(f"| {placement} | {median(lambda ranks: ranks[0][0]):.2f} | "
                     f"{median(lambda ranks: ranks[1][0]):.2f} | {100 * share[0]:.1f}% | "
                     f"{100 * share[1]:.1f}% | "
                     f"{median(lambda ranks: max(sum(ranks[0]), sum(ranks[1]))):.2f} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        write_atomically(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
