#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""python-bench.py: track_gen from Python beside its floors (issue 18).

Every row sets ours beside a floor measured in the same run: torch's own
CUDA graphs, a raw cudaGraphLaunch through ctypes, the same torch ops called
directly, a host readback, and the C call: as bench/tg-bench measures it
(run here as a subprocess, its JSON read back), and made in this process by
tg-bench's code (bench/same-clock.so, --lib) beside the same call from
Python, on one clock (the REPLAY target).  It prints one table like
tg-bench's and writes every row, with the environment, as JSON.

    make bench-python                      # from a configured build tree
    PYTHONPATH=<dir holding track_gen> python3 bench/python-bench.py \\
        --json=out.json [--tg-bench=bench/tg-bench] [--lib=bench/same-clock.so]
        [--quick]
    PYTHONPATH=... python3 bench/python-bench.py --host-costs   # CPU only

Exit status: 0 when it ran (a missed target is a row marked MISS, not a
failure), 1 when a check failed (work that did not run, a floor that could
not be measured), 77 without torch or a CUDA GPU.
"""
import argparse
import ctypes
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import namedtuple

import same_clock  # beside this script

STAGES = 32  # kernels per call, as in tg-bench's exec section
# The row of tg-bench's JSON that times tg_producer_run (REPLAY) from C.
C_REPLAY_ROW = "replay: host time per call (%d kernels)" % STAGES
# Spin before a GPU-timed batch: ~1 ms at H200 clocks, longer than the host
# takes to enqueue any batch below, so the events see the GPU alone.
SPIN_CYCLES = 2000000


def skip(reason):
    """Exit status 77, the automake convention for a skipped test."""
    print("python-bench: skipped: %s" % reason, file=sys.stderr)
    sys.exit(77)


torch = tx = tgt = track_gen = None


def load():
    """Imports track_gen and torch (after --help, which needs neither)."""
    global torch, tx, tgt, track_gen
    try:
        import track_gen
        from track_gen import exec as tx
    except ImportError as e:
        sys.exit("python-bench: cannot import track_gen (%s); put the directory that "
                 "holds it on PYTHONPATH" % e)
    try:
        import torch
    except ImportError as e:
        skip("needs torch (%s)" % e)
    if not torch.cuda.is_available():
        skip("needs a CUDA GPU (torch.cuda.is_available() is False)")
    from track_gen.interop import torch as tgt

# --------------------------------------------------------------------------
# The table.

Row = namedtuple("Row", "group what unit ours floor floor_what kind target stats")
Timing = namedtuple("Timing", "best median")


class Bench:
    """Rows, failures and other JSON members of one run; printed and written
    like tg-bench's table.

    A row's *kind*: "ratio" (met when ours / floor <= target), "plus" (met
    when ours <= floor + target, in the row's unit) or "info" (shown beside
    its floor, held to no target)."""

    def __init__(self, quick):
        self.quick = quick
        self.rows, self.failures, self.json = [], [], {}

    def add(self, group, what, ours, floor, floor_what, kind="info", target=0.0,
            unit="us", stats=None):
        row = Row(group, what, unit, ours, floor, floor_what, kind, target, stats)
        self.rows.append(row)
        print("  %-58s %10.3f %-3s floor %10.3f (%s)" % (what, ours, unit, floor,
                                                        floor_what), flush=True)
        return row

    def fail(self, message):
        print("python-bench: FAILED: %s" % message, file=sys.stderr, flush=True)
        self.failures.append(message)

    @staticmethod
    def met(r):
        if r.kind == "ratio":
            return "PASS" if r.ours <= r.floor * r.target else "MISS"
        if r.kind == "plus":
            return "PASS" if r.ours <= r.floor + r.target else "MISS"
        return "-"

    @staticmethod
    def bound(r):
        return {"ratio": "<=%.2fx" % r.target,
                "plus": "<=+%.2f" % r.target}.get(r.kind, "")

    def print_table(self):
        print("\n%-58s %10s %10s %-4s %7s %8s %-4s %s" % (
            "what", "ours", "floor", "unit", "ratio", "target", "met", "the floor"))
        group = None
        for r in self.rows:
            if r.group != group:
                group = r.group
                print("[%s]" % group)
            print("%-58s %10.3f %10.3f %-4s %7.3f %8s %-4s %s" % (
                r.what, r.ours, r.floor, r.unit, r.ours / r.floor, self.bound(r),
                self.met(r), r.floor_what))

    def write_json(self, path):
        rows = [{"group": r.group, "what": r.what, "unit": r.unit, "ours": r.ours,
                 "floor": r.floor, "floor_what": r.floor_what,
                 "ratio": r.ours / r.floor, "target": self.bound(r),
                 "met": self.met(r), "stats": r.stats} for r in self.rows]
        doc = dict(self.json, rows=rows, failures=self.failures)
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


# --------------------------------------------------------------------------
# The one timing helper.

def time_us(fns, clock, batch, rounds):
    """Times each callable of *fns* (a dict, name -> fn of no arguments), per
    call, in microseconds: {name: Timing(best, median)} over *rounds*.

    The callables take turns, one batch of *batch* calls each per round, so
    that drift during the run (clocks, other tenants) affects them alike.
    clock "host": the time the host takes to make the calls (the enqueue
    time); the device is synchronized after each batch, outside the clock,
    so that a full launch queue never stalls the host (that would time the
    GPU: issue 18 measured 26 us per call for every launcher alike when
    20000 calls went back to back).  clock "gpu": CUDA events around the
    batch on torch's current stream, behind a spin kernel that keeps the GPU
    busy while the host enqueues, so that the host's pace never shows."""
    calls = range(batch)
    start, stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    spin = getattr(torch.cuda, "_sleep", None)
    samples = {name: [] for name in fns}
    for fn in fns.values():  # warm-up: first captures, caches, clocks
        for _ in calls:
            fn()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for name, fn in fns.items():
            if clock == "gpu":
                if spin is not None:
                    spin(SPIN_CYCLES)
                start.record()
                for _ in calls:
                    fn()
                stop.record()
                stop.synchronize()
                samples[name].append(start.elapsed_time(stop) * 1e3 / batch)
            else:
                t0 = time.perf_counter()
                for _ in calls:
                    fn()
                t1 = time.perf_counter()
                torch.cuda.synchronize()
                samples[name].append((t1 - t0) * 1e6 / batch)
    return {name: Timing(min(s), statistics.median(s)) for name, s in samples.items()}


# tg-bench's batch for the host time of a REPLAY call (exec-bench.c).
C_BATCH = 8


def c_method_us(fns, rounds, sync, samplers=None):
    """Host time per call of each callable of *fns* (name -> fn), timed as
    tg-bench times the C call (tg_bench_wall_us_alternated, host only): in
    each round, each callable in turn makes one call, *sync* waits for the
    GPU, then C_BATCH calls, written out (no loop), go between two reads of
    the clock, and *sync* waits again; then each of *samplers* (name -> fn
    returning one such sample, timed in C) gives one.  {name: median over
    *rounds*, in microseconds}.  time_us's batches of 100 leave the GPU up
    to ~90 graphs behind the host, so its calls go behind a deep queue;
    C_BATCH calls after a wait never queue more than C_BATCH."""
    samplers = samplers or {}
    samples = {name: [] for name in list(fns) + list(samplers)}
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for name, f in fns.items():
            f()
            sync()
            t0 = clock()
            f(); f(); f(); f(); f(); f(); f(); f()  # C_BATCH calls
            t1 = clock()
            sync()
            samples[name].append((t1 - t0) / 1e3 / C_BATCH)
        for name, sample in samplers.items():
            samples[name].append(sample())
    return {name: statistics.median(s) for name, s in samples.items()}


def host_costs(native, n=100000):
    """What the pieces of a Python REPLAY call that the C call does not make
    cost this host's CPU, each timed alone (no GPU needed): {piece: ns per
    call, the best of 7 runs of *n*}.  The interpreter's call (the timing
    loop and a partial, as the REPLAY rows call), the stream argument
    converted (an int, as the rows pass it; an object with __cuda_stream__,
    as torch's streams are passed), the policy an IntEnum rather than an
    int, and the GIL released and taken again around a C call (as
    Producer.run does around tg_producer_run; ctypes.CDLL releases it,
    ctypes.PyDLL keeps it)."""
    import operator

    class Stream:  # a stream of the CUDA stream protocol, as torch's
        def __cuda_stream__(self):
            return (0, 0x7f0012345678)

    def per_call(f):
        best = None
        for _ in range(7):
            t0 = time.perf_counter_ns()
            for _ in range(n):
                f()
            t = (time.perf_counter_ns() - t0) / n
            best = t if best is None else min(best, t)
        return best

    noop = per_call(functools.partial(len, ()))
    gil_freed, gil_held = (per_call(getattr(ctypes, lib)(None).getppid)
                           for lib in ("CDLL", "PyDLL"))
    policy = native.Policy.REPLAY
    return {"call in the timing loop": noop,
            "stream argument (an int)": per_call(functools.partial(
                native._stream_handle, 0x7f0012345678)) - noop,
            "stream argument (__cuda_stream__)": per_call(functools.partial(
                native._stream_handle, Stream())) - noop,
            "policy an IntEnum, not an int": per_call(functools.partial(
                operator.index, policy)) - per_call(functools.partial(
                    operator.index, int(policy))),
            "GIL released and taken again": gil_freed - gil_held}


# --------------------------------------------------------------------------
# The work: STAGES tiny torch ops, each one kernel on a one-element tensor.

class Work:
    """The counter every row's kernels bump, the stage functions, and checks
    that a call did the work it claims (a row of nothing is fast)."""

    def __init__(self, bench):
        self.bench = bench
        self.x = torch.zeros(1, dtype=torch.int64, device="cuda")
        x = self.x

        def bump(ctx):  # ctx: a LaunchContext, or None when called directly
            x.add_(1)  # one small elementwise kernel on torch's current stream

        self.bump = bump

    def direct(self):
        """The STAGES ops called directly: the floor of a producer's stages."""
        for _ in range(STAGES):
            self.bump(None)

    def producer(self, name):
        """A producer of STAGES capture-safe stages, each one op; each stage
        declares the bound counter, as tg-bench's tiny producer does, so that
        every call checks its bindings."""
        p = tx.Producer(name)
        for i in range(STAGES):
            s = p.add_device_stage("bump%d" % i, self.bump, capture_safe=True)
            p.declare_binding(s, "x", 8, dtype="int64")
        p.bind("x", self.x)
        return p

    def check(self, what, fn, want):
        """Calls fn once and checks that the counter moved by *want*."""
        torch.cuda.synchronize()
        before = int(self.x.item())
        fn()
        torch.cuda.synchronize()
        got = int(self.x.item()) - before
        if got != want:
            self.bench.fail("%s: %d kernels ran, not %d" % (what, got, want))
        return got == want


def torch_graph(body, keep_graph=False):
    """A torch.cuda.CUDAGraph of body(), captured by torch."""
    g = torch.cuda.CUDAGraph(keep_graph=True) if keep_graph else torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    return g


def captured_once(bench, p):
    """Fails unless REPLAY captured *p* once and then only launched it, so
    that its rows timed launches, not captures."""
    s = p.runner.stats
    if s.n_captures != 1 or s.n_recaptures != 0 or s.n_replays < 2:
        bench.fail("%s: %d captures, %d re-captures, %d replays: not one capture "
                   "then launches" % (p.name, s.n_captures, s.n_recaptures, s.n_replays))


def tg_graph(body):
    """A torch graph holding what body() records through TrackGen (the
    capture registered, so calls that name no stream record into it)."""
    g = torch.cuda.CUDAGraph()
    with tgt.graph(g):
        body()
    return g


# --------------------------------------------------------------------------
# Raw launches through ctypes, and the environment.

def graph_launcher():
    """(launch, name): cudaGraphLaunch of the CUDA runtime torch loaded into
    this process (found in /proc/self/maps; TrackGen's own runtime is static
    and hidden), else the driver's cuGraphLaunch, which it calls."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "libcudart.so" in line})
    for path in paths:
        try:
            fn = ctypes.CDLL(path).cudaGraphLaunch
            name = "ctypes cudaGraphLaunch (%s)" % os.path.basename(path)
            break
        except (OSError, AttributeError):
            continue
    else:
        fn, name = ctypes.CDLL("libcuda.so.1").cuGraphLaunch, "ctypes cuGraphLaunch"
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int
    return fn, name


def raw_exec(work):
    """(graph, exec) for the raw launch: a torch graph of the same ops and
    its cudaGraphExec_t.  Recent torch hands out the exec its replay()
    launches; with an older one we keep the graph (keep_graph=True) and
    instantiate it with the driver."""
    if hasattr(torch.cuda.CUDAGraph, "raw_cuda_graph_exec"):
        g = torch_graph(work.direct)
        return g, g.raw_cuda_graph_exec()
    g = torch_graph(work.direct, keep_graph=True)
    exec_ = ctypes.c_void_p()
    instantiate = ctypes.CDLL("libcuda.so.1").cuGraphInstantiateWithFlags
    instantiate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                            ctypes.c_ulonglong]
    if instantiate(ctypes.byref(exec_), g.raw_cuda_graph(), 0) != 0:
        raise RuntimeError("cuGraphInstantiateWithFlags failed")
    return g, exec_.value


def environment():
    """What the numbers depend on: GPU, driver, torch, CUDA, CPU, Python."""
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "torch_cuda": torch.version.cuda, "python": platform.python_version(),
           "track_gen": track_gen.__version__}
    try:
        with open("/proc/driver/nvidia/version") as f:
            env["driver"] = f.readline().strip()
    except OSError:  # a container without the driver's /proc entry
        version = ctypes.c_int()
        try:
            ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version))
            env["driver"] = "CUDA driver API %d" % version.value
        except (OSError, AttributeError):
            env["driver"] = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                              if line.startswith("model name"))
    except (OSError, StopIteration):
        env["cpu"] = platform.processor()
    # time_us's spin before GPU-timed batches (torch's private _sleep)
    env["gpu_timing_spin"] = hasattr(torch.cuda, "_sleep")
    return env


def c_replay_us(bench, path):
    """The C call: runs tg-bench's exec section and reads its REPLAY row (the
    median over alternated batches of 8, tg-bench's method)."""
    if path is None or not os.access(path, os.X_OK):
        bench.fail("no tg-bench %s: build it (make bench/tg-bench) or pass "
                   "--tg-bench=PATH; the C call's row is missing"
                   % ("at " + path if path else "in bench/ here nor beside this file"))
        return None
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "exec.json")
        try:
            r = subprocess.run([path, "--only=exec", "--json=" + out],
                               capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            bench.fail("%s --only=exec: %s" % (path, e))
            return None
        if r.returncode != 0:
            bench.fail("%s --only=exec exited with %d: %s" % (path, r.returncode,
                                                                r.stderr[-2000:]))
            return None
        with open(out) as f:
            rows = json.load(f)["rows"]
    bench.json["c_bench"] = {"command": [path, "--only=exec"], "rows": rows}
    for row in rows:
        if row["what"] == C_REPLAY_ROW:
            return row["ours"]
    bench.fail("%s wrote no row %r" % (path, C_REPLAY_ROW))
    return None


def default_lib():
    """bench/same-clock.so of the build tree we run from, else beside this
    file."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join("bench", "same-clock.so"),
                 os.path.join(here, "same-clock.so")):
        if os.path.exists(path):
            return path
    return None


def default_tg_bench():
    """bench/tg-bench of the build tree we run from, else beside this file."""
    for path in (os.path.join("bench", "tg-bench"),
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "tg-bench")):
        if os.access(path, os.X_OK):
            return path
    return None


# --------------------------------------------------------------------------
# The sections, one per benchmark of issue 18.

def bench_replay(bench, work, stream, c_us):
    """REPLAY host time per call from Python, beside torch's replay() of the
    same ops, a raw launch of torch's exec of them, and the C call."""
    n = 20 if bench.quick else 200
    handle = stream.cuda_stream
    p = work.producer("replay-32")
    g, exec_ = raw_exec(work)
    launch, launch_name = graph_launcher()
    e, s = ctypes.c_void_p(exec_), ctypes.c_void_p(handle)

    def raw_launch():
        if launch(e, s) != 0:
            raise RuntimeError("%s failed" % launch_name)

    # Bound methods and partials: the timing loop adds one Python call to
    # each, the least a caller pays (the no-op line shows how much).  The
    # raw launch is timed bare; raw_launch checks its status once, first.
    fns = {"ours": functools.partial(p.run, handle, tx.Policy.REPLAY),
           "auto": functools.partial(p.run, stream), "torch": g.replay,
           "raw": functools.partial(launch, e, s), "noop": functools.partial(len, ())}
    ok = all([work.check("replay from Python", fns["ours"], STAGES),
              work.check("replay, AUTO on a torch stream", fns["auto"], STAGES),
              work.check("torch's replay()", g.replay, STAGES),
              work.check(launch_name, raw_launch, STAGES)])
    t = time_us(fns, "host", 100, n)
    # The C call's method, for the row beside it (as many samples).
    same = c_method_us({"ours": fns["ours"], "noop": fns["noop"]},
                       5 * (5 if bench.quick else 41), torch.cuda.synchronize)
    captured_once(bench, p)
    bench.json["python_call_us"] = t["noop"].best
    bench.json["c_method_us"] = same
    print("  # a no-op call in the timing loop: %.3f us; in tg-bench's method: %.3f us"
          % (t["noop"].best, same["noop"]))
    if not ok:
        return
    # Each row sets one statistic on both sides: the best batch (the issue's
    # method) beside torch and the raw launch, timed here alike; the median
    # beside the C call, which tg-bench reports as a median.
    stats = {k: t[k]._asdict() for k in ("ours", "torch", "raw")}
    bench.add("replay", "replay from Python: host time per call (%d kernels)" % STAGES,
              t["ours"].best, t["torch"].best, "torch.cuda.CUDAGraph.replay()", "ratio",
              0.75, stats=stats)
    # The target is bench_replay_c's, on one clock; tg-bench's own run
    # (another process) is shown.
    if c_us is not None:
        bench.add("replay", "replay from Python: same, median, vs tg-bench's C call",
                  same["ours"], c_us, "tg_producer_run in tg-bench; both timed as "
                  "tg-bench does (median of batches of %d after a sync)" % C_BATCH,
                  stats=dict(stats, c=c_us, c_method=same))
        bench.add("replay", "replay from Python: median of batches of 100, vs the C call",
                  t["ours"].median, c_us, "tg_producer_run in tg-bench (batches of %d)"
                  % C_BATCH, stats=dict(stats, c=c_us))
    bench.add("replay", "replay from Python: same, vs a raw launch", t["ours"].best,
              t["raw"].best, launch_name + " of torch's exec", stats=stats)
    bench.add("replay", "replay as usually written: run(torch stream), AUTO",
              t["auto"].best, t["torch"].best, "torch.cuda.CUDAGraph.replay()",
              stats={"ours": t["auto"]._asdict(), "torch": t["torch"]._asdict()})


def bench_replay_c(bench, path):
    """REPLAY host time per call from Python beside the C call in this
    process, on one clock: bench/same-clock.so's tg-bench code makes the C
    call (tgb_clock_replay_us: a producer of 32 stages of one small kernel,
    exec-bench.c's), and a Python producer of 32 stages enqueueing that
    kernel makes the Python call, on the same stream, sample by sample in
    turn, both timed as tg-bench times the C call (c_method_us)."""
    if path is None:
        bench.fail("no bench/same-clock.so here nor beside this file: build it (make "
                   "bench/same-clock.so) or pass --lib=PATH; the one-clock row is "
                   "missing")
        return
    lib = same_clock.load(path)
    c = lib.tgb_clock_new()
    if not c:
        bench.fail("bench/same-clock.so found no CUDA GPU (it said why above)")
        return
    stages, handle = lib.tgb_clock_constant(b"replay-stages"), lib.tgb_clock_stream(c)
    p = tx.Producer("replay-one-clock")

    def tiny(ctx):
        lib.tgb_clock_tiny(c, ctx.stream, 1)

    for i in range(stages):  # as tg_bench_tiny_producer: each declares "word"
        s = p.add_device_stage("tiny%d" % i, tiny, capture_safe=True)
        p.declare_binding(s, "word", 4)
    p.bind("word", lib.tgb_clock_address(c, b"word"), size=4)
    t = c_method_us({"python": functools.partial(p.run, handle, tx.Policy.REPLAY),
                     "noop": functools.partial(len, ())},
                    5 * (5 if bench.quick else 41),
                    functools.partial(lib.tgb_clock_sync, c),
                    {"c": functools.partial(lib.tgb_clock_replay_us, c, C_BATCH)})
    captured_once(bench, p)
    bench.json["replay_one_clock_us"] = t
    print("  # one clock: a no-op Python call in the same timing: %.3f us" % t["noop"])
    bench.add("replay", "replay from Python vs the C call, one process, one clock",
              t["python"], t["c"], "tg_producer_run, 32 stages of the same kernel, "
              "same stream, in turn (median of batches of %d after a sync)" % C_BATCH,
              "plus", 0.5, stats=t)


def bench_eager(bench, work, stream):
    """EAGER overhead per Python stage over the same torch ops called
    directly: host time of one call per stage.  Batches of 10 calls (320
    kernels) stay well inside the launch queue."""
    n = 10 if bench.quick else 100
    p = work.producer("eager-32")
    fns = {"ours": functools.partial(p.run, stream.cuda_stream, tx.Policy.EAGER),
           "direct": work.direct}
    if not (work.check("eager", fns["ours"], STAGES)
            and work.check("the ops called directly", work.direct, STAGES)):
        return
    t = time_us(fns, "host", 10, n)
    bench.add("eager", "eager: host time per stage (%d stages)" % STAGES,
              t["ours"].best / STAGES, t["direct"].best / STAGES,
              "the same torch op called directly", "plus", 3.0,
              stats={k: {f: v / STAGES for f, v in t[k]._asdict().items()} for k in t})


def bench_record(bench, work):
    """RECORD into torch.cuda.graph: GPU time of torch's graph holding the
    producer beside torch's graph of the same ops, median of rounds."""
    n = 10 if bench.quick else 60
    p = work.producer("record-32")
    ours, floor = tg_graph(p.run), torch_graph(work.direct)
    if not (work.check("the torch graph that recorded the producer", ours.replay, STAGES)
            and work.check("the torch graph of the ops", floor.replay, STAGES)):
        return
    t = time_us({"ours": ours.replay, "torch": floor.replay}, "gpu", 50, n)
    bench.add("record", "record: GPU time of the torch graph (%d kernels)" % STAGES,
              t["ours"].median, t["torch"].median, "the same ops captured by torch",
              "ratio", 1.02, stats={k: v._asdict() for k, v in t.items()})


def bench_skip(bench, work, stream):
    """Device skip from Python (flag 0): an EAGER conditional call beside a
    host readback and a Python branch (what PyTorch 2.11 offers: torch.cond
    fails inside torch.cuda.graph); the own graph's IF node (REPLAY); and a
    torch graph with the conditional producer recorded inside beside the
    same graph without it."""
    n = 20 if bench.quick else 200
    handle = stream.cuda_stream
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    cond = tx.conditional(flag)
    p = work.producer("skip-32")
    y = torch.zeros(1, dtype=torch.int64, device="cuda")  # the graphs' own op

    def readback():
        if flag.item():
            work.direct()

    def recorded():
        y.add_(1)
        p.run(None, tx.Policy.AUTO, cond)  # RECORD: an IF node in the torch graph

    with_skip, without = tg_graph(recorded), torch_graph(lambda: y.add_(1))
    fns = {"eager": functools.partial(p.run, handle, tx.Policy.EAGER, cond),
           "replay": functools.partial(p.run, handle, tx.Policy.REPLAY, cond),
           "readback": readback}
    ok = True
    for f in (1, 0):  # the skip is real: flag 1 runs the work, flag 0 none
        flag.fill_(f)
        for what, fn in (("eager conditional", fns["eager"]),
                         ("replay conditional", fns["replay"]),
                         ("torch graph with the recorded skip", with_skip.replay)):
            ok &= work.check("%s, flag %d" % (what, f), fn, STAGES * f)
    ok &= work.check("readback, flag 0", readback, 0)
    if not ok:
        return
    t = time_us(fns, "host", 100, n)
    captured_once(bench, p)
    stats = {k: v._asdict() for k, v in t.items()}
    readback_what = "host .item() readback + Python branch"
    bench.add("skip", "eager skip from Python (flag 0): host time per call",
              t["eager"].best, t["readback"].best, readback_what, "ratio", 1.0,
              stats=stats)
    bench.add("skip", "replay skip (own graph's IF node, flag 0)", t["replay"].best,
              t["readback"].best, readback_what, stats=stats)
    graphs = {"ours": with_skip.replay, "torch": without.replay}
    t = time_us(graphs, "host", 100, n)
    bench.add("skip", "recorded skip (flag 0): host time of g.replay()", t["ours"].best,
              t["torch"].best, "the same torch graph without it", "ratio", 1.05,
              stats={k: v._asdict() for k, v in t.items()})
    t = time_us(graphs, "gpu", 50, 10 if bench.quick else 60)
    bench.add("skip", "recorded skip (flag 0): GPU time of g.replay()", t["ours"].median,
              t["torch"].median, "the same torch graph without it",
              stats={k: v._asdict() for k, v in t.items()})


def main():
    parser = argparse.ArgumentParser(description="track_gen from Python beside its "
                                     "floors (issue 18)")
    parser.add_argument("--json", default="bench-python.json", metavar="FILE",
                        help="write the rows and the environment as JSON to FILE")
    parser.add_argument("--tg-bench", default=None, metavar="PATH",
                        help="the C bench, for the C call's row (default: "
                        "bench/tg-bench here, else beside this file)")
    parser.add_argument("--lib", default=None, metavar="PATH",
                        help="bench/same-clock.so, for the C call in this process "
                        "(default: bench/same-clock.so here, else beside this file)")
    parser.add_argument("--quick", action="store_true",
                        help="few rounds (a smoke run)")
    parser.add_argument("--host-costs", action="store_true",
                        help="only time, on the CPU, the pieces of a Python call that "
                        "the C call does not make (needs track_gen, no torch, no GPU)")
    args = parser.parse_args()
    if args.host_costs:
        from track_gen import _native
        for piece, ns in host_costs(_native).items():
            print("%-34s %7.1f ns" % (piece, ns))
        return 0
    load()
    try:
        tx.device_check(0)
    except tx.TrackGenError as e:
        skip("track_gen cannot run on device 0: %s" % e)
    bench = Bench(args.quick)
    # The C bench first, before this process makes its context busy.
    c_us = c_replay_us(bench, args.tg_bench or default_tg_bench())
    bench.json["environment"] = env = environment()
    for key, value in env.items():
        print("# %-10s %s" % (key, value))
    from track_gen import _native
    bench.json["host_costs_ns"] = costs = host_costs(_native, 20000)
    print("# host costs of a Python call's own pieces: %s" % ", ".join(
        "%s %.0f ns" % item for item in costs.items()))
    work = Work(bench)
    stream = torch.cuda.Stream()  # a stream of torch's, not the legacy one
    with torch.cuda.stream(stream):
        for name, section in (("replay", lambda: bench_replay(bench, work, stream, c_us)),
                              ("replay, one clock",
                               lambda: bench_replay_c(bench, args.lib or default_lib())),
                              ("eager", lambda: bench_eager(bench, work, stream)),
                              ("record", lambda: bench_record(bench, work)),
                              ("skip", lambda: bench_skip(bench, work, stream))):
            print("[%s]" % name, flush=True)
            try:
                section()
            except Exception as e:  # one broken section must not hide the others
                bench.fail("section %s: %s: %s" % (name, type(e).__name__, e))
    torch.cuda.synchronize()
    bench.print_table()
    bench.write_json(args.json)
    print("\nwrote %s" % args.json)
    for message in bench.failures:
        print("python-bench: FAILED: %s" % message, file=sys.stderr)
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(main())
