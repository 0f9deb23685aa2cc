#!/usr/bin/env python3
"""mnist_ddp eager and with --cuda-graph on beside PyTorch on the same GPU, and time to 99%.

On one GPU, with the real MNIST of --data (raw or .gz IDX files), at batch 64 with SGD at lr 0.01
(the tutorial's settings), interleaved over --rounds rounds (medians reported; the first round,
then time to 99%, then the other rounds, the report rewritten after every run), each epoch's
images/s (the first pays for what runs once in it: mnist_ddp's warm-up steps and capture, the
optimizer's first step; cuDNN's and cuBLAS's set-up are paid before the clock by both mnist_ddp
and the PyTorch loop, with one scratch forward and backward pass):
- the classic Python DDP tutorial (bench/python/ddp_tutorial.py --device cuda: DataLoader with
  per-image transforms, DistributedSampler, DDP over NCCL), linear and cnn, one epoch as written;
- a best-effort PyTorch loop with the data already on the GPU (bench/python/gpu_loop.py), two
  epochs, eager and at PyTorch's fastest GPU settings (--variant): the whole step captured as one
  CUDA graph, torch.compile mode reduce-overhead, and mode max-autotune (cnn only, one run, after
  time to 99%: its autotuning takes minutes), torch.compile's seconds paid before the clock and
  reported apart, each run's CUDA kernels and host time per cnn step under torch.profiler;
- mnist_ddp --cuda-graph off and --cuda-graph on, linear and cnn, two epochs;
- mnist_ddp --cuda-graph on --communicate-alone, two epochs: one rank that allreduces every
  bucket over NCCL inside its captured step, as each of N ranks does, whose second epoch's step
  time, with the bytes it allreduces, gives the projection of 8 GPUs below.
Then time to 99% test accuracy on one rank for --seeds seeds (training seconds to the first
evaluation at 99%, evaluations excluded): configs/mnist99.conf graphed and eager, and
configs/mnist99-sure.conf (the recipe over two epochs, its one-cycle schedule spanning both: on the
CPU it reached 99% with every seed tried, where the one-epoch recipe ends near 99.0% and misses
some) graphed and in its Python twin on the GPU (bench/python/recipe99.py --device cuda, its
fastest variant there: torch.compile mode reduce-overhead, compile seconds apart); what mnist_ddp
paid before its clock (its metrics' one_time_costs_s), and the nodes of mnist_ddp's captured steps
(its metrics' cuda_graph_nodes). Then a projection for 8 GPUs
(not a measurement: one GPU holds one NCCL rank): images/s if each of 8 ranks took the measured
step of the communicating rank plus an allreduce of its gradients that overlaps nothing, for
allreduce times that bracket NCCL's published ones on 8 NVLink GPUs. It writes a Markdown
report (--out) with the machine, the commands' settings and every figure, and exits 1 if a run
failed or a graphed run's banner does not say "cuda graph: on". Every torch.compile of one bench
run shares one Inductor cache, empty at the start: the first compile of each program is cold, the
later ones find its kernels. The defaults (2 rounds, 3 seeds) are estimated at 8 minutes on an
H100, max-autotune's compile being the least certain part.

    bench/gpu/graph_bench.py --bin build-gpu/mnist_ddp --data data/mnist --out DIR/graph_bench.md
    bench/gpu/graph_bench.py --data data/mnist --only tutorial --seeds 0   (the tutorial alone)
"""
import argparse
import collections
import datetime
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = os.environ.get("PYTHON", "python3")
MPIRUN = os.environ.get("MPIRUN", "mpirun")
MPI = [MPIRUN, "--allow-run-as-root", "--bind-to", "none", "-np", "1"]
# PyTorch's processes may need another library path than mpirun and mnist_ddp (tests/gpu/run.sh
# points those at Debian packages it unpacked).
PYTHON_LIBRARY_PATH = os.environ.get("PYTHON_LD_LIBRARY_PATH",
                                     os.environ.get("LD_LIBRARY_PATH", ""))
SETTINGS = ["--batch-size", "64", "--lr", "0.01"]
# The tutorial trains one epoch, as written. The others train two: the first pays for what runs
# once inside the clock (mnist_ddp's warm-up steps and capture, the optimizer's first step), the
# second is the steady step rate.
ONE_EPOCH = ["--epochs", "1"] + SETTINGS
TWO_EPOCHS = ["--epochs", "2"] + SETTINGS
# The time-to-99% runs: mnist_ddp's (label, config, graphed), then the Python twin of the sure
# recipe on the GPU in its fastest variant there.
MNIST_DDP_TO_99 = (("graphed", "mnist99.conf", True), ("eager", "mnist99.conf", False),
                   ("sure, graphed", "mnist99-sure.conf", True))
TWIN = "sure, PyTorch twin"
TWIN_OPTIONS = ["--device", "cuda", "--epochs", "2", "--variant", "compile", "--compile-mode",
                "reduce-overhead"]
TO_99 = [label for label, _, _ in MNIST_DDP_TO_99] + [TWIN]
# The program whose second-epoch step the 8-GPU projection scales: one rank that allreduces every
# bucket over NCCL inside its captured step, as each of N ranks does; and the allreduce times the
# projection assumes (us).
COMMUNICATING = "mnist_ddp --cuda-graph on --communicate-alone"
# The best-effort PyTorch loop's programs and their --variant; each cnn run is also profiled.
PYTORCH_LOOP = "PyTorch loop, data on the GPU"
LOOP_VARIANTS = {PYTORCH_LOOP: "eager", "PyTorch loop, CUDA graph": "cuda-graph",
                 "PyTorch loop, torch.compile reduce-overhead": "reduce-overhead",
                 "PyTorch loop, torch.compile max-autotune": "max-autotune"}
PROFILE_STEPS = 20
# Programs run for one model only, once, after time to 99%: max-autotune's autotuning takes
# minutes.
ONCE = {"PyTorch loop, torch.compile max-autotune": "cnn"}
PROJECTED_RANKS = 8
ALLREDUCE_US = (25, 50, 100)
MACHINE_FACTS = ("import json, torch; print(json.dumps({'torch': torch.__version__, 'gpu': "
                 "torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}))")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def run(command, env=None, timeout=300):
    """(exit code, stdout, stderr) of `command`; a timeout counts as exit 124."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=env)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %d s" % timeout


def reason(stderr):
    """A failed run's message: a traceback's last line, else argparse's error line (after its
    usage), else the first lines of its error output. mpirun's notice of the failed process, a
    box of dashed lines after a traceback, left out."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Traceback")), None)
    if start is not None:
        traceback = lines[start:]
        box = next((i for i, line in enumerate(traceback) if line.startswith("-" * 20)),
                   len(traceback))
        return traceback[box - 1]
    usage_error = [line for line in lines if re.match(r"\S+\.py: error: ", line)]
    return usage_error[0] if usage_error else " / ".join(lines[:3])


def last_json(text):
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in the output")


class Bench:
    def __init__(self, args):
        self.args = args
        self.failures = []
        # One Inductor cache for the bench run, empty at its start.
        self.inductor_cache = tempfile.TemporaryDirectory(prefix="graph_bench-inductor-")

    def python(self, script, options):
        command = [PYTHON, os.path.join(ROOT, "bench/python", script)] + options
        env = dict(os.environ, LD_LIBRARY_PATH=PYTHON_LIBRARY_PATH,
                   TORCHINDUCTOR_CACHE_DIR=self.inductor_cache.name)
        if script == "ddp_tutorial.py":  # mpirun with this process's paths, Python with its own
            env = None
            # By its full path: mpirun's own search for it can find another interpreter (the
            # system's, without the packages of a virtual environment's first in PATH).
            command[0] = shutil.which(PYTHON) or PYTHON
            command = (MPI + ["-x", "LD_LIBRARY_PATH=" + PYTHON_LIBRARY_PATH] + command +
                       ["--master-port", free_port()])
        rc, out, err = run(command, env)
        if rc != 0:
            what = " ".join([script] + options)
            self.failures.append("%s: exit %d: %s" % (what, rc, reason(err)))
            return None
        return last_json(out)

    def machine(self):
        """The GPU's name and PyTorch's version, asked before any run, so that a report cut short
        by its caller's time limit still names the machine; {} where PyTorch cannot say (its
        runs then fail and are listed with the reason)."""
        rc, out, _ = run([PYTHON, "-c", MACHINE_FACTS],
                         dict(os.environ, LD_LIBRARY_PATH=PYTHON_LIBRARY_PATH), timeout=120)
        return last_json(out) if rc == 0 else {}

    def ours(self, options, graphed):
        with tempfile.TemporaryDirectory() as work:
            metrics = os.path.join(work, "m.jsonl")
            command = MPI + [self.args.bin, "--device", "cuda", "--data-dir", self.args.data,
                             "--cuda-graph", "on" if graphed else "off", "--progress", "off",
                             "--metrics-file", metrics] + options
            rc, out, err = run(command)
            what = " ".join(options + ["--cuda-graph", "on" if graphed else "off"])
            if rc != 0:
                self.failures.append("mnist_ddp %s: exit %d: %s" % (what, rc, reason(err)))
                return None
            if ("# cuda graph: on" in out) != graphed:
                banner = next((line for line in out.splitlines() if "# cuda graph" in line),
                              "nothing")
                self.failures.append("mnist_ddp %s: the banner says '%s'" % (what, banner))
            records = [json.loads(line) for line in open(metrics).read().splitlines()]
            summary = records[-1]
            summary["epoch_images_per_sec"] = [r["images_per_sec"] for r in records
                                               if r["event"] == "epoch"]
            return summary


def regular_expression(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError("not a regular expression: %s" % e)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def figure(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


class Results:
    """Every figure gathered so far, and the Markdown report of them."""

    def __init__(self, args, programs, models):
        self.args = args
        self.programs = programs
        self.models = models
        self.speed = {(p, m): [] for p in programs for m in models}  # first epochs' images/s
        self.warm = {(p, m): [] for p in programs for m in models}  # second epochs' images/s
        self.accuracy = {(p, m): [] for p in programs for m in models}
        # Host time per cnn step (mnist_ddp's phases, the PyTorch loop's profile) and the loop's
        # CUDA kernels per cnn step.
        self.host_ms = {p: [] for p in programs}
        self.kernels = {p: [] for p in programs}
        # torch.compile's seconds before the clock, in run order, by (program or TWIN, model).
        self.compile_s = collections.defaultdict(list)
        self.nodes = {m: None for m in models}  # of mnist_ddp's captured step
        self.allreduce_bytes = {m: None for m in models}  # per rank and step
        self.to_99 = {label: [] for label in TO_99}
        # mnist_ddp's one_time_costs_s (fastcnn: the time-to-99 runs), paid before the clock
        self.one_time = {m: [] for m in list(models) + ["fastcnn"]}
        self.machine = {}

    def add_run(self, name, model, summary):
        if summary:
            rates = summary.get("epoch_images_per_sec") or [summary["train_images_per_sec"]]
            self.speed[name, model].append(rates[0])
            if len(rates) > 1:
                self.warm[name, model].append(rates[1])
            self.accuracy[name, model].append(summary["test_accuracy"])
            if model == "cnn" and "phases_rank0" in summary:
                # comm_wait and device are where the host waits for the device (mnist_ddp's
                # Note [The device's time in the phases]); the others are the host's own work.
                host_s = sum(seconds for phase, seconds in summary["phases_rank0"].items()
                             if phase not in ("comm_wait_s", "device_s"))
                self.host_ms[name].append(1000 * host_s / summary["steps"])
            if "kernels_per_step" in summary:
                self.kernels[name].append(summary["kernels_per_step"])
                self.host_ms[name].append(summary["host_ms_per_step"])
            self.add_compile_s(name, model, summary)
            self.nodes[model] = summary.get("cuda_graph_nodes", self.nodes[model])
            if name == COMMUNICATING:
                self.allreduce_bytes[model] = summary["allreduce_bytes_per_step"]
            self.add_one_time_costs(model, summary)

    def add_compile_s(self, name, model, summary):
        if summary and summary.get("compile_s") is not None:
            self.compile_s[name, model].append(summary["compile_s"])

    def compile_figure(self, name, model):
        """The first run's compile seconds (Inductor's cache empty), then the later runs' median."""
        seconds = self.compile_s[name, model]
        later = " / %s" % figure(median(seconds[1:]), 1) if len(seconds) > 1 else ""
        return figure(seconds[0], 1) + later if seconds else "-"

    def add_one_time_costs(self, model, summary):
        if summary and "one_time_costs_s" in summary:
            self.one_time[model].append(summary["one_time_costs_s"])

    def report(self, failures, finished):
        rounds = max((len(v) for v in self.speed.values()), default=0)
        lines = ["# mnist_ddp with CUDA graphs beside PyTorch, one GPU", "",
                 "Machine: %s, PyTorch %s; %s UTC. `bench/gpu/graph_bench.py --rounds %d "
                 "--seeds %d%s`%s." % (
                     self.machine.get("gpu", "?"), self.machine.get("torch", "?"),
                     datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
                     self.args.rounds, self.args.seeds,
                     " --only '%s'" % self.args.only.pattern if self.args.only else "",
                     "" if finished else " (not finished: the report has the runs done so far)"),
                 "", "The real MNIST, batch 64, SGD lr 0.01; medians of the %d round(s) run. "
                 "Images/s of each epoch (the tutorial trains one); the accuracy after the last "
                 "epoch; ms/step from the second epoch (the first where there is one)." % rounds,
                 "", "| program | linear images/s, epoch 1 | epoch 2 | cnn images/s, epoch 1 | "
                 "epoch 2 | cnn ms/step | cnn host ms/step | linear acc | cnn acc |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for name in self.programs:
            cnn = median(self.warm[name, "cnn"]) or median(self.speed[name, "cnn"])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, figure(median(self.speed[name, "linear"])),
                figure(median(self.warm[name, "linear"])), figure(median(self.speed[name, "cnn"])),
                figure(median(self.warm[name, "cnn"])), figure(64000 / cnn if cnn else None, 3),
                figure(median(self.host_ms[name]), 3),
                figure(median(self.accuracy[name, "linear"]), 4),
                figure(median(self.accuracy[name, "cnn"]), 4)))
        lines += self.loop_variants()
        lines += ["", "Time to 99%% (1 rank, training seconds to the first evaluation at 99%%): "
                  "graphed and eager, mnist_ddp with configs/mnist99.conf; sure, "
                  "configs/mnist99-sure.conf (the recipe over two epochs), graphed and its Python "
                  "twin on the GPU (`recipe99.py %s`, DDP over NCCL; torch.compile's seconds "
                  "before the clock: %s, first run / median of the later ones):" % (
                      " ".join(TWIN_OPTIONS), self.compile_figure(TWIN, "fastcnn")), "",
                  "| seed | " + " | ".join("%s s | %s acc" % (label, label)
                                           for label in TO_99) + " |",
                  "|---|" + "---|---|" * len(TO_99)]
        by_seed = {label: {seed: (s, a) for seed, s, a, _ in runs}
                   for label, runs in self.to_99.items()}
        for seed in sorted(set().union(*by_seed.values())):
            cells = [by_seed[label].get(seed, (None, None)) for label in TO_99]
            lines.append("| %d | %s |" % (seed, " | ".join(
                "%s | %s" % (figure(s, 3), figure(a, 4)) for s, a in cells)))
        for label in TO_99:
            times = [t for _, t, _, _ in self.to_99[label] if t is not None]
            lines.append("")
            lines.append("%s: mean %s s over the %d of %d seeds that reached 99%%." % (
                label, figure(statistics.mean(times), 3) if times else "-", len(times),
                len(self.to_99[label])))
        lines += ["", "Paid by mnist_ddp before its training clock starts (one_time_costs_s: one "
                  "scratch forward and backward pass for cuDNN's and cuBLAS's set-up and the "
                  "kernels' first loading), medians: %s." % ", ".join(
                      "%s s (%s)" % (figure(median(self.one_time[m]), 3), m)
                      for m in self.one_time)]
        lines += ["", "mnist_ddp --cuda-graph on: the captured step has %s graph nodes (linear), "
                  "%s (cnn), all launched by one replay; --cuda-graph off launches each of them "
                  "from the host." % (figure(self.nodes["linear"]), figure(self.nodes["cnn"]))]
        if COMMUNICATING in self.programs:
            lines += self.projection()
        if failures:
            lines += ["", "Failures:", ""] + ["- " + f for f in failures]
        return "\n".join(lines) + "\n"

    def loop_variants(self):
        """The PyTorch loop's variants: kernels per cnn step and torch.compile's seconds."""
        names = [name for name in self.programs if name in LOOP_VARIANTS]
        if not names:
            return []
        lines = ["", "The PyTorch loop's variants (`gpu_loop.py --variant`): CUDA kernels and "
                 "copies per cnn step under torch.profiler (%d steps after training; their host "
                 "time is the table's cnn host ms/step), and torch.compile's seconds before the "
                 "clock (compile, then CUDA-graph recording), first run / median of the later ones "
                 "(Inductor's cache warm). Each variant runs an epoch's last partial batch (32 "
                 "images) eagerly; the CUDA graph's 3 eager warm-up steps and capture are in its "
                 "first epoch, as mnist_ddp's are. %s: cnn only, one run after time to 99%% (its "
                 "autotuning takes minutes)." % (
                     PROFILE_STEPS, ", ".join(LOOP_VARIANTS[name] for name in ONCE)), "",
                 "| variant | cnn kernels/step | linear compile s | cnn compile s |",
                 "|---|---|---|---|"]
        for name in names:
            lines.append("| %s | %s | %s | %s |" % (
                LOOP_VARIANTS[name], figure(median(self.kernels[name])),
                self.compile_figure(name, "linear"), self.compile_figure(name, "cnn")))
        return lines

    def projection(self):
        """Images/s of 8 ranks, each taking the communicating rank's measured step plus an
        allreduce of its gradients that overlaps nothing (the buckets overlap backward in fact)."""
        lines = ["", "%d GPUs, projected (not measured: one GPU holds one NCCL rank). Each rank "
                 "takes the step of `%s` (one GPU allreducing every bucket over NCCL inside the "
                 "captured step, as each of N ranks does; 64 / the images/s of its second epoch), "
                 "plus an allreduce of its gradients that overlaps nothing:" % (
                     PROJECTED_RANKS, COMMUNICATING), "",
                 "| model | 1-GPU step ms | allreduce bytes | " +
                 " | ".join("%d GPUs, allreduce %d us" % (PROJECTED_RANKS, us)
                            for us in ALLREDUCE_US) + " |",
                 "|---|---|---|" + "---|" * len(ALLREDUCE_US)]
        for model in self.models:
            speed = median(self.warm[COMMUNICATING, model])
            step_s = 64 / speed if speed else None
            lines.append("| %s | %s | %s | %s |" % (
                model, figure(step_s and 1000 * step_s, 3), figure(self.allreduce_bytes[model]),
                " | ".join(figure(step_s and PROJECTED_RANKS * 64 / (step_s + us * 1e-6))
                           for us in ALLREDUCE_US)))
        return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build-gpu/mnist_ddp"))
    parser.add_argument("--data", default=os.path.join(ROOT, "data/mnist"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/gpu/graph_bench.md"))
    parser.add_argument("--only", metavar="REGEX", type=regular_expression,
                        help="only the programs whose names match (e.g. 'tutorial'); the 8-GPU "
                        "projection needs its own")
    args = parser.parse_args()
    bench = Bench(args)
    data = ["--data-dir", args.data]

    def loop(variant):
        return lambda m: bench.python("gpu_loop.py", [
            "--model", m, "--variant", variant] + TWO_EPOCHS + data +
            (["--profile", str(PROFILE_STEPS)] if m == "cnn" else []))

    programs = {
        "Python DDP tutorial": lambda m: bench.python(
            "ddp_tutorial.py", ["--device", "cuda", "--model", m] + ONE_EPOCH + data),
        **{name: loop(variant) for name, variant in LOOP_VARIANTS.items()},
        "mnist_ddp --cuda-graph off": lambda m: bench.ours(
            ["--model", m, "--log-every", "0"] + TWO_EPOCHS, graphed=False),
        "mnist_ddp --cuda-graph on": lambda m: bench.ours(
            ["--model", m, "--log-every", "0"] + TWO_EPOCHS, graphed=True),
        COMMUNICATING: lambda m: bench.ours(
            ["--model", m, "--log-every", "0", "--backend", "nccl", "--communicate-alone"] +
            TWO_EPOCHS, graphed=True),
    }
    if args.only:
        programs = {name: make for name, make in programs.items() if args.only.search(name)}
    results = Results(args, programs, ("linear", "cnn"))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    def write(finished=False):
        # After every run: a bench stopped by its caller's time limit still leaves the figures.
        text = results.report(bench.failures, finished)
        with open(args.out, "w") as f:
            f.write(text)
        return text

    def measure(label, name, model):
        summary = programs[name](model)
        results.add_run(name, model, summary)
        write()
        print("# %s %-32s %-6s %s" % (
            label, name, model,
            figure(results.speed[name, model][-1]) if summary else "failed"), flush=True)

    def throughput_round(round_index):
        names = [name for name in programs if name not in ONCE]
        if round_index % 2:
            names.reverse()
        for model in results.models:
            for name in names:
                measure("round %d" % (round_index + 1), name, model)

    def mnist_ddp_to_99(config, graphed):
        return lambda seed: bench.ours(["--config", os.path.join(ROOT, "configs", config),
                                        "--seed", str(seed), "--log-every", "0"], graphed)

    to_99 = {label: mnist_ddp_to_99(config, graphed)
             for label, config, graphed in MNIST_DDP_TO_99}
    to_99[TWIN] = lambda seed: bench.python("recipe99.py", TWIN_OPTIONS + [
        "--seed", str(seed), "--master-port", free_port()] + data)

    results.machine = bench.machine()
    write()
    # One round of every program first, then the headline time to 99%, the programs run once,
    # then the other rounds: the most figures for the time there is.
    throughput_round(0)
    for seed in range(1, args.seeds + 1):
        for label in TO_99:
            summary = to_99[label](seed)
            results.add_one_time_costs("fastcnn", summary)
            results.add_compile_s(label, "fastcnn", summary)
            if summary:
                results.to_99[label].append((seed, summary.get("target_train_s"),
                                             summary["test_accuracy"],
                                             summary["train_images_per_sec"]))
            write()
            print("# time to 99%%, seed %d, %s: %s" % (
                seed, label,
                figure(summary.get("target_train_s"), 3) if summary else "failed"), flush=True)
    for name, model in ONCE.items():
        if name in programs:
            measure("once", name, model)
    for round_index in range(1, args.rounds):
        throughput_round(round_index)
    print(write(finished=True))
    sys.exit(1 if bench.failures else 0)


if __name__ == "__main__":
    main()
