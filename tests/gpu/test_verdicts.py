#!/usr/bin/env python3
"""tests/gpu/test_verdicts.py — tests/gpu/verdicts.py: each verdict passes on files shaped as the
program writes them and fails, saying why, on each planted fault: a renamed span, phase or key, a
wrong value, a lost rank. (The multi-rank rehearsal, ctest e2e_gpu_multirank, runs them on files
the program itself wrote on the CPU.)"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

VERDICTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verdicts.py")


def summary(**fields):
    record = {"event": "summary", "test_loss": 0.5, "test_accuracy": 0.8, "device": "cuda",
              "world_size": 8, "backend": "nccl", "allreduce_bytes_per_step": 300,
              "phases_rank0": {"launch_s": 1.0, "device_s": 2.0, "comm_wait_s": 0.0}}
    record.update(fields)
    return record


def span(name, rank, step, size=0):
    return {"name": name, "ph": "X", "pid": rank, "tid": 0, "ts": 0, "dur": 1,
            "args": {"step": step, "bytes": size}}


class Verdicts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def file(self, name, content):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            if name.endswith(".jsonl"):
                f.write("".join(json.dumps(r) + "\n" for r in content))
            elif name.endswith(".json"):
                json.dump({"traceEvents": content}, f)
            else:
                f.write(content)
        return path

    def verdict(self, *args):
        done = subprocess.run([sys.executable, VERDICTS, *args], capture_output=True, text=True)
        return done.returncode, done.stdout.strip()

    def passes(self, *args):
        rc, why = self.verdict(*args)
        self.assertEqual(rc, 0, why)
        return why

    def fails(self, expected, *args):
        rc, why = self.verdict(*args)
        self.assertEqual(rc, 1, "passed: %s" % (args,))
        self.assertIn(expected, why)

    def test_usage(self):
        self.assertEqual(self.verdict("no-such-verdict")[0], 2)
        self.assertEqual(self.verdict("ends-as", "one-argument")[0], 2)

    def test_summary_value(self):
        metrics = self.file("m.jsonl", [{"event": "step"}, summary(cuda_graph_fallback="rank 1")])
        self.assertEqual(self.passes("summary", metrics, "cuda_graph_fallback"), "rank 1")
        self.assertEqual(self.passes("summary", metrics, "absent"), "")
        cut = self.file("cut.jsonl", [{"event": "step"}])
        self.assertEqual(self.passes("summary", cut, "world_size"), "")

    def test_floor(self):
        metrics = self.file("m.jsonl", [summary(train_images_per_sec=1234.4, wall_s=5.01)])
        self.assertEqual(self.passes("floor", metrics, "0.75"), "1234 0.8000 5.0")
        self.fails("test accuracy 0.8000 below 0.85", "floor", metrics, "0.85")
        self.fails("last record is not the summary", "floor",
                   self.file("cut.jsonl", [{"event": "epoch"}]), "0.5")

    def test_ends_as(self):
        a = self.file("a.jsonl", [summary()])
        b = self.file("b.jsonl", [summary(test_loss=0.5000004)])
        self.passes("ends-as", a, b, "1e-6", "0")
        self.fails("relative", "ends-as", a, b, "1e-7", "0")
        self.fails("accuracy 0.7000", "ends-as", a,
                   self.file("c.jsonl", [summary(test_accuracy=0.7)]), "1", "0.05")

    def test_allreduces_and_replays(self):
        eager = self.file("e.json", [span("allreduce", 0, 1, 10), span("forward", 0, 1)])
        self.passes("allreduces", eager)
        self.fails("no allreduce span", "allreduces", self.file("n.json", [span("forward", 0, 1)]))
        graphed = self.file("g.json", [span("launch", r, 5) for r in range(4)])
        self.passes("replayed", graphed, "4")
        self.fails("on ranks [0, 1, 2], not on all 4", "replayed",
                   self.file("l.json", [span("launch", r, 5) for r in range(3)]), "4")
        # The name the timeline wrote before its launch and device phases.
        self.fails("on ranks [], not on all 4", "replayed",
                   self.file("o.json", [span("graphed_step", r, 5) for r in range(4)]), "4")

    def test_capture(self):
        timeline = self.file("g.json", [span("launch", r, 5) for r in range(2)])
        many = self.file("many.jsonl", [summary(cuda_graph_nodes=120)])
        one = self.file("one.jsonl", [summary(cuda_graph_nodes=100)])
        self.passes("capture", many, one, timeline, "2")
        self.fails("no collective captured", "capture", one, one, timeline, "2")
        self.fails("no collective captured", "capture", many,
                   self.file("none.jsonl", [summary()]), timeline, "2")
        # On the CPU (the rehearsal) no graph has nodes; the replays still count.
        cpu = self.file("cpu.jsonl", [summary(device="cpu")])
        self.passes("capture", cpu, cpu, timeline, "2")
        self.fails("not on all 3", "capture", cpu, cpu, timeline, "3")

    def test_buckets(self):
        def timeline(name, ranks, sizes):
            return self.file(name, [span("allreduce", r, step, size) for r in range(ranks)
                                    for step in (1, 2) for size in sizes])
        many_metrics = self.file("many.jsonl", [summary()])
        one_metrics = self.file("one.jsonl", [summary(world_size=1)])
        many = timeline("many.json", 2, (100, 200))
        one = timeline("one.json", 1, (100, 200))
        self.passes("buckets", many_metrics, many, one_metrics, one, "2")
        self.fails("on each of 2 ranks", "buckets", many_metrics,
                   timeline("other.json", 2, (300,)), one_metrics, one, "2")
        self.fails("on each of 3 ranks", "buckets", many_metrics, many, one_metrics, one, "3")
        self.fails("allreduce_bytes_per_step 300 on 2 ranks, 400 alone", "buckets", many_metrics,
                   many, self.file("more.jsonl", [summary(allreduce_bytes_per_step=400)]), one,
                   "2")

    def bench_log(self, wrong=0, verdict="# Out of bounds values : 0 OK", sizes=(8, 64, 512)):
        rows = "".join("  %10d %10d float sum 10.0 1.0 1.0 %d\n" % (s, s // 4, wrong)
                       for s in sizes)
        return self.file("bench.log", "mpirun ...\n# allreduce_bench: backend nccl, 8 ranks on 1 "
                         "node, float32 sum, in place\n#  bytes count\n" + rows + verdict + "\n")

    def test_bench(self):
        args = ("8", "nccl", "8", "512", "8")
        self.passes("bench", self.bench_log(), *args)
        self.fails("not backend mpi on 8 ranks", "bench", self.bench_log(), "8", "mpi", "8",
                   "512", "8")
        self.fails("3 wrong elements", "bench", self.bench_log(wrong=1), *args)
        self.fails("sizes [8, 64]", "bench", self.bench_log(sizes=(8, 64)), *args)
        self.fails("verdict []", "bench", self.bench_log(verdict="# done"), *args)

    def test_device_rates(self):
        def metrics(name, window_rates=(1000.0,), epoch_rate=1000.0, phases=None, total=None):
            phases = phases or {"launch_s": 0.1, "device_s": 0.2, "comm_wait_s": 0.0}
            windows = [{"event": "step", "epoch": 1, "steps": 5, "images_per_sec": rate,
                        "phases": phases} for rate in window_rates]
            return self.file(name, windows + [
                {"event": "epoch", "epoch": 1, "images_per_sec": epoch_rate},
                summary(phases_rank0=total or phases)])
        self.passes("device-rates", metrics("good.jsonl"))
        self.fails("claim 3.0 times", "device-rates", metrics("fast.jsonl", window_rates=[3000]))
        # One window of four stalled ten times over: the epoch's rate is the windows' together.
        self.passes("device-rates", metrics("stalled.jsonl", window_rates=[1000] * 3 + [100],
                                            epoch_rate=4 / (3 / 1000 + 1 / 100)))
        self.fails("no launch_s and device_s", "device-rates",
                   metrics("eager.jsonl", phases={"forward_s": 0.1, "comm_wait_s": 0.1}))
        self.fails("not beyond its comm wait", "device-rates", metrics(
            "wait.jsonl", total={"launch_s": 0.1, "device_s": 0.2, "comm_wait_s": 0.3}))
        self.fails("no log window", "device-rates", self.file("none.jsonl", [summary()]))


if __name__ == "__main__":
    unittest.main()
