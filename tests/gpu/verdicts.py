#!/usr/bin/env python3
"""tests/gpu/verdicts.py — provides: every reading of a run's files that the GPU checks make
(metrics summaries, timelines, allreduce_bench tables, exported models), one subcommand each.

    tests/gpu/verdicts.py VERDICT FILE... [VALUE...]

Each prints why a run failed its check and exits 1, or prints nothing (or the value asked for)
and exits 0; exit 2 is bad usage. The names it reads from the program's files are the constants
below: ctest runs every verdict on files the program wrote on the CPU (tests/gpu/test_verdicts.py
and the multi-rank rehearsal), so a renamed span, phase, key or column fails there first.
"""
import collections
import json
import os
import sys

# Timeline spans (lib/report/timeline.cpp) and metrics keys (lib/report/metrics_writer.cpp).
ALLREDUCE_SPAN = "allreduce"
REPLAY_SPAN = "launch"  # a graphed step's host part: its replay's launch
PHASE_KEYS = ("launch_s", "device_s")  # a graphed step's phases in the metrics
COMM_WAIT_KEY = "comm_wait_s"
# allreduce_bench's table (app/allreduce_bench.cpp): its header, a row's wrong-element column and
# the verdict line.
BENCH_HEADER = "# allreduce_bench: "
BENCH_WRONG_COLUMN = 7
BENCH_OK = "# Out of bounds values : 0 OK"


class Failed(Exception):
    """The run failed the check; the message says why."""


def records(path):
    """The metrics file's records."""
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise Failed("unreadable metrics (%s)" % e)


def summary(path):
    """The metrics file's summary, its last record."""
    found = records(path)
    if not found or found[-1].get("event") != "summary":
        raise Failed("the metrics file's last record is not the summary (%s)"
                     % os.path.basename(path))
    return found[-1]


def spans(path, name):
    """The timeline's complete spans named `name`."""
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        raise Failed("unreadable timeline (%s)" % e)
    return [e for e in events if e.get("ph") == "X" and e.get("name") == name]


def summary_value(metrics, key):
    """The summary's KEY, or nothing: for the shell's comparisons."""
    try:
        value = summary(metrics).get(key, "")
    except Failed:
        value = ""
    print(value)


def accuracy_floor(metrics, floor):
    """Prints "IMAGES/S ACCURACY WALL"; fails below the test accuracy FLOOR."""
    s = summary(metrics)
    acc = float(s["test_accuracy"])
    print("%.0f %.4f %.1f" % (s.get("train_images_per_sec", 0), acc, s.get("wall_s", 0)))
    if acc < float(floor):
        raise Failed("test accuracy %.4f below %.2f" % (acc, float(floor)))


def ends_as(reference, run, loss, accuracy):
    """RUN's summary within LOSS (relative) of REFERENCE's test loss and ACCURACY of its test
    accuracy."""
    a, b = summary(reference), summary(run)
    if (abs(a["test_loss"] - b["test_loss"]) > float(loss) * abs(a["test_loss"]) or
            abs(a["test_accuracy"] - b["test_accuracy"]) > float(accuracy)):
        raise Failed("ended at test loss %.9f (%.2g relative), accuracy %.4f; %s at %.9f, %.4f"
                     % (b["test_loss"], abs(a["test_loss"] - b["test_loss"]) / abs(a["test_loss"]),
                        b["test_accuracy"], os.path.basename(reference)[:-6], a["test_loss"],
                        a["test_accuracy"]))


def has_allreduces(timeline):
    """The timeline holds bucket allreduces."""
    if not spans(timeline, ALLREDUCE_SPAN):
        raise Failed("no %s span in the timeline" % ALLREDUCE_SPAN)


def replayed_on_all(timeline, ranks):
    """Every one of RANKS ranks ran graphed steps (their replays' launch spans)."""
    replayed = {e["pid"] for e in spans(timeline, REPLAY_SPAN)}
    if replayed != set(range(int(ranks))):
        raise Failed("graphed steps (%s spans) on ranks %s, not on all %s"
                     % (REPLAY_SPAN, sorted(replayed), ranks))


def capture_holds_allreduces(many_metrics, one_metrics, timeline, ranks):
    """The RANKS-rank graph holds more nodes than one rank's of the same batch, which communicates
    nothing, and every rank replayed. On the CPU (the rehearsal) no graph has nodes to count."""
    many, one = summary(many_metrics), summary(one_metrics)
    if many.get("device") != "cpu" and (not one.get("cuda_graph_nodes") or
                                        many.get("cuda_graph_nodes", 0) <=
                                        one["cuda_graph_nodes"]):
        raise Failed("the %s-rank graph has %s nodes, one rank's %s: no collective captured"
                     % (ranks, many.get("cuda_graph_nodes"), one.get("cuda_graph_nodes")))
    replayed_on_all(timeline, ranks)


def same_buckets(many_metrics, many_timeline, one_metrics, one_timeline, ranks):
    """One rank alone (--communicate-alone) allreduces what each of RANKS ranks does: the same
    bytes a step (summary) and the same buckets a step on every rank (timeline)."""
    def buckets(path):
        count, size = collections.Counter(), collections.Counter()
        for e in spans(path, ALLREDUCE_SPAN):
            count[e["pid"], e["args"]["step"]] += 1
            size[e["pid"], e["args"]["step"]] += e["args"]["bytes"]
        per_rank = collections.defaultdict(set)
        for key in count:
            per_rank[key[0]].add((count[key], size[key]))
        return per_rank

    many_bytes = summary(many_metrics)["allreduce_bytes_per_step"]
    one_bytes = summary(one_metrics)["allreduce_bytes_per_step"]
    if many_bytes != one_bytes:
        raise Failed("allreduce_bytes_per_step %s on %s ranks, %s alone"
                     % (many_bytes, ranks, one_bytes))
    many, one = buckets(many_timeline), buckets(one_timeline)
    one_steps = one.get(0, set())
    if (len(one_steps) != 1 or next(iter(one_steps))[1] != one_bytes or
            sorted(many) != list(range(int(ranks))) or
            any(s != one_steps for s in many.values())):
        raise Failed("(buckets, bytes) a step alone %s; on each of %s ranks %s"
                     % (sorted(one_steps), ranks,
                        {r: sorted(s) for r, s in sorted(many.items())}))


def bench_right(log, ranks, backend, low, high, factor):
    """allreduce_bench's table: its backend and rank count, every size from LOW to HIGH by FACTOR,
    no wrong element, and the verdict OK."""
    try:
        with open(log) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Failed("unreadable log (%s)" % e)
    want = "%sbackend %s, %s ranks" % (BENCH_HEADER, backend, ranks)
    heads = [line for line in lines if line.startswith(BENCH_HEADER)]
    if not heads or not heads[0].startswith(want):
        raise Failed("the header is %r, not backend %s on %s ranks" % (heads[:1], backend, ranks))
    rows = [line.split() for line in lines[lines.index(heads[0]):] if line.startswith("  ")]
    sizes, size = [], int(low)
    while size <= int(high):
        sizes.append(size)
        size *= int(factor)
    try:
        got = [int(r[0]) for r in rows]
        wrong = sum(int(r[BENCH_WRONG_COLUMN]) for r in rows)
    except (IndexError, ValueError):
        raise Failed("rows that are not the table's: %s" % rows[:2])
    if got != sizes or wrong or BENCH_OK not in lines:
        raise Failed("sizes %s, %d wrong elements, verdict %r"
                     % (got, wrong, [line for line in lines if line.startswith("# Out of")]))


def graph_on_device_rates(metrics):
    """A graphed run's log windows, taken together, claim at most twice their epochs' images/s
    (they count the device's time, not the launches'); every window and the summary have the
    graphed phases, and the device's wait is beyond the comm wait."""
    found = records(metrics)
    epochs = {r["epoch"]: r["images_per_sec"] for r in found if r.get("event") == "epoch"}
    windows = [r for r in found if r.get("event") == "step" and epochs.get(r["epoch"])]
    if not windows:
        raise Failed("no log window in the metrics")
    # Steps over seconds, both in one step's images: a window stalled by a busy host slows this
    # total as it slows its epoch, where a median of the windows would leave it out.
    windows_rate = sum(r["steps"] for r in windows) / sum(
        r["steps"] / r["images_per_sec"] for r in windows)
    epochs_rate = sum(r["steps"] for r in windows) / sum(
        r["steps"] / epochs[r["epoch"]] for r in windows)
    if windows_rate > 2 * epochs_rate:
        raise Failed("the log windows claim %.1f times their epochs' images/s: host time alone?"
                     % (windows_rate / epochs_rate))
    totals = [r["phases_rank0"] for r in found if r.get("event") == "summary"]
    for phases in [r["phases"] for r in windows] + totals:
        if any(key not in phases for key in PHASE_KEYS):
            raise Failed("no %s in the phases of a graphed run: %s"
                         % (" and ".join(PHASE_KEYS), sorted(phases)))
    if not totals or totals[-1][PHASE_KEYS[1]] <= totals[-1][COMM_WAIT_KEY]:
        raise Failed("the summary's device wait is not beyond its comm wait: %s" % totals[-1:])


def same_parameters(eager_model, graphed_model):
    """Two exported models hold the same parameters within 1e-5."""
    import torch
    try:
        a = torch.jit.load(eager_model, map_location="cpu").state_dict()
        b = torch.jit.load(graphed_model, map_location="cpu").state_dict()
    except Exception as e:
        raise Failed("unreadable exported model (%s)" % e)
    worst = max((a[k] - b[k]).abs().max().item() for k in a)
    if sorted(a) != sorted(b) or worst > 1e-5:
        raise Failed("parameters differ from the eager run's by %.3g (> 1e-5)" % worst)


VERDICTS = {
    "summary": summary_value,
    "floor": accuracy_floor,
    "ends-as": ends_as,
    "allreduces": has_allreduces,
    "replayed": replayed_on_all,
    "capture": capture_holds_allreduces,
    "buckets": same_buckets,
    "bench": bench_right,
    "device-rates": graph_on_device_rates,
    "same-parameters": same_parameters,
}


def main(argv):
    verdict = VERDICTS.get(argv[0] if argv else "")
    if verdict is None or len(argv) - 1 != verdict.__code__.co_argcount:
        names = ", ".join("%s (%d)" % (k, v.__code__.co_argcount) for k, v in VERDICTS.items())
        print("usage: verdicts.py VERDICT ARGUMENT...; verdicts (arguments): " + names,
              file=sys.stderr)
        return 2
    try:
        verdict(*argv[1:])
    except Failed as e:
        print(e)
        return 1
    except (KeyError, TypeError, ValueError) as e:
        print("unexpected contents (%s: %s)" % (type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
