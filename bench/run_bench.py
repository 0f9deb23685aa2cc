#!/usr/bin/env python3
"""mnist_ddp against the classic PyTorch DDP tutorial script, side by side, as a Markdown table.

For linear on Fashion-MNIST (60k) and cnn on MNIST (60k), with 1, 2 and 4 ranks
(oversubscribed where there are fewer cores), it trains one epoch with mnist_ddp and with
bench/python/ddp_tutorial.py: same data files, model, batch (64 per rank), optimizer (SGD, lr
0.01), 1 intra-op thread per rank, the same LibTorch and BLAS, both started by `mpirun`. Runs are
interleaved (every configuration of both programs once per round, --repeats rounds, the order of
the two programs alternating) and medians reported: training images/s over all ranks (training
loop only), the ratio to Python, scaling from 1 rank, start-up (process start to the first
training step, rank 0), peak resident memory per rank (/usr/bin/time, the largest over ranks),
and for the cnn the achieved GFLOP/s per busy core as a share of one core's measured GEMM peak;
then where mnist_ddp's rank 0 spends its training time, when the program reports its phases.

The Python side runs on Debian's python3-torch (/usr/bin/python3); without it, it is skipped
with a message and only mnist_ddp is reported. The table goes to --out with a header (machine,
BLAS, date, command, GEMM peak, cnn FLOP count); README.md embeds it.

Usage: bench/run_bench.py [--build build] [--repeats 3] [--out bench/results.md]
"""
import argparse
import dataclasses
import datetime
import json
import os
import platform
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"  # Debian's interpreter: python3-torch installs torch for it only
TUTORIAL = os.path.join(ROOT, "bench/python/ddp_tutorial.py")
GEMM_PEAK = os.path.join(ROOT, "bench/python/gemm_peak.py")
# OPENBLAS_* left out: OPENBLAS_CORETYPE=Haswell, say, would hold OpenBLAS to AVX2 on an AVX-512
# CPU, where on its own it picks the CPU's kernels (as Debian 13's root, entered with env -i, does).
MPI_ENV = dict({k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")},
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
RANKS = (1, 2, 4)
BATCH, THREADS = 64, 1
PHASES = ("data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s")
OURS, PY = "ours", "python"


@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmarked configuration: a model on a data set."""
    model: str
    label: str
    data_dir: str


CASES = (Case("linear", "Fashion-MNIST 60k", "/usr/share/datasets/fashion-mnist"),
         Case("cnn", "MNIST 60k", os.path.join(ROOT, "data/mnist")))


@dataclasses.dataclass
class Sample:
    """One run's figures; None where the program does not report them."""
    images_per_sec: float
    peak_mib: float
    wall_s: float
    accuracy: float
    startup_s: float = None
    train_s: float = None
    phases: dict = None  # rank 0's seconds per phase (mnist_ddp), or {"data_s": ...} (Python)


def cnn_forward_macs():
    """(layer, multiply-adds per image) of the cnn's forward pass, from its shapes."""
    conv1 = 26 * 26 * 32 * (1 * 3 * 3)   # 28x28x1 -> 26x26x32, 3x3 kernels over 1 channel
    conv2 = 24 * 24 * 64 * (32 * 3 * 3)  # 26x26x32 -> 24x24x64, 3x3 kernels over 32 channels
    return [("conv1", conv1), ("conv2", conv2), ("fc1", 9216 * 128), ("fc2", 128 * 10)]


def cnn_train_flops():
    """FLOP per training image: forward multiply-adds x 2 FLOP x 3 (forward + two backward)."""
    return 3 * 2 * sum(macs for _, macs in cnn_forward_macs())


def describe_cnn_flops():
    """The FLOP count's derivation, in one line."""
    parts = " + ".join(f"{name} {macs:,}" for name, macs in cnn_forward_macs())
    total = sum(macs for _, macs in cnn_forward_macs())
    return (f"cnn FLOP per training image: forward MACs {parts} = {total:,}; x 2 FLOP x 3 "
            f"(forward, input and weight gradients) = {cnn_train_flops() / 1e6:.2f} MFLOP")


VERSION_PROBE = """
import torch
try:
    import torchvision
    vision = "torchvision " + torchvision.__version__
except ImportError:
    vision = "no torchvision: hand-written transforms"
print(f"torch {torch.__version__}, {vision}")
"""


def python_torch():
    """Debian's torch and torchvision versions, or None when /usr/bin/python3 has no torch."""
    try:
        done = subprocess.run([PYTHON, "-c", VERSION_PROBE], capture_output=True, text=True,
                              check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def blas_core(version_command):
    """The OpenBLAS core that mnist_ddp runs, from the BLAS line of its --version; None for
    another BLAS."""
    out = subprocess.run([*version_command, "--version"], capture_output=True, text=True,
                         env=MPI_ENV, check=True).stdout
    match = re.search(r"; core (\w+):", first_line("BLAS", out))
    return match.group(1) if match else None


def on_blas_core(core, argv):
    """argv run on OpenBLAS core `core` (None: OpenBLAS's own choice)."""
    return ["env", f"OPENBLAS_CORETYPE={core}", *argv] if core else list(argv)


def gemm_peak(command=(PYTHON, GEMM_PEAK)):
    """One core's float32 GEMM figures (bench/python/gemm_peak.py, run by `command`; give it
    mnist_ddp's core with on_blas_core, as Python's OpenBLAS may run a fallback):
    {gflops: {...}, best_gflops}."""
    done = subprocess.run(command, capture_output=True, text=True, env=MPI_ENV, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now (for gloo's rendezvous)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(ranks, argv, workdir, mpirun_options=()):
    """Runs argv under `mpirun -np ranks`: (stdout, wall seconds, largest peak RSS in MiB)."""
    # Each rank's /usr/bin/time writes its own file: their stderr lines would interleave.
    timed = f'exec /usr/bin/time -o {workdir}/peak_rss_kb.$OMPI_COMM_WORLD_RANK -f %M "$@"'
    command = ["mpirun", "-np", str(ranks), "--oversubscribe", *mpirun_options, "sh", "-c", timed,
               "sh", *argv]
    start = time.monotonic()
    done = subprocess.run(command, env=MPI_ENV, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {shlex.join(command)}\n{done.stdout}{done.stderr}")
    peaks = [int(open(f"{workdir}/peak_rss_kb.{rank}").read()) for rank in range(ranks)]
    return done.stdout, wall, max(peaks) / 1024


def find_phases(record):
    """The phase seconds in a metrics record, flat or in a nested object; None if absent."""
    for candidate in (record, *(v for v in record.values() if isinstance(v, dict))):
        if all(name in candidate for name in PHASES):
            return {name: candidate[name] for name in PHASES}
    return None


def run_ours(binary, case, ranks, workdir):
    """One epoch of mnist_ddp; its figures from the metrics file."""
    metrics = os.path.join(workdir, "metrics.jsonl")
    _, wall, peak = launch(ranks, [binary, "--model", case.model, "--data-dir", case.data_dir,
                                   "--epochs", "1", "--threads", str(THREADS),
                                   "--batch-size", str(BATCH), "--metrics-file", metrics],
                           workdir)
    records = [json.loads(line) for line in open(metrics)]
    summary = records[-1]
    epoch = next(r for r in records if r.get("event") == "epoch")
    return Sample(summary["train_images_per_sec"], peak, wall, summary["test_accuracy"],
                  summary.get("startup_s"), epoch.get("train_s"), find_phases(epoch))


def run_python(case, ranks, workdir, preloaded):
    """One epoch of the tutorial script (--preloaded: its batches by index_select); its figures
    from rank 0's final JSON line."""
    stdout, wall, peak = launch(ranks, [PYTHON, TUTORIAL, "--model", case.model,
                                        "--data-dir", case.data_dir, "--epochs", "1",
                                        "--threads", str(THREADS), "--batch-size", str(BATCH),
                                        "--master-port", str(free_port())]
                                + (["--preloaded"] if preloaded else []), workdir)
    summary = json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])
    return Sample(summary["train_images_per_sec"], peak, wall, summary["test_accuracy"],
                  summary["startup_s"], summary["train_s"], {"data_s": summary["data_s"]})


def measure(binary, sides, repeats, preloaded):
    """{(side, model, ranks): [Sample per round]}, every configuration once per round."""
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for repeat in range(repeats):
            order = sides if repeat % 2 == 0 else sides[::-1]
            for case in CASES:
                for ranks in RANKS:
                    for side in order:
                        sample = (run_ours(binary, case, ranks, workdir) if side == OURS
                                  else run_python(case, ranks, workdir, preloaded))
                        results.setdefault((side, case.model, ranks), []).append(sample)
                        print(f"round {repeat + 1}: {side:6} {case.model:6} {ranks} rank(s): "
                              f"{sample.images_per_sec:10,.0f} img/s, "
                              f"start-up {fmt(sample.startup_s, '.2f')} s, "
                              f"peak {sample.peak_mib:4.0f} MiB, wall {sample.wall_s:5.2f} s, "
                              f"test acc {100 * sample.accuracy:.2f}%", flush=True)
    return results


def median(samples, value):
    """The median of value(sample) over a configuration's runs; None if never measured."""
    values = [value(s) for s in samples]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def phase_shares(sample):
    """Each reported phase's share of the run's training time, 'other' for the rest of it."""
    if not sample.phases or not sample.train_s:
        return {}
    shares = {name: seconds / sample.train_s for name, seconds in sample.phases.items()}
    if all(name in shares for name in PHASES):
        shares["other"] = 1 - sum(shares.values())
    return shares


def medians(results, side, model, ranks):
    """{field or phase: median} of one configuration (phases as shares); None if not measured."""
    samples = results.get((side, model, ranks), [])
    figures = {field.name: median(samples, lambda s, f=field.name: getattr(s, f))
               for field in dataclasses.fields(Sample) if field.name != "phases"}
    for name in (*PHASES, "other"):
        figures[name] = median(samples, lambda s, n=name: phase_shares(s).get(n))
    return figures


def fmt(value, spec, unit=""):
    """value formatted with spec and unit, or a dash for a figure that was not measured."""
    return "–" if value is None else format(value, spec) + unit


def ratio(a, b):
    """a / b, or None when either was not measured."""
    return None if a is None or b is None else a / b


def percent(part, whole):
    """part as a rounded percentage of whole, or a dash."""
    share = ratio(part, whole)
    return fmt(None if share is None else 100 * share, ".0f", "%")


def pair(a, b, spec, scale=1):
    """'a / b' for an ours / Python column."""
    return " / ".join(fmt(None if v is None else scale * v, spec) for v in (a, b))


def gflops_cell(images_per_sec, ranks, peak):
    """Achieved cnn GFLOP/s per busy core, with its share of one core's GEMM peak."""
    if images_per_sec is None:
        return "–"
    per_core = images_per_sec * cnn_train_flops() / 1e9 / min(ranks * THREADS, os.cpu_count())
    return f"{per_core:.1f}" + ("" if peak is None else f" ({percent(per_core, peak)})")


def ranks_label(ranks):
    """The ranks column: the count, marked when there are more ranks than cores."""
    return f"{ranks} (oversubscribed)" if ranks * THREADS > os.cpu_count() else str(ranks)


def results_table(results, peak):
    """The main table: throughput, ratio, scaling, start-up, memory, accuracy, cnn GFLOP/s."""
    lines = ["| model | data | ranks | ours img/s | Python img/s | ours / Python "
             "| scaling vs 1 rank ours / Python | start-up (s) ours / Python "
             "| peak RSS per rank (MiB) ours / Python | test acc (%) ours / Python "
             "| cnn GFLOP/s per core (% of GEMM peak) ours / Python |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in CASES:
        for ranks in RANKS:
            o, p = (medians(results, side, case.model, ranks) for side in (OURS, PY))
            o1, p1 = (medians(results, side, case.model, 1) for side in (OURS, PY))
            speed = ratio(o["images_per_sec"], p["images_per_sec"])
            scaling = [ratio(m["images_per_sec"], m1["images_per_sec"])
                       for m, m1 in ((o, o1), (p, p1))]
            flops = ("–" if case.model != "cnn" else
                     " / ".join(gflops_cell(m["images_per_sec"], ranks, peak) for m in (o, p)))
            lines.append(
                f"| {case.model} | {case.label} | {ranks_label(ranks)} "
                f"| {fmt(o['images_per_sec'], ',.0f')} | {fmt(p['images_per_sec'], ',.0f')} "
                f"| {fmt(speed, '.1f', 'x')} "
                f"| {pair(*scaling, '.2f')} "
                f"| {pair(o['startup_s'], p['startup_s'], '.2f')} "
                f"| {pair(o['peak_mib'], p['peak_mib'], '.0f')} "
                f"| {pair(o['accuracy'], p['accuracy'], '.1f', scale=100)} | {flops} |")
    return lines


def phase_table(results):
    """Where rank 0's training time goes: mnist_ddp's phases, and the Python loader's share."""
    rows = [(case, ranks, medians(results, OURS, case.model, ranks),
             medians(results, PY, case.model, ranks)) for case in CASES for ranks in RANKS]
    if all(o["data_s"] is None for _, _, o, _ in rows):
        return []  # this build of mnist_ddp does not report its phases
    names = [name[:-2].replace("_", " ") for name in PHASES]
    lines = ["", "Rank 0's training time, medians of the runs' shares: mnist_ddp by phase (other: "
                 "the sampler and the epoch-end loss reduction), and the Python script's share "
                 "waiting for its DataLoader.", "",
             "| model | ranks | ours (s) | " + " | ".join(names) + " | other | Python (s) "
             "| Python data |",
             "|---|---:|" + "---:|" * (len(PHASES) + 4)]
    for case, ranks, o, p in rows:
        lines.append(f"| {case.model} | {ranks_label(ranks)} | {fmt(o['train_s'], '.2f')} | "
                     + " | ".join(percent(o[name], 1) for name in (*PHASES, "other"))
                     + f" | {fmt(p['train_s'], '.2f')} | {percent(p['data_s'], 1)} |")
    return lines


def first_line(prefix, text):
    """The rest of text's first line that starts with prefix (separators stripped), or '?'."""
    return next((line[len(prefix):].strip(" \t:") for line in text.splitlines()
                 if line.startswith(prefix)), "?")


def machine():
    """Cores, the CPU as /proc/cpuinfo names it, and memory, in one phrase."""
    cpuinfo = open("/proc/cpuinfo").read()
    meminfo = open("/proc/meminfo").read()
    memory = int(first_line("MemTotal:", meminfo).split()[0]) / 2**20
    family, model = (m.group(1) if m else "?" for m in (
        re.search(rf"^{key}\s*:\s*(\S+)", cpuinfo, re.M) for key in ("cpu family", "model")))
    return (f"{os.cpu_count()} cores ({first_line('model name', cpuinfo)}, family {family} model "
            f"{model}), {memory:.0f} GiB, Linux {platform.release()}")


def provenance(binary):
    """The commit measured and the BLAS its mnist_ddp runs on, with the core and why."""
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                            capture_output=True, text=True, check=False).stdout.strip() or "?"
    versions = subprocess.run([binary, "--version"], capture_output=True, text=True,
                              env=MPI_ENV, check=True).stdout
    return f"Commit: {commit}; BLAS: {first_line('BLAS', versions)}."


def header_lines(provenance_line, torch_line, peak, repeats, command, preloaded):
    """What, where, when and how, above the table."""
    peak_line = ("not measured (no python3-torch)" if peak is None else
                 f"{peak['best_gflops']:.0f} GFLOP/s (float32 square matrices, best of several: "
                 + ", ".join(f"{n}: {g:.0f}" for n, g in peak["gflops"].items()) + ")")
    data = ("--preloaded: batches by index_select from the split normalized once, in the "
            "DistributedSampler's order" if preloaded else
            "DataLoader, per-image ToTensor + Normalize, DistributedSampler")
    python = (f"bench/python/ddp_tutorial.py on Debian's {torch_line} ({data}, DDP over gloo)"
              if torch_line
              else "python3-torch not installed: the Python side was skipped")
    return [f"Machine: {machine()}.", provenance_line,
            f"Python: {python}.",
            f"Run: {datetime.date.today().isoformat()}, `{command}`; {repeats} interleaved rounds, "
            f"medians; one epoch, batch {BATCH} per rank, {THREADS} thread per rank, SGD lr 0.01, "
            "both started by mpirun.",
            f"One core's GEMM peak (torch.mm, 1 thread): {peak_line}.",
            f"{describe_cnn_flops()}.", ""]


def write_atomically(path, text):
    """Writes text to path through a temporary file in the same folder and a rename."""
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w") as out:
        out.write(text)
    os.replace(temporary, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench/results.md"))
    parser.add_argument("--preloaded", action="store_true",
                        help="the Python side's batches by index_select from one tensor")
    args = parser.parse_args()
    binary = os.path.join(args.build, "mnist_ddp")
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} not found: build the program first (scripts/setup.sh)")

    print(describe_cnn_flops())
    torch_line = python_torch()
    if torch_line is None:
        print("python3-torch not installed: skipping the Python side")
        peak = None
    else:
        peak = gemm_peak(on_blas_core(blas_core([binary]), [PYTHON, GEMM_PEAK]))
        print(f"GEMM peak, one core: {peak['best_gflops']:.1f} GFLOP/s {peak['gflops']}")

    started = time.monotonic()
    results = measure(binary, (OURS, PY) if torch_line else (OURS,), args.repeats, args.preloaded)
    print(f"measured in {time.monotonic() - started:.0f} s")

    command = shlex.join(["bench/run_bench.py", *sys.argv[1:]])
    lines = header_lines(provenance(binary), torch_line, peak, args.repeats, command,
                         args.preloaded)
    lines += results_table(results, peak["best_gflops"] if peak else None) + phase_table(results)
    text = "\n".join(lines) + "\n"
    write_atomically(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
