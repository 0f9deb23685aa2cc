#!/usr/bin/env python3
"""scripts/compare_outputs.py — checks that two mnist_ddp binaries write the same outputs: for
linear and cnn, on 1 and 2 ranks, a run that checkpoints and a run that resumes from it must give
the same metrics (timing fields aside), checkpoints (but for the run id and the CRC that covers
it), manifests (but for run id, CRC and creation time) and exported model, byte for byte.

Usage: scripts/compare_outputs.py BEFORE AFTER [--data-dir DIR] [--work DIR]
Exits 0 when every output matches, 1 naming each one that differs.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [(model, ranks) for model in ("linear", "cnn") for ranks in (1, 2)]
# The first run stops at FIRST_STEPS with a checkpoint every CHECKPOINT_EVERY steps; the second
# resumes it and trains to LAST_STEPS, evaluating on the way (--eval-every).
FIRST_STEPS, LAST_STEPS, CHECKPOINT_EVERY = 20, 40, 10
MANIFEST_VARIES = ("run", "crc32", "created")


def run(binary, ranks, model, folder, data_dir, *extra):
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks), binary,
               "--data-dir", data_dir, "--model", model, "--threads", "1", "--log-every", "5",
               "--checkpoint-dir", "checkpoints", "--checkpoint-every", str(CHECKPOINT_EVERY),
               "--metrics-file", "metrics.jsonl", *extra]
    done = subprocess.run(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode} in {folder}:\n{done.stdout}")


def train(binary, ranks, model, folder, data_dir):
    os.makedirs(folder)
    run(binary, ranks, model, folder, data_dir, "--max-steps", str(FIRST_STEPS))
    run(binary, ranks, model, folder, data_dir, "--max-steps", str(LAST_STEPS), "--resume",
        "auto", "--eval-every", "15", "--export-model", "model.pt")


def without_timing(value):
    """`value` without the keys that hold times or rates (*_s, *_per_sec, phases*)."""
    if isinstance(value, dict):
        return {key: without_timing(item) for key, item in value.items()
                if not key.endswith(("_s", "_per_sec")) and not key.startswith("phases")}
    return value


def metrics(path):
    with open(path, encoding="utf-8") as lines:
        return [without_timing(json.loads(line)) for line in lines]


def manifest(path):
    with open(path, encoding="utf-8") as text:
        content = json.load(text)
    return {key: item for key, item in content.items() if key not in MANIFEST_VARIES}


def run_id(folder):
    """The run id in the folder's manifests (one run wrote them all)."""
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as text:
                return json.load(text)["run"].encode()
    return b""


def differences(before, after):
    """The outputs of `after` that differ from those of `before`, by name."""
    found = []
    if metrics(os.path.join(before, "metrics.jsonl")) != metrics(
            os.path.join(after, "metrics.jsonl")):
        found.append("metrics.jsonl")
    with open(os.path.join(before, "model.pt"), "rb") as a, \
            open(os.path.join(after, "model.pt"), "rb") as b:
        if a.read() != b.read():
            found.append("model.pt")
    folders = [os.path.join(side, "checkpoints") for side in (before, after)]
    names = [sorted(os.listdir(folder)) for folder in folders]
    if names[0] != names[1]:
        return found + [f"checkpoint files {names[0]} != {names[1]}"]
    runs = [run_id(folder) for folder in folders]
    for name in names[0]:
        paths = [os.path.join(folder, name) for folder in folders]
        if name.endswith(".json"):
            same = manifest(paths[0]) == manifest(paths[1])
        else:  # the trailer is the CRC of the bytes before it, run id included
            with open(paths[0], "rb") as a, open(paths[1], "rb") as b:
                same = a.read()[:-4] == b.read()[:-4].replace(runs[1], runs[0])
        if not same:
            found.append(f"checkpoints/{name}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("before", help="the mnist_ddp binary whose outputs are the reference")
    parser.add_argument("after", help="the mnist_ddp binary to check")
    parser.add_argument("--data-dir", default=os.path.join(ROOT, "data", "mnist"))
    parser.add_argument("--work", help="keep the runs in this new folder (default: a temporary "
                        "one, removed)")
    args = parser.parse_args()
    binaries = [os.path.abspath(path) for path in (args.before, args.after)]
    data_dir = os.path.abspath(args.data_dir)
    work = args.work or tempfile.mkdtemp(prefix="compare_outputs.")
    failed = False
    for model, ranks in CASES:
        case = os.path.join(work, f"{model}-{ranks}")
        sides = [os.path.join(case, side) for side in ("before", "after")]
        for binary, side in zip(binaries, sides):
            train(binary, ranks, model, side, data_dir)
        found = differences(*sides)
        verdict = "DIFFERENT: " + ", ".join(found) if found else "same"
        print(f"{model}, {ranks} rank(s): {verdict}")
        failed = failed or bool(found)
    if not args.work:
        shutil.rmtree(work)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
