#!/usr/bin/env python3
"""Time to 99% test accuracy on MNIST: a 99% recipe against the same recipe in PyTorch.

For each seed it runs, interleaved (the programs' order reversed from one seed to the next),
every program on 2 ranks x 1 thread on the real MNIST of data/mnist, each stopping at the first
evaluation (every 50 steps) at 99%:

- mnist_ddp --config RECIPE (default configs/mnist99-sure.conf), built against Debian 12's
  LibTorch 1.13 (--build);
- bench/python/recipe99.py, the recipe in PyTorch (DDP over gloo, data pre-loaded as tensors), on
  Debian 12's torch 1.13, eager;
- with --root DIR, a Debian 13 root file system prepared by scripts/test_libtorch2.sh (LibTorch
  2.x, mnist_ddp built against it in DIR/build) with python3-torch and python3-setuptools: there
  mnist_ddp on LibTorch 2.x and recipe99.py on torch 2.x as --variant channels-last (with fused
  Adam) and --variant compile (compile time apart);
- with --bf16, instead: mnist_ddp in fp32 and with --precision bf16 on each LibTorch, and the
  channels-last twin under bf16 autocast.

It writes a Markdown table: per program, the seeds that reached 99%, the median and mean training
seconds to it (evaluations excluded), the lowest accuracy where a run stopped, images/s and the
GFLOP/s per core with its share of one core's measured float32 GEMM peak; then every seed's
seconds, each mnist_ddp build against the fastest PyTorch, and where mnist_ddp's rank 0 spent its
training time. Runs in the root need root (chroot and bind mounts).

With --whole-epoch it measures the recipe's accuracy instead: mnist_ddp and the first Python
twin train every epoch without stopping at 99% and evaluate once, at the end; the table
(bench/final_accuracy.md) gives each seed's final test accuracy, their mean, deviation and lowest,
and the mean of the per-seed differences with its standard error.

Usage: bench/time_to_99.py [--build build] [--root DIR] [--bf16] [--config FILE] [--seeds 10]
                           [--whole-epoch] [--out FILE]
"""
import argparse
import contextlib
import dataclasses
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

# run_bench is found beside this script, the first place Python looks for a script's imports.
from run_bench import GEMM_PEAK, MPI_ENV, PYTHON, ROOT, blas_core, free_port, gemm_peak, \
    machine, on_blas_core, provenance, python_torch, write_atomically

DATA = os.path.join(ROOT, "data/mnist")
TARGET = 0.99
PHASES = ("data", "forward", "backward", "comm_wait", "optimizer")
# Inside the root: the sources, the data and the LibTorch 2.x build where test_libtorch2.sh
# leaves them.
ROOT_ENV = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8",
            "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "USE_LIBUV=0"]
ROOT_MOUNTS = ("proc", "sys", "dev", "dev/pts", "dev/shm")


def fastcnn_macs():
    """(layer, multiply-adds per image) of the fastcnn's forward pass, from its shapes."""
    return [("conv1", 24 * 24 * 24 * 5 * 5), ("conv2", 10 * 10 * 32 * 24 * 3 * 3),
            ("fc1", 800 * 256), ("fc2", 256 * 10)]


def train_flops():
    """Model FLOP per training image, the dense definition (the same for every program): 2 per
    multiply-add, forward and weight gradient for every layer, and the input gradient for all but
    conv1 (the images need none)."""
    macs = dict(fastcnn_macs())
    return 2 * (3 * sum(macs.values()) - macs["conv1"])


def winners_only():
    """Whether mnist_ddp's backward of conv1 and conv2 multiplies only through each pooling
    window's winner here: its AVX-512 kernels, which need AVX-512F."""
    return " avx512f" in open("/proc/cpuinfo").read()


def executed_flops(python):
    """FLOP per training image that the Python twin (`python`) or mnist_ddp executes: the
    model's, but for mnist_ddp's winners-only backward, where conv1's weight gradient and conv2's
    weight and input gradients take a quarter of the dense multiply-adds (Note [Backward through
    the pooling's winners])."""
    macs = dict(fastcnn_macs())
    if python or not winners_only():
        return train_flops()
    return 2 * (sum(macs.values()) + macs["conv1"] / 4 + 2 * macs["conv2"] / 4
                + 2 * (macs["fc1"] + macs["fc2"]))


@dataclasses.dataclass(frozen=True)
class Place:
    """Where programs run: this system, or a root file system entered with chroot."""
    root: str | None = None

    def path(self, inside):
        """A path as seen from this system, given as seen by the programs."""
        return inside if self.root is None else self.root + inside

    def command(self, argv):
        return argv if self.root is None else ["chroot", self.root, *ROOT_ENV, *argv]


@dataclasses.dataclass(frozen=True)
class Program:
    """One row of the table: mnist_ddp or the Python twin, in a place, with its settings."""
    label: str
    place: Place
    python: bool = False
    variant: str = "eager"
    bf16: bool = False
    env: tuple = ()  # (name, value) pairs added to its environment


@dataclasses.dataclass
class Outcome:
    accuracy: float        # test accuracy at the evaluation where the run stopped
    seconds: float | None  # training seconds to the target; None when not reached
    images_per_sec: float
    phases: dict | None = None     # mnist_ddp: rank 0's seconds per phase, and "train"
    compile_s: float | None = None  # torch.compile's seconds before the clock
    library: str | None = None      # Python: "torch 2.6.0, AVX512"


def recipe_epochs(config):
    """The recipe's `epochs = N` line (the Python twin takes it as --epochs)."""
    for line in open(config):
        name, _, value = line.partition("=")
        if name.strip() == "epochs":
            return int(value)
    return 1


class Runner:
    """Runs programs on 2 ranks x 1 thread with the recipe, here or in the root."""

    def __init__(self, build, root, config):
        self.binaries = {Place(): os.path.join(build, "mnist_ddp")}
        self.sources = {Place(): ROOT}
        self.config = os.path.relpath(config, ROOT)
        self.epochs = recipe_epochs(config)
        if root:
            self.binaries[Place(root)] = "/build/mnist_ddp"
            self.sources[Place(root)] = "/src"

    def run(self, program, seed, whole_epoch):
        place, source = program.place, self.sources[program.place]
        data = os.path.join(source, "data/mnist")
        workdir = tempfile.mkdtemp(dir=place.path("/tmp"))
        inside = workdir[len(place.root or ""):]
        if program.python:
            no_target = ["--target", "0", "--eval-every", "0"] if whole_epoch else []
            argv = [PYTHON, os.path.join(source, "bench/python/recipe99.py"),
                    "--data-dir", data, "--seed", str(seed), "--threads", "1",
                    "--epochs", str(self.epochs), "--variant", program.variant,
                    "--master-port", str(free_port()), *no_target]
        else:
            no_target = ["--target-accuracy", "0", "--eval-every", "0"] if whole_epoch else []
            argv = [self.binaries[place], "--config", os.path.join(source, self.config),
                    "--data-dir", data, "--seed", str(seed), "--threads", "1", "--progress",
                    "off", "--metrics-file", os.path.join(inside, "metrics.jsonl"), *no_target]
        if program.bf16:
            argv += ["--precision", "bf16"]
        command = place.command(["mpirun", "-np", "2", *argv])
        done = subprocess.run(command, env=dict(MPI_ENV, **dict(program.env)), capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"failed ({done.returncode}): {shlex.join(command)}\n"
                     f"{done.stdout}{done.stderr}")
        library = None
        if program.python:
            summary = json.loads([line for line in done.stdout.splitlines()
                                  if line.startswith("{")][-1])
            phases = None
            library = f"torch {summary['torch']}, {summary['cpu_capability']}"
        else:
            records = [json.loads(line) for line in open(os.path.join(workdir, "metrics.jsonl"))]
            summary = records[-1]
            epochs = [r for r in records if r.get("event") == "epoch"]
            phases = {name: sum(e["phases_rank0"][f"{name}_s"] for e in epochs)
                      for name in PHASES}
            phases["train"] = sum(e["train_s"] for e in epochs)
        shutil.rmtree(workdir)
        return Outcome(summary["test_accuracy"],
                       summary["target_train_s"] if summary.get("target_reached") else None,
                       summary["train_images_per_sec"], phases, summary.get("compile_s"), library)

    def libtorch(self, place):
        """The LibTorch that mnist_ddp in `place` links: 'LibTorch 1.13.0'."""
        out = subprocess.run(place.command([self.binaries[place], "--version"]),
                             capture_output=True, text=True, check=True).stdout
        return " ".join(next(line for line in out.splitlines()
                             if line.startswith("LibTorch")).split())

    def gemm_peak(self, place):
        """One core's float32 GEMM GFLOP/s through the torch of `place`, on the OpenBLAS core that
        mnist_ddp runs there."""
        script = os.path.join(self.sources[place], os.path.relpath(GEMM_PEAK, ROOT))
        core = blas_core(place.command([self.binaries[place]]))
        return gemm_peak(place.command(on_blas_core(core, [PYTHON, script])))["best_gflops"]


@contextlib.contextmanager
def prepared_root(root):
    """The root's /proc, /sys and /dev bound, and this tree's bench/python, configs and data
    copied in, for as long as the runs last."""
    if root is None:
        yield
        return
    for folder in ("bench/python", "configs", "data/mnist"):
        shutil.copytree(os.path.join(ROOT, folder), os.path.join(root, "src", folder),
                        dirs_exist_ok=True)
    mounted = []
    try:
        for folder in ROOT_MOUNTS:
            target = os.path.join(root, folder)
            os.makedirs(target, exist_ok=True)
            subprocess.run(["mount", "--bind", f"/{folder}", target], check=True)
            mounted.append(target)
        yield
    finally:
        for target in reversed(mounted):
            subprocess.run(["umount", target], check=False)


def programs_of(root, bf16, whole_epoch, fallback):
    """torch 2.x runs channels-last only: Debian 13's oneDNN 3.7.2 gets float32 NCHW convolutions
    of 24 input channels wrong on AVX-512 (bench/README.md), so its eager NCHW twin is no
    benchmark; torch 1.13's is the recipe as written."""
    here, there = Place(), Place(root)
    programs = [Program("mnist_ddp, LibTorch 1.13", here)]
    if fallback:
        programs.append(Program("mnist_ddp, LibTorch 1.13, Prescott kept", here,
                                env=(("MNIST_DDP_SIMULATE_BLAS_FALLBACK", "uncorrected"),)))
    if root:
        programs.append(Program("mnist_ddp, LibTorch 2.x", there))
    programs.append(Program("PyTorch 1.13, eager", here, True))
    if root:
        programs += [Program(f"PyTorch 2.x, {variant}", there, True, variant)
                     for variant in ("channels-last", "compile")]
    if whole_epoch:
        return [programs[0], next(p for p in programs if p.python)]
    if bf16:
        programs = [Program("mnist_ddp, LibTorch 1.13", here),
                    Program("mnist_ddp, LibTorch 1.13, bf16", here, bf16=True)]
        if root:
            programs += [Program("mnist_ddp, LibTorch 2.x", there),
                         Program("mnist_ddp, LibTorch 2.x, bf16", there, bf16=True),
                         Program("PyTorch 2.x, channels-last, bf16", there, True,
                                 "channels-last", bf16=True)]
    return programs


def median_seconds(outcomes):
    seconds = [o.seconds for o in outcomes if o.seconds is not None]
    return statistics.median(seconds) if seconds else None


def seconds_cell(outcome):
    seconds = f"{outcome.seconds:.2f}" if outcome.seconds is not None else "not reached"
    return f"{seconds} ({100 * outcome.accuracy:.2f}%)"


def summary_table(results, programs, seeds, peak):
    lines = ["| program | on | seeds at 99% | median s to 99% | mean s | lowest accuracy | img/s | "
             "model GFLOP/s per core | executed GFLOP/s per core (of peak) | compile s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for program, library in programs.items():
        runs = [results[(program, seed)] for seed in seeds]
        reached = [o.seconds for o in runs if o.seconds is not None]
        speed = statistics.mean(o.images_per_sec for o in runs)
        model = speed * train_flops() / 1e9 / 2
        per_core = speed * executed_flops(program.python) / 1e9 / 2
        compile_s = [o.compile_s for o in runs if o.compile_s is not None]
        lines.append(
            f"| {program.label} | {library} | {len(reached)}/{len(runs)} | "
            + (f"{statistics.median(reached):.2f} | {statistics.mean(reached):.2f}" if reached
               else "- | -")
            + f" | {100 * min(o.accuracy for o in runs):.2f}% | {speed:,.0f} | {model:.1f} | "
            f"{per_core:.1f} ({100 * per_core / peak:.0f}%) | "
            + (f"{statistics.median(compile_s):.0f}" if compile_s else "-") + " |")
    return lines


def seeds_table(results, programs, seeds):
    lines = ["| seed | " + " | ".join(p.label for p in programs) + " |",
             "|---|" + "---|" * len(programs)]
    for seed in seeds:
        cells = [seconds_cell(results[(p, seed)]) for p in programs]
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    return lines


def comparisons(results, programs, seeds):
    """Each mnist_ddp against the fastest Python twin of the same precision (median seconds)."""
    lines = []
    for bf16 in (False, True):
        twins = [p for p in programs if p.python and p.bf16 == bf16]
        medians = {p: median_seconds([results[(p, s)] for s in seeds]) for p in twins}
        medians = {p: m for p, m in medians.items() if m is not None}
        if not medians:
            continue
        fastest = min(medians, key=medians.get)
        for ours in (p for p in programs if not p.python and p.bf16 == bf16):
            mine = median_seconds([results[(ours, s)] for s in seeds])
            if mine is not None:
                lines.append(f"{ours.label} against the fastest twin, {fastest.label}: "
                             f"{medians[fastest] / mine:.2f}x faster to 99% (medians).")
    return lines


def bf16_speeds(results, programs, seeds):
    """Each bf16 mnist_ddp's images/s against the float32 run of the same place."""
    lines = []
    for ours in (p for p in programs if not p.python and p.bf16):
        fp32 = next((p for p in programs if not p.python and not p.bf16 and p.place == ours.place),
                    None)
        if fp32 is not None:
            speed = {p: statistics.mean(results[(p, s)].images_per_sec for s in seeds)
                     for p in (ours, fp32)}
            lines.append(f"{ours.label}: {speed[ours] / speed[fp32]:.2f}x the images/s of "
                         f"{fp32.label} (float32).")
    return lines


def phase_shares(results, programs, seeds):
    """Where each mnist_ddp's rank 0 spent its training time, mean shares over seeds."""
    lines = []
    for program in (p for p in programs if not p.python):
        runs = [results[(program, seed)].phases for seed in seeds]
        shares = {name: statistics.mean(run[name] / run["train"] for run in runs)
                  for name in PHASES}
        shares["other"] = 1 - sum(shares.values())
        lines.append(f"{program.label}, rank 0's training time: " + ", ".join(
            f"{name.replace('_', ' ')} {100 * share:.0f}%" for name, share in shares.items())
            + ".")
    return lines


def final_accuracy_table(results, seeds, programs):
    """Per seed, each trainer's final accuracy and images/s; then mean +- deviation (lowest, how
    many reached 99%), and the per-seed differences, ours minus Python, with their standard
    error."""
    header = "| seed | " + " | ".join(f"{p.label}: final accuracy | img/s" for p in programs) + " |"
    lines = [header, "|" + "---|" * (1 + 2 * len(programs))]
    for seed in seeds:
        lines.append(f"| {seed} | " + " | ".join(
            f"{100 * results[(p, seed)].accuracy:.2f}% | {results[(p, seed)].images_per_sec:,.0f}"
            for p in programs) + " |")
    cells = []
    for program in programs:
        accuracies = [100 * results[(program, seed)].accuracy for seed in seeds]
        at_target = sum(a >= 100 * TARGET for a in accuracies)
        speed = statistics.mean(results[(program, seed)].images_per_sec for seed in seeds)
        cells.append(f"{statistics.mean(accuracies):.3f}% +- {statistics.stdev(accuracies):.3f} "
                     f"(lowest {min(accuracies):.2f}%, {at_target}/{len(seeds)} at "
                     f"{100 * TARGET:.0f}%) | {speed:,.0f}")
    lines.append("| mean | " + " | ".join(cells) + " |")
    ours, python = programs
    differences = [100 * (results[(ours, s)].accuracy - results[(python, s)].accuracy)
                   for s in seeds]
    error = statistics.stdev(differences) / len(differences) ** 0.5
    lines += ["", f"{ours.label} minus {python.label}, per seed: mean "
              f"{statistics.mean(differences):+.3f} points, standard error {error:.3f}."]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--root", help="a Debian 13 root made by scripts/test_libtorch2.sh, "
                        "with python3-torch and python3-setuptools installed")
    parser.add_argument("--bf16", action="store_true", help="--precision bf16 programs instead")
    parser.add_argument("--config", default=os.path.join(ROOT, "configs/mnist99-sure.conf"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--fallback", action="store_true",
                        help="also mnist_ddp kept on OpenBLAS's Prescott kernels "
                             "(MNIST_DDP_SIMULATE_BLAS_FALLBACK=uncorrected), any host")
    parser.add_argument("--whole-epoch", action="store_true",
                        help="final accuracy of the whole recipe, ours against Python")
    parser.add_argument("--out")
    args = parser.parse_args()
    out = args.out or os.path.join(
        ROOT, "bench/final_accuracy.md" if args.whole_epoch else "bench/time_to_99.md")
    binary = os.path.join(args.build, "mnist_ddp")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: build the program first (scripts/setup.sh)")
    if python_torch() is None:
        sys.exit(f"python3-torch is not installed for {PYTHON}: apt-get install python3-torch "
                 "(the Python side is the point of this benchmark)")
    root = os.path.abspath(args.root) if args.root else None
    if root and not os.access(os.path.join(root, "build/mnist_ddp"), os.X_OK):
        sys.exit(f"{root}/build/mnist_ddp not found: make the root and its build with "
                 "scripts/test_libtorch2.sh, then chroot ROOT apt-get install python3-torch "
                 "python3-setuptools")
    seeds = list(range(1, args.seeds + 1))
    results = {}
    with prepared_root(root):
        runner = Runner(args.build, root, args.config)
        programs = programs_of(root, args.bf16, args.whole_epoch, args.fallback)
        peak = max(runner.gemm_peak(place) for place in {p.place for p in programs})
        for seed in seeds:
            for program in programs if seed % 2 else programs[::-1]:
                outcome = runner.run(program, seed, args.whole_epoch)
                results[(program, seed)] = outcome
                print(f"seed {seed}: {program.label:36} {seconds_cell(outcome)} "
                      f"{outcome.images_per_sec:,.0f} img/s", flush=True)
        libraries = {p: results[(p, seeds[0])].library or runner.libtorch(p.place)
                     for p in programs}
    command = shlex.join(["bench/time_to_99.py", *sys.argv[1:]])
    recipe = runner.config
    header = [f"Machine: {machine()}.", provenance(binary),
              f"Run: {datetime.date.today().isoformat()}, `{command}`; real MNIST (60,000 "
              f"training, 10,000 test images), {recipe} and its Python twin "
              "(bench/python/recipe99.py), 2 ranks x 1 thread each, interleaved per seed."]
    if args.whole_epoch:
        text = "\n".join([*header, "Each trains every epoch (no stop at the target) and "
                          "evaluates once, at the end.", "",
                          *final_accuracy_table(results, seeds, programs), ""])
    else:
        parts = " + ".join(f"{name} {macs:,}" for name, macs in fastcnn_macs())
        text = "\n".join([
            *header,
            f"Each stops at the first evaluation (every 50 steps) at {100 * TARGET:.0f}%; seconds "
            "are training time to it, evaluations excluded; img/s over the images trained to it.",
            f"Model GFLOP/s: {train_flops() / 1e6:.2f} MFLOP per training image, the dense "
            f"definition, for every program (forward MACs {parts}; x 2 FLOP, x 3 for forward, "
            "input and weight gradients, conv1 without an input gradient) over 2 cores. Executed "
            "GFLOP/s: what each program multiplies; mnist_ddp "
            + (f"{executed_flops(python=False) / 1e6:.2f} MFLOP, as its AVX-512 "
               "backward of conv1 and conv2 multiplies only through each pooling window's winner"
               if winners_only() else "the model's, without AVX-512")
            + f"; its share of one core's float32 GEMM peak of {peak:.0f} GFLOP/s "
            "(bench/python/gemm_peak.py on the OpenBLAS core mnist_ddp runs, the best of each "
            "torch's BLAS).", "",
            *summary_table(results, libraries, seeds, peak), "",
            *seeds_table(results, programs, seeds), "",
            *comparisons(results, programs, seeds), *bf16_speeds(results, programs, seeds),
            *phase_shares(results, programs, seeds), ""])
    write_atomically(out, text)
    print(text)


if __name__ == "__main__":
    main()
