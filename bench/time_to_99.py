#!/usr/bin/env python3
"""Time to 99% test accuracy on MNIST: configs/mnist99.conf against the same recipe in Python.

For each seed it runs, interleaved (the order of the programs alternating from seed to seed):
mnist_ddp --config configs/mnist99.conf on 2 ranks x 1 thread and on 1 rank x 2 threads, and
bench/python/recipe99.py (the recipe in PyTorch: DDP over gloo, data pre-loaded as tensors) on
2 ranks x 1 thread, all on the real MNIST of data/mnist, all stopping at the first evaluation
(every 50 steps) at 99%. It writes a Markdown table (per seed: test accuracy where the run
stopped, training seconds to 99% without the evaluations, training images/s; then the mean,
the lowest accuracy, ours against Python, and where mnist_ddp's rank 0 spent its training time)
with the machine, the date and the command.

With --whole-epoch it measures the recipe's accuracy instead: mnist_ddp and Python on 2 ranks x
1 thread train the whole epoch without stopping at 99% and evaluate once, at its end; the table
(bench/final_accuracy.md) gives each seed's final test accuracy, their mean, deviation and lowest,
and the mean of the per-seed differences with its standard error: whether the two trainers reach
the same accuracy, beyond seed noise.

Usage: bench/time_to_99.py [--build build] [--seeds 5] [--whole-epoch] [--out FILE]
"""
import argparse
import dataclasses
import datetime
import json
import os
import statistics
import sys
import tempfile

# run_bench is found beside this script, the first place Python looks for a script's imports.
from run_bench import PYTHON, ROOT, free_port, launch, machine, python_torch, write_atomically

RECIPE = os.path.join(ROOT, "configs/mnist99.conf")
PY_RECIPE = os.path.join(ROOT, "bench/python/recipe99.py")
DATA = os.path.join(ROOT, "data/mnist")
TARGET = 0.99


@dataclasses.dataclass(frozen=True)
class Setting:
    """One column group of the table: a program on a layout."""
    label: str
    ranks: int
    threads: int
    python: bool = False

    def mpirun_options(self):
        # mpirun binds each of up to two ranks to one core: a rank's threads need as many.
        return ("--map-by", f"slot:PE={self.threads}") if self.threads > 1 else ()


SETTINGS = (Setting("mnist_ddp, 2 ranks x 1 thread", 2, 1),
            Setting("PyTorch, 2 ranks x 1 thread", 2, 1, python=True),
            Setting("mnist_ddp, 1 rank x 2 threads", 1, 2))


PHASES = ("data", "forward", "backward", "comm_wait", "optimizer")


@dataclasses.dataclass
class Outcome:
    accuracy: float        # test accuracy at the evaluation where the run stopped
    seconds: float | None  # training seconds to the target; None when not reached
    images_per_sec: float
    phases: dict | None = None  # mnist_ddp: rank 0's seconds per phase, and "train"


def run(binary, setting, seed, workdir, whole_epoch):
    """One run to the target (or, whole_epoch, to the epoch's end, evaluating there only); its
    outcome from the metrics summary (ours) or the JSON line."""
    phases = None
    if setting.python:
        no_target = ["--target", "0", "--eval-every", "0"] if whole_epoch else []
        stdout, _, _ = launch(setting.ranks, [PYTHON, PY_RECIPE, "--data-dir", DATA,
                                              "--seed", str(seed), "--threads",
                                              str(setting.threads), "--master-port",
                                              str(free_port()), *no_target], workdir)
        summary = json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])
    else:
        metrics = os.path.join(workdir, "metrics.jsonl")
        no_target = ["--target-accuracy", "0", "--eval-every", "0"] if whole_epoch else []
        launch(setting.ranks, [binary, "--config", RECIPE, "--data-dir", DATA, "--seed",
                               str(seed), "--threads", str(setting.threads), "--progress", "off",
                               "--metrics-file", metrics, *no_target], workdir,
               setting.mpirun_options())
        records = [json.loads(line) for line in open(metrics)]
        summary = records[-1]
        epoch = [r for r in records if r.get("event") == "epoch"][-1]
        phases = {name: epoch["phases_rank0"][f"{name}_s"] for name in PHASES}
        phases["train"] = epoch["train_s"]
    return Outcome(summary["test_accuracy"],
                   summary["target_train_s"] if summary.get("target_reached") else None,
                   summary["train_images_per_sec"], phases)


def cell(outcome):
    seconds = f"{outcome.seconds:.2f}" if outcome.seconds is not None else "not reached"
    return f"{100 * outcome.accuracy:.2f}% | {seconds} | {outcome.images_per_sec:,.0f}"


def summary_cells(outcomes):
    """Mean accuracy (lowest), mean seconds over the seeds that reached it (how many), img/s."""
    accuracies = [o.accuracy for o in outcomes]
    seconds = [o.seconds for o in outcomes if o.seconds is not None]
    mean_seconds = f"{statistics.mean(seconds):.2f} ({len(seconds)}/{len(outcomes)})" \
        if seconds else f"not reached (0/{len(outcomes)})"
    return (f"{100 * statistics.mean(accuracies):.2f}% (lowest {100 * min(accuracies):.2f}%) | "
            f"{mean_seconds} | {statistics.mean(o.images_per_sec for o in outcomes):,.0f}")


def table(results, seeds):
    header = "| seed | " + " | ".join(f"{s.label}: accuracy | s to 99% | img/s"
                                      for s in SETTINGS) + " |"
    lines = [header, "|" + "---|" * (1 + 3 * len(SETTINGS))]
    for seed in seeds:
        lines.append(f"| {seed} | " + " | ".join(cell(results[(s, seed)]) for s in SETTINGS) + " |")
    means = [summary_cells([results[(s, seed)] for seed in seeds]) for s in SETTINGS]
    lines.append("| mean | " + " | ".join(means) + " |")
    return lines


def comparison(results, seeds):
    """Ours (2 ranks x 1 thread) against Python: time to 99% and images/s, as ratios."""
    ours, python = SETTINGS[0], SETTINGS[1]
    both = [seed for seed in seeds
            if results[(ours, seed)].seconds is not None
            and results[(python, seed)].seconds is not None]
    speed = statistics.mean(results[(ours, s)].images_per_sec for s in seeds) / \
        statistics.mean(results[(python, s)].images_per_sec for s in seeds)
    line = f"{ours.label} against {python.label}: {speed:.2f}x the images/s"
    if both:
        time_ratio = statistics.mean(results[(python, s)].seconds for s in both) / \
            statistics.mean(results[(ours, s)].seconds for s in both)
        line += f"; {time_ratio:.2f}x faster to 99% over the {len(both)} seeds both reached it"
    return line + "."


def phase_shares(results, seeds):
    """Where mnist_ddp's rank 0 spent its training time, per layout, mean shares over seeds."""
    lines = []
    for setting in (s for s in SETTINGS if not s.python):
        runs = [results[(setting, seed)].phases for seed in seeds]
        shares = {name: statistics.mean(run[name] / run["train"] for run in runs)
                  for name in PHASES}
        shares["other"] = 1 - sum(shares.values())
        lines.append(f"{setting.label}, rank 0's training time: " + ", ".join(
            f"{name.replace('_', ' ')} {100 * share:.0f}%" for name, share in shares.items())
            + ".")
    return lines


def final_accuracy_table(results, seeds, settings):
    """Per seed, each trainer's final accuracy and images/s; then mean +- deviation (lowest, how
    many reached 99%), and the per-seed differences, ours minus Python, with their standard
    error."""
    header = "| seed | " + " | ".join(f"{s.label}: final accuracy | img/s" for s in settings) + " |"
    lines = [header, "|" + "---|" * (1 + 2 * len(settings))]
    for seed in seeds:
        lines.append(f"| {seed} | " + " | ".join(
            f"{100 * results[(s, seed)].accuracy:.2f}% | {results[(s, seed)].images_per_sec:,.0f}"
            for s in settings) + " |")
    cells = []
    for setting in settings:
        accuracies = [100 * results[(setting, seed)].accuracy for seed in seeds]
        at_target = sum(a >= 100 * TARGET for a in accuracies)
        speed = statistics.mean(results[(setting, seed)].images_per_sec for seed in seeds)
        cells.append(f"{statistics.mean(accuracies):.3f}% +- {statistics.stdev(accuracies):.3f} "
                     f"(lowest {min(accuracies):.2f}%, {at_target}/{len(seeds)} at "
                     f"{100 * TARGET:.0f}%) | {speed:,.0f}")
    lines.append("| mean | " + " | ".join(cells) + " |")
    ours, python = settings
    differences = [100 * (results[(ours, s)].accuracy - results[(python, s)].accuracy)
                   for s in seeds]
    error = statistics.stdev(differences) / len(differences) ** 0.5
    lines += ["", f"{ours.label} minus {python.label}, per seed: mean "
              f"{statistics.mean(differences):+.3f} points, standard error {error:.3f}."]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--whole-epoch", action="store_true",
                        help="final accuracy of the whole epoch, ours against Python")
    parser.add_argument("--out")
    args = parser.parse_args()
    out = args.out or os.path.join(
        ROOT, "bench/final_accuracy.md" if args.whole_epoch else "bench/time_to_99.md")
    settings = SETTINGS[:2] if args.whole_epoch else SETTINGS
    binary = os.path.join(args.build, "mnist_ddp")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: build the program first (scripts/setup.sh)")
    torch_line = python_torch()  # "torch 1.13.0a0, ..." (the rest is about torchvision)
    if torch_line is None:
        sys.exit("python3-torch is not installed for /usr/bin/python3: apt-get install "
                 "python3-torch (the Python side is the point of this benchmark)")
    seeds = list(range(1, args.seeds + 1))
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for seed in seeds:
            for setting in settings if seed % 2 else settings[::-1]:
                outcome = run(binary, setting, seed, workdir, args.whole_epoch)
                results[(setting, seed)] = outcome
                print(f"seed {seed}: {setting.label:32} {cell(outcome)}", flush=True)
    command = "bench/time_to_99.py" + (f" --seeds {args.seeds}" if args.seeds != 5 else "") + \
        (" --whole-epoch" if args.whole_epoch else "")
    header = [f"Machine: {machine()}.",
              f"Python: bench/python/recipe99.py on Debian's {torch_line.split(',')[0]}."]
    run_line = f"Run: {datetime.date.today().isoformat()}, `{command}`; "
    if args.whole_epoch:
        text = "\n".join([
            *header,
            run_line + "real MNIST, configs/mnist99.conf and its Python twin on 2 ranks x 1 "
            "thread, each training the whole epoch (no stop at the target) and evaluating once, "
            "at its end.", "",
            *final_accuracy_table(results, seeds, settings), ""])
    else:
        text = "\n".join([
            *header,
            run_line + "real MNIST (60,000 training, "
            f"10,000 test images), configs/mnist99.conf and its Python twin, stopping at the first "
            f"evaluation (every 50 steps) at {100 * TARGET:.0f}%; seconds are training time to it, "
            "evaluations excluded.", "", *table(results, seeds), "",
            comparison(results, seeds), *phase_shares(results, seeds), ""])
    write_atomically(out, text)
    print(text)


if __name__ == "__main__":
    main()
