# SPDX-License-Identifier: Apache-2.0
"""bench/warp-bench.py where no GPU is needed (issue 34): its self-test of
the statistics, targets and report (--check), its refusal of bad options,
its skip (exit status 77) when no bench/same-clock.so was built, the names
it calls in that library, and one whole run against fakes of the library
and of Warp that model what each graph does; and bench/python-bench.py's
timing of a call as tg-bench times the C call.  The benches themselves run
on a GPU: make bench-warp, make bench-python."""
import contextlib
import ctypes
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

import tap

TOP = os.environ.get("abs_top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(TOP, "bench", "warp-bench.py")
PYTHON_BENCH = os.path.join(TOP, "bench", "python-bench.py")
# The scripts import same_clock from beside them, as run from there.
sys.path.insert(0, os.path.join(TOP, "bench"))
LIB = os.path.join(os.environ.get("abs_top_builddir", TOP), "bench", "same-clock.so")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True,
                          text=True, timeout=120)


def script(path=SCRIPT):
    spec = importlib.util.spec_from_file_location(
        os.path.basename(path)[:-3].replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeLib:
    """bench/same-clock.so as a model: graphs are handles naming their row;
    a launch runs the small kernels its row's flag selects; each side's
    time is fixed (TIMES, per launch)."""

    TIMES = {("skip", "ours"): 5.0, ("skip", "warp"): 4.4, ("skip", "floor"): 4.9,
             ("if-else", "ours"): 9.4, ("if-else", "warp"): 10.8,
             ("if-else", "floor"): 9.0, ("while-by", "ours"): 4800.0,
             ("while-by", "warp"): 4700.0, ("while-by", "floor"): 4500.0,
             ("skip", "warp0"): 4.5, ("if-else", "warp0"): 10.9,
             ("while-by", "warp0"): 4750.0, ("skip", "py"): 5.1,
             ("if-else", "py"): 9.5, ("switch", "py"): 9.4,
             ("switch", "ours"): 9.3, ("switch", "floor"): 9.0}
    STREAM, WARP_STREAM, BODY_STREAM = 0x100, 0x200, 0x300

    def __init__(self, shape):
        self.shape, self.values, self.handles, self.strings = shape, {}, {}, []
        self.calls = 0  # of tgb_clock_time
        self.autofree = set()  # the instantiations' autofree arguments
        # Graphs with an executable: the driver refuses a second one of a
        # graph holding conditional nodes while the first lives (record-test
        # /record/conditional-limits), as every graph here holds.
        self.instantiated = set()
        self.body_kernels = []  # what Warp's bodies enqueued, on which stream
        self.replays = []  # the batches of tgb_clock_replay_us

    def handle(self, row, side):
        h = 0x1000 + 16 * len(self.handles)
        self.handles[h] = (row, side)
        return h

    def tgb_clock_new(self):
        return 0x10

    def tgb_clock_stream(self, c):
        return self.STREAM

    def tgb_clock_begin(self, c):
        self.capturing = []

    def tgb_clock_end(self, c):
        row, self.capturing = self.capturing, None
        return self.handle(row[0], "py")

    def tgb_clock_constant(self, name):
        return self.shape.get(name.decode(), -1)

    def tgb_clock_address(self, c, name):
        return {b"flag": 0x2000, b"index": 0x2004, b"word": 0x2008,
                b"loop-flag": 0x3000}[name]

    def tgb_clock_sync(self, c):
        pass

    def tgb_clock_replay_us(self, c, batch):
        self.replays.append(batch)
        return 1.8

    def tgb_clock_set(self, c, name, value):
        self.values[name.decode()] = value

    def tgb_clock_ours(self, c, row):
        return self.handle(row.decode(), "ours")

    def tgb_clock_floor(self, c, row):
        return self.handle(row.decode(), "floor")

    def instantiate(self, graph, side=None):
        """A new executable of *graph* (as *side*), None where the driver
        refuses it."""
        if graph in self.instantiated:
            return None
        self.instantiated.add(graph)
        row, graph_side = self.handles[graph]
        return self.handle(row, side or graph_side)

    def tgb_clock_instantiate(self, graph, autofree):
        self.autofree.add(bool(autofree))
        return self.instantiate(graph)

    def tgb_clock_instantiate_kept(self, graph):
        assert self.handles[graph][1] == "warp"
        return self.instantiate(graph, "warp0")

    def tgb_clock_exec_destroy(self, exec_):
        assert exec_ in self.handles

    def tgb_clock_chain(self, graph):
        self.strings.append(ctypes.create_string_buffer(b"kc"))
        return ctypes.addressof(self.strings[-1])

    def tgb_clock_string_free(self, s):
        pass

    def tgb_clock_dot(self, graph, path):
        with open(path, "w") as f:
            f.write("digraph %s {}\n" % "_".join(self.handles[graph]).replace("-", "_"))
        return 0

    def tgb_clock_tiny(self, c, stream, n):
        self.body_kernels.append((stream, "tiny", n))

    def tgb_clock_reset(self, c, stream):
        self.body_kernels.append((stream, "reset", 1))

    def tgb_clock_relax(self, c, stream):
        self.body_kernels.append((stream, "relax", 1))

    def tgb_clock_runs(self, c, exec_):
        row, side = self.handles[exec_]
        flag, index, s = self.values.get("flag", 0), self.values.get("index", 0), self.shape
        return {"skip": s["kernels"] if flag else 0,
                "if-else": s["kernels"] if flag else 1,
                "switch": s["case-kernels"] if 0 <= index < s["cases"] else 0,
                "while-by": 0}[row]

    def tgb_clock_converged(self, c):
        return 1

    def tgb_clock_time(self, c, execs, n, batch, rounds, spin_us, samples, enqueue):
        for i in range(n):
            for r in range(rounds):
                samples[i * rounds + r] = self.TIMES[self.handles[execs[i]]] * (1 + r % 3
                                                                               * 0.001)
                # one late batch, in the first call
                enqueue[i * rounds + r] = 500.0 if i == r == self.calls == 0 else 40.0
        self.calls += 1
        return spin_us or 120.0


class FakeWarp(types.SimpleNamespace):
    """What warp-bench.py calls of Warp, capturing into FakeLib's model."""

    def __init__(self, lib):
        super().__init__(__version__="1.19.0-fake", int32="int32", lib=lib, row=None)
        self.stream = types.SimpleNamespace(cuda_stream=lib.WARP_STREAM)
        self.device = types.SimpleNamespace(name="fake GPU")

    def get_cuda_device(self, ordinal):
        return self.device

    def get_cuda_driver_version(self):
        return 13000

    def get_stream(self, device):
        return self.stream

    def array(self, ptr, dtype, shape, device):
        assert dtype == "int32" and shape == (1,) and device is self.device
        return types.SimpleNamespace(ptr=ptr)

    def ScopedDevice(self, device):
        return _Scope(lambda: None)

    def ScopedCapture(self, device, stream):
        assert stream is self.stream
        capture = types.SimpleNamespace(graph=None)

        def end():
            graph = types.SimpleNamespace(graph=ctypes.c_void_p(self.lib.handle(
                self.row, "warp")), graph_exec=None)
            capture.graph = graph
        return _Scope(end, capture)

    def capture_if(self, flag, on_true=None, on_false=None, stream=None):
        assert stream is self.stream and flag.ptr == 0x2000
        self.row = "skip" if on_false is None else "if-else"
        on_true()
        if on_false is not None:
            on_false()

    def capture_while(self, flag, body, stream=None):
        assert stream is self.stream and flag.ptr == 0x3000
        self.row = "while-by"
        body()

    def capture_launch(self, graph):
        graph.graph_exec = ctypes.c_void_p(self.lib.instantiate(graph.graph.value))

    def synchronize_device(self, device):
        pass


class FakePython:
    """track_gen.exec and torch as --python uses them, recording into
    FakeLib's capture."""

    def __init__(self, lib):
        self.lib = lib
        stream = types.SimpleNamespace(cuda_stream=lib.BODY_STREAM)
        self.cuda = types.SimpleNamespace(current_stream=lambda: stream)

    def capture_if(self, flag, on_true=None, on_false=None, stream=None):
        assert stream == self.lib.STREAM and flag == 0x2000
        self.lib.capturing.append("skip" if on_false is None else "if-else")
        for body in (on_true, on_false):
            if body is not None:
                body()

    def capture_switch(self, index, cases, stream=None):
        assert stream == self.lib.STREAM and index == 0x2004
        self.lib.capturing.append("switch")
        for case in cases:
            case()


class _Scope:
    def __init__(self, on_exit, value=None):
        self.on_exit, self.value = on_exit, value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        self.on_exit()


class WarpBench(unittest.TestCase):
    def test_check(self):
        r = run("--check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("warp-bench: --check: ok", r.stdout)
        self.assertIn("MISSED (0 of 2 series)", r.stdout)

    def test_bad_options_refused(self):
        for args in (["--rows=skip,nope"], ["--rounds=0"], ["--spin-us=-1"]):
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_no_library_skips(self):
        # make bench-warp passes an empty --lib where configure could not
        # build the library; with no warp it skips before that.
        r = run("--lib=")
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("warp-bench: skipped:", r.stderr)

    def test_library_names(self):
        """Every name the script declares is one the library exports, and
        the library's shapes are the ones --check assumes."""
        if not os.path.exists(LIB):
            self.skipTest("no %s: make bench/same-clock.so" % LIB)
        import same_clock

        wb = script()
        lib = same_clock.load(LIB)
        self.assertEqual({k: lib.tgb_clock_constant(k.encode()) for k in wb.SHAPE},
                         wb.SHAPE)

    def test_run_on_fakes(self):
        """A whole run on fakes: every row built, checked, timed and
        reported; each target's ratio; Warp's bodies on Warp's stream; the
        DOT files; the JSON."""
        wb = script()
        lib = FakeLib(wb.SHAPE)
        wp = FakeWarp(lib)
        with tempfile.TemporaryDirectory() as d:
            out, dot = os.path.join(d, "out.json"), os.path.join(d, "dots")
            args = wb.parse_args(["--quick", "--python", "--json=" + out,
                                  "--dot=" + dot])
            python = FakePython(lib)
            status = wb.bench(wp, wb.Clock(lib), args, (python, python))
            self.assertEqual(status, 0)
            with open(out) as f:
                doc = json.load(f)
            # ours, floor: 4 rows; Warp: 3 rows; from Python: 3 rows
            self.assertEqual(len(os.listdir(dot)), 4 + 4 + 3 + 3)
        self.assertEqual(doc["failures"], [])
        self.assertEqual(lib.autofree, {False})
        self.assertEqual(doc["instantiate"], "flags 0")
        self.assertEqual(doc["late_batches"], {"skip": 1, "if-else": 0, "while-by": 0,
                                               "switch": 0})
        targets = {(t["row"], t["against"]): t for t in doc["targets"]}
        self.assertEqual(set(targets), {(t.row, t.against) for t in wb.TARGETS})
        self.assertAlmostEqual(targets["skip", "warp"]["ratio"]["median"], 5.0 / 4.4,
                               places=3)
        self.assertTrue(targets["skip", "warp"]["met"].startswith("MISSED"))
        self.assertTrue(targets["if-else", "warp"]["met"].startswith("MISSED"))
        self.assertAlmostEqual(doc["times"]["while-by"]["ours"]["median"], 4.8, places=2)
        self.assertEqual(len(doc["times"]["skip"]["ours"]["series"]), 2)
        self.assertEqual(len(doc["samples"]["skip"]["warp"]), 2 * 5)
        self.assertAlmostEqual(doc["times"]["if-else"]["warp0"]["median"], 10.9, places=1)
        self.assertNotIn("warp0", doc["times"]["switch"])
        self.assertEqual({s for s, _, _ in lib.body_kernels},
                         {lib.WARP_STREAM, lib.BODY_STREAM})
        self.assertIn((lib.WARP_STREAM, "tiny", wb.SHAPE["kernels"]), lib.body_kernels)
        self.assertIn((lib.WARP_STREAM, "relax", 1), lib.body_kernels)
        self.assertIn((lib.BODY_STREAM, "tiny", wb.SHAPE["case-kernels"]),
                      lib.body_kernels)
        self.assertAlmostEqual(doc["times"]["switch"]["py"]["median"], 9.4, places=1)
        self.assertNotIn("py", doc["times"]["while-by"])

    @staticmethod
    def quick_run(wb, lib, *options):
        """A --quick run of *wb* on *lib*'s fakes with *options* (--python:
        FakePython too): its status, its JSON and what it printed."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            args = wb.parse_args(["--quick", "--json=" + out] + list(options))
            python = FakePython(lib) if args.python else None
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                status = wb.bench(FakeWarp(lib), wb.Clock(lib), args,
                                  (python, python) if python else None)
            with open(out) as f:
                return status, json.load(f), printed.getvalue()

    def test_autofree_instantiates_ours_as_warp_does(self):
        wb = script()
        lib = FakeLib(wb.SHAPE)
        status, doc, printed = self.quick_run(wb, lib, "--autofree")
        self.assertEqual(status, 0, printed)
        self.assertEqual(lib.autofree, {True})
        self.assertEqual(doc["instantiate"], "AutoFreeOnLaunch")
        self.assertIn("floors instantiated with AutoFreeOnLaunch", printed)

    def test_python_column_late_fails_no_row(self):
        """The Python column's graph waits at every launch (it holds a user
        object): counted and said apart, no target row fails for it."""
        wb = script()
        lib = FakeLib(wb.SHAPE)
        time = lib.tgb_clock_time

        def py_late(c, execs, n, batch, rounds, spin_us, samples, enqueue):
            spin = time(c, execs, n, batch, rounds, spin_us, samples, enqueue)
            for i in range(n):
                for r in range(rounds):
                    late = lib.handles[execs[i]][1] == "py"
                    enqueue[i * rounds + r] = 10 * spin if late else 40.0
            return spin

        lib.tgb_clock_time = py_late
        status, doc, printed = self.quick_run(wb, lib, "--python")
        self.assertEqual(status, 0, printed)
        self.assertEqual(doc["failures"], [])
        self.assertEqual(set(doc["late_batches"].values()), {0})
        self.assertIn("skip: ours from Python: the GPU waited for the host in 10 of 10",
                      printed)

    def test_row_this_driver_lacks(self):
        """A row the build or driver cannot make (SWITCH before CUDA 12.8)
        is skipped, and its target says it was not measured."""
        wb = script()
        lib = FakeLib(wb.SHAPE)
        ours = lib.tgb_clock_ours
        lib.tgb_clock_ours = lambda c, row: 0 if row == b"switch" else ours(c, row)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            args = wb.parse_args(["--quick", "--rows=skip,switch", "--json=" + out])
            self.assertEqual(wb.bench(FakeWarp(lib), wb.Clock(lib), args), 0)
            with open(out) as f:
                doc = json.load(f)
        targets = {(t["row"], t["against"]): t["met"] for t in doc["targets"]}
        self.assertEqual(targets["switch", "floor"],
                         "NOT MEASURED (row skipped, said why above)")
        self.assertNotIn("if-else", doc["times"])
        self.assertFalse(any(row == "if-else" for row, _ in targets))


class PythonBench(unittest.TestCase):
    def test_c_method(self):
        """bench/python-bench.py times the Python call as tg-bench times the
        C call: per round and callable, one call and a wait, then 8 calls
        timed, then a wait; the median per call."""
        pb = script(PYTHON_BENCH)
        events = []
        fns = {name: (lambda name=name: events.append(name)) for name in ("a", "b")}
        medians = pb.c_method_us(fns, 3, lambda: events.append("sync"))
        self.assertEqual(pb.C_BATCH, 8)
        one_round = []
        for name in ("a", "b"):
            one_round += [name, "sync"] + [name] * pb.C_BATCH + ["sync"]
        self.assertEqual(events, one_round * 3)
        self.assertEqual(set(medians), {"a", "b"})
        self.assertTrue(all(0 < us < 1e4 for us in medians.values()), medians)
        # Samples timed in C come in turn, one per round.
        events.clear()
        medians = pb.c_method_us(fns, 3, lambda: events.append("sync"),
                                 {"c": lambda: events.append("c") or 1.5})
        self.assertEqual(events, (one_round + ["c"]) * 3)
        self.assertEqual(medians["c"], 1.5)

    def test_replay_one_clock(self):
        """The C call in this process (bench/same-clock.so) beside a Python
        producer of the same shape: 32 stages of the library's small kernel,
        each declaring the word, bound to the library's; both on the
        library's stream, in turn; the row holds the target (+0.5 us)."""
        pb = script(PYTHON_BENCH)
        lib = FakeLib(dict(script().SHAPE, **{"replay-stages": 32}))
        producers = []

        class Producer:
            def __init__(self, name):
                self.name, self.stages, self.declared, self.bound = name, [], [], {}
                producers.append(self)
                self.runner = types.SimpleNamespace(stats=types.SimpleNamespace(
                    n_captures=1, n_recaptures=0, n_replays=0))

            def add_device_stage(self, name, func, capture_safe):
                self.stages.append(func)
                return len(self.stages) - 1

            def declare_binding(self, stage, name, size):
                self.declared.append((stage, name, size))

            def bind(self, name, address, size):
                self.bound[name] = (address, size)

            def run(self, stream, policy):
                assert (stream, policy) == (lib.STREAM, "REPLAY")
                if self.runner.stats.n_replays == 0:  # the first call captures
                    for stage in self.stages:
                        stage(types.SimpleNamespace(stream=lib.BODY_STREAM))
                self.runner.stats.n_replays += 1

        pb.tx = types.SimpleNamespace(Producer=Producer,
                                      Policy=types.SimpleNamespace(REPLAY="REPLAY"))
        pb.same_clock = types.SimpleNamespace(load=lambda path: lib)
        bench = pb.Bench(quick=True)
        pb.bench_replay_c(bench, "same-clock.so")
        self.assertEqual(bench.failures, [])
        [p] = producers
        self.assertEqual(len(p.stages), 32)
        self.assertEqual(p.declared, [(i, "word", 4) for i in range(32)])
        self.assertEqual(p.bound, {"word": (0x2008, 4)})
        self.assertEqual(lib.body_kernels, [(lib.BODY_STREAM, "tiny", 1)] * 32)
        self.assertEqual(lib.replays, [pb.C_BATCH] * 25)
        [row] = bench.rows
        self.assertEqual((row.ours > 0, row.floor, row.kind, row.target),
                         (True, 1.8, "plus", 0.5))

    def test_host_costs(self):
        """--host-costs times a Python call's own pieces with no GPU."""
        r = subprocess.run([sys.executable, PYTHON_BENCH, "--host-costs"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 5, r.stdout)
        self.assertTrue(all(line.endswith(" ns") for line in lines), r.stdout)


if __name__ == "__main__":
    sys.exit(tap.main())
