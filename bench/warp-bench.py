#!/usr/bin/env python3
"""warp-bench.py: NVIDIA Warp's conditional graphs beside ours, measured in
this run (issue 27 section 2).

Warp's capture_if, capture_if with on_false and capture_while, captured into
graphs and called eagerly, on the shapes of tg-bench's condition rows (the
same kernels, sizes, flags and timing method: bench/condition-bench.c), set
beside our rows of a tg-bench run of this same invocation, with the ratio
ours / Warp and the issue's targets.

Our side is the C bench itself, not track_gen from Python: tg-bench's rows
are the ones the targets are about, and running it (or reading the JSON that
`make bench` just wrote) measures exactly those rows with no second copy of
their shapes.  Warp runs here, in Python, as its users call it.

    make bench-warp                 # runs tg-bench --only=conditions first
    make bench                      # runs this after tg-bench when warp imports
    python3 bench/warp-bench.py [--tg-bench=PATH | --tg-json=FILE]
        [--json=bench-warp.json] [--quick]

Exit status: 0 when it ran (a missed target is a row marked MISS, not a
failure), 1 when a check failed (a graph that did not do its work, a row of
ours missing, tg-bench failing), 77 without warp or a CUDA GPU.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# The shapes of bench/condition-bench.c: KERNELS small kernels in a skipped
# body, an else branch of one, a relaxation that converges after ITERS
# iterations; and its batches and rounds (--quick: its quick ones).
KERNELS = 32
ITERS = 1000
SCALES = {False: dict(batch=64, rounds=41, loop_rounds=11),
          True: dict(batch=10, rounds=5, loop_rounds=3)}
# The spin before a GPU-timed batch: this many times the host's time to
# enqueue the batch, so that the events see the GPU alone (Warp's launches
# from Python are slower than tg-bench's from C, which keep ahead unaided).
SPIN_MARGIN = 3.0

# (our row in tg-bench's table, Warp's measurement, target for ours / Warp
# or None for a row shown without one).  Targets: issue 27 section 2.
COMPARISONS = [
    ("skipped conditional producer (32 kernels)", "capture_if", 0.97),
    ("user-set skipped IF (32 kernels)", "capture_if after the user's kernel", 0.97),
    ("skipped IF/ELSE producer (then: 32 kernels, else: 1 runs)",
     "capture_if with on_false", 0.85),
    ("loop decided by its body: time per iteration", "capture_while", 0.90),
    ("loop: time per iteration", "capture_while", None),
    ("eager: skipped conditional producer, host time", "eager capture_if", 0.50),
    ("eager: user-set skipped IF, host time",
     "eager capture_if after the user's kernel", 0.50),
    ("eager: loop, host time per iteration", "eager capture_while", 0.30),
    ("eager: decided loop, host time per iteration", "eager capture_while", 0.30),
]


def skip(reason):
    """Exit status 77, the automake convention for a skipped test."""
    print("warp-bench: skipped: %s" % reason, file=sys.stderr)
    sys.exit(77)


wp = None


class Failures(list):
    def add(self, message):
        print("warp-bench: FAILED: %s" % message, file=sys.stderr, flush=True)
        self.append(message)


# --------------------------------------------------------------------------
# Our rows: a tg-bench run of this invocation.

def our_rows(args, failures):
    """{what: row} of tg-bench's conditions section: read from --tg-json, or
    from a run of --tg-bench made now (before Warp makes a context here).
    None when tg-bench has no GPU (it exits 77)."""
    if args.tg_json is not None:
        return read_rows(args.tg_json)
    path = args.tg_bench
    if not os.access(path, os.X_OK):
        sys.exit("warp-bench: no tg-bench at %s: build it (make bench/tg-bench) or "
                 "pass --tg-bench=PATH or --tg-json=FILE" % path)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "conditions.json")
        command = [path, "--only=conditions", "--json=" + out]
        if args.quick:
            command.append("--quick")
        print("# %s" % " ".join(command), flush=True)
        r = subprocess.run(command)
        if r.returncode == 77:
            return None
        if r.returncode != 0:
            failures.add("%s exited with %d" % (" ".join(command), r.returncode))
            if not os.path.exists(out):
                return {}
        return read_rows(out)


def read_rows(path):
    with open(path) as f:
        rows = json.load(f)["rows"]
    return {r["what"]: r for r in rows if r["group"] == "conditions"}


# --------------------------------------------------------------------------
# Warp's side: the kernels of bench/bench-kernels.cu written for Warp.

def kernels():
    """The kernels, defined once warp is imported."""

    @wp.kernel
    def tiny(word: wp.array(dtype=wp.int32)):
        # tiny_kernel: one block of 32 threads bumps a word once
        if wp.tid() == 0:
            wp.atomic_add(word, 0, 1)

    @wp.kernel
    def decide(flag: wp.array(dtype=wp.int32), decision: wp.array(dtype=wp.int32)):
        # decide_kernel: the user's kernel writes the flag a condition reads
        decision[0] = wp.where(flag[0] != 0, 1, 0)

    @wp.kernel
    def reset(value: wp.array(dtype=wp.int32), flag: wp.array(dtype=wp.int32)):
        value[0] = 0
        flag[0] = 1

    @wp.kernel
    def relax(value: wp.array(dtype=wp.int32), flag: wp.array(dtype=wp.int32),
              target: wp.array(dtype=wp.int32)):
        # relax_kernel: converges once value reaches target
        value[0] = value[0] + 1
        flag[0] = wp.where(value[0] < target[0], 1, 0)

    @wp.kernel
    def spin(n: int, out: wp.array(dtype=wp.float32)):
        # a chain of dependent multiply-adds the compiler cannot drop
        x = float(0.0)
        for i in range(n):
            x = x * 0.999999 + 1.0
        out[0] = x

    return dict(tiny=tiny, decide=decide, reset=reset, relax=relax, spin=spin)


class Work:
    """The arrays of condition-bench.c's rows on *device*, the work launched
    on them, and Warp's graphs and eager calls of each row."""

    def __init__(self, device):
        self.device = device
        self.k = kernels()
        zeros = lambda n, dtype=wp.int32: wp.zeros(n, dtype=dtype, device=device)
        self.word, self.flag, self.decision = zeros(1), zeros(1), zeros(1)
        self.value, self.loop_flag = zeros(1), zeros(1)
        self.target = wp.array([ITERS], dtype=wp.int32, device=device)
        self.spun = zeros(1, wp.float32)
        # Each kernel once, so that Warp compiles and loads it (one module
        # per block size) before any capture or clock.
        self.tiny(1)
        self.decide()
        self.launch("reset", 1, [self.value, self.loop_flag])
        self.relax()
        self.launch("spin", 1, [1, self.spun])
        wp.synchronize_device(device)

    def launch(self, kernel, dim, inputs):
        # one block of dim threads, as the <<<1, dim>>> of our kernels
        wp.launch(self.k[kernel], dim=dim, inputs=inputs, device=self.device,
                  block_dim=dim)

    def tiny(self, n):
        for _ in range(n):
            self.launch("tiny", 32, [self.word])

    def then_body(self):
        self.tiny(KERNELS)

    def else_body(self):
        self.tiny(1)

    def decide(self):
        self.launch("decide", 1, [self.flag, self.decision])

    def relax(self):
        self.launch("relax", 1, [self.value, self.loop_flag, self.target])

    # Each row's work, as Warp's users write it; a graph captures the same.
    def skip(self):
        wp.capture_if(self.flag, on_true=self.then_body)

    def skip_by(self):
        self.decide()
        wp.capture_if(self.decision, on_true=self.then_body)

    def if_else(self):
        wp.capture_if(self.flag, on_true=self.then_body, on_false=self.else_body)

    def loop(self):
        self.launch("reset", 1, [self.value, self.loop_flag])
        wp.capture_while(self.loop_flag, self.relax)

    def graph(self, work):
        with wp.ScopedCapture(device=self.device) as capture:
            work()
        return capture.graph

    def set_flag(self, value):
        self.flag.fill_(value)

    def read(self, array):
        return int(array.numpy()[0])

    def runs(self, fn):
        """Small kernels that one call of fn ran."""
        before = self.read(self.word)
        fn()
        return self.read(self.word) - before

    def converged(self):
        """The loop's last run made ITERS iterations, then stopped."""
        return self.read(self.loop_flag) == 0 and self.read(self.value) == ITERS


def check_runs(work, failures, what, fn, expected):
    """Fails unless fn runs expected[f] small kernels with the flag f, for
    each flag given; leaves the flag 0, as the timed rows have it."""
    ok = True
    for f, want in sorted(expected.items(), reverse=True):
        work.set_flag(f)
        ran = work.runs(fn)
        if ran != want:
            failures.add("Warp's %s ran %d small kernels with the flag %d, not %d"
                         % (what, ran, f, want))
            ok = False
    work.set_flag(0)
    return ok


def check_loop(work, failures, what, fn=None):
    """Fails unless the loop converged: in a call of fn, or, without fn, in
    the last run (after a timing)."""
    if fn is not None:
        fn()
    if not work.converged():
        failures.add("Warp's %s did not stop after %d iterations" % (what, ITERS))
        return False
    return True


# --------------------------------------------------------------------------
# Timing, as tg-bench times: the median over rounds.

class Clock:
    """tg_bench_graph_us and tg_bench_wall_us of bench/bench.c for Warp."""

    def __init__(self, work, failures):
        self.work, self.failures = work, failures
        self.start, self.stop = (wp.Event(work.device, enable_timing=True)
                                 for _ in range(2))
        self.spin_n, self.spin_us = 1 << 16, None

    def spin(self):
        self.work.launch("spin", 1, [self.spin_n, self.work.spun])

    def calibrate(self, enqueue_us):
        """Grows the spin until it outlasts SPIN_MARGIN times enqueue_us."""
        while True:
            self.spin()  # one untimed, so that clocks are up
            wp.record_event(self.start)
            self.spin()
            wp.record_event(self.stop)
            self.spin_us = 1e3 * wp.get_event_elapsed_time(self.start, self.stop)
            if self.spin_us >= SPIN_MARGIN * enqueue_us:
                return
            self.spin_n *= 2

    def graph_us(self, graph, batch, rounds, what):
        """GPU time per launch of graph, launched batch times back to back
        between two events behind the spin, median over rounds."""
        samples = []
        wp.capture_launch(graph)  # warm-up
        t0 = time.perf_counter()
        for _ in range(batch):
            wp.capture_launch(graph)
        enqueue_us = (time.perf_counter() - t0) * 1e6
        wp.synchronize_device(self.work.device)
        if self.spin_us is None or self.spin_us < SPIN_MARGIN * enqueue_us:
            self.calibrate(enqueue_us)
        slowest = 0.0
        for _ in range(rounds):
            self.spin()
            wp.record_event(self.start)
            t0 = time.perf_counter()
            for _ in range(batch):
                wp.capture_launch(graph)
            slowest = max(slowest, (time.perf_counter() - t0) * 1e6)
            wp.record_event(self.stop)
            samples.append(1e3 * wp.get_event_elapsed_time(self.start, self.stop)
                           / batch)
        if slowest > self.spin_us:
            self.failures.add("the host took up to %.0f us to enqueue a batch of %s, "
                              "longer than the %.0f us spin: the GPU waited for it"
                              % (slowest, what, self.spin_us))
        return statistics.median(samples)

    def host_us(self, fn, batch, rounds):
        """Host time per call of fn, called batch times, the device
        synchronized after the clock stops; median over rounds."""
        samples = []
        fn()  # warm-up
        wp.synchronize_device(self.work.device)
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            samples.append((time.perf_counter() - t0) * 1e6 / batch)
            wp.synchronize_device(self.work.device)
        return statistics.median(samples)


def measure_warp(work, clock, scale, failures):
    """{measurement: microseconds} of Warp, each checked to do its work
    first (a floor that skips too much or too little is no floor)."""
    batch, rounds, loop_rounds = scale["batch"], scale["rounds"], scale["loop_rounds"]
    t = {}
    graphs = {name: work.graph(fn) for name, fn in (
        ("capture_if", work.skip), ("capture_if after the user's kernel", work.skip_by),
        ("capture_if with on_false", work.if_else), ("capture_while", work.loop))}
    launches = {name: (lambda g=g: wp.capture_launch(g)) for name, g in graphs.items()}
    for name, expected in (("capture_if", {1: KERNELS, 0: 0}),
                           ("capture_if after the user's kernel", {1: KERNELS, 0: 0}),
                           ("capture_if with on_false", {1: KERNELS, 0: 1})):
        if check_runs(work, failures, "graph of " + name, launches[name], expected):
            t[name] = clock.graph_us(graphs[name], batch, rounds, name)
    loop = launches["capture_while"]
    if check_loop(work, failures, "graph of capture_while", loop):
        us = clock.graph_us(graphs["capture_while"], 1, loop_rounds, "capture_while")
        if check_loop(work, failures, "graph of capture_while"):
            t["capture_while"] = us / ITERS
    for name, fn in (("eager capture_if", work.skip),
                     ("eager capture_if after the user's kernel", work.skip_by)):
        if check_runs(work, failures, name, fn, {1: KERNELS, 0: 0}):
            t[name] = clock.host_us(fn, batch, rounds)
    if check_loop(work, failures, "eager capture_while", work.loop):
        us = clock.host_us(work.loop, 1, loop_rounds)
        if check_loop(work, failures, "eager capture_while"):
            t["eager capture_while"] = us / ITERS
    return t


# --------------------------------------------------------------------------
# The table.

def comparisons(ours, warp, failures):
    """The rows of the table: ours beside Warp's, the ratio, the target."""
    rows = []
    for what, warp_what, target in COMPARISONS:
        if what not in ours:
            failures.add("tg-bench wrote no row %r" % what)
            continue
        if warp_what not in warp:
            continue  # its check failed, and said so
        o, w = ours[what]["ours"], warp[warp_what]
        ratio = o / w
        met = "-" if target is None else "PASS" if ratio <= target else "MISS"
        rows.append(dict(what=what, unit=ours[what]["unit"], ours=o, warp=w,
                         warp_what=warp_what, ratio=ratio, target=target, met=met))
    return rows


def print_table(rows, version):
    print("\n[ours beside NVIDIA Warp %s, both measured in this run]" % version)
    print("%-58s %10s %10s %-4s %7s %8s %-4s %s" % (
        "what", "ours", "Warp", "unit", "ratio", "target", "met", "Warp's"))
    for r in rows:
        target = "" if r["target"] is None else "<=%.2fx" % r["target"]
        print("%-58s %10.3f %10.3f %-4s %7.3f %8s %-4s %s" % (
            r["what"], r["ours"], r["warp"], r["unit"], r["ratio"], target, r["met"],
            r["warp_what"]))


def environment(device):
    env = {"warp": wp.__version__, "gpu": device.name,
           "python": platform.python_version()}
    try:
        with open("/proc/driver/nvidia/version") as f:
            env["driver"] = f.readline().strip()
    except OSError:
        env["driver"] = "CUDA driver %s" % (wp.get_cuda_driver_version(),)
    return env


def main():
    global wp
    parser = argparse.ArgumentParser(description="NVIDIA Warp's conditional graphs "
                                     "beside ours, measured in this run (issue 27)")
    parser.add_argument("--tg-bench", default=os.path.join("bench", "tg-bench"),
                        metavar="PATH", help="the C bench, run here for our rows "
                        "(default: %(default)s)")
    parser.add_argument("--tg-json", metavar="FILE", help="read our rows from the "
                        "JSON of a tg-bench run of this invocation instead")
    parser.add_argument("--json", default="bench-warp.json", metavar="FILE",
                        help="write the rows and the environment as JSON to FILE")
    parser.add_argument("--quick", action="store_true",
                        help="few rounds (a smoke run), as tg-bench --quick")
    args = parser.parse_args()
    try:
        import warp
    except ImportError as e:
        skip("needs NVIDIA Warp (%s): pip install warp-lang" % e)
    wp = warp
    failures = Failures()
    ours = our_rows(args, failures)  # tg-bench first: Warp makes a context
    if ours is None:
        skip("tg-bench found no CUDA GPU")
    if wp.get_cuda_device_count() == 0:
        skip("Warp finds no CUDA GPU (wp.get_cuda_device_count() is 0)")
    device = wp.get_cuda_device(0)
    env = environment(device)
    for key, value in env.items():
        print("# %-7s %s" % (key, value))
    scale = SCALES[args.quick]
    with wp.ScopedDevice(device):
        work = Work(device)
        warp_us = measure_warp(work, Clock(work, failures), scale, failures)
    rows = comparisons(ours, warp_us, failures)
    print_table(rows, wp.__version__)
    with open(args.json, "w") as f:
        json.dump(dict(environment=env, scale=scale, rows=rows, warp_us=warp_us,
                       ours_from=args.tg_json or args.tg_bench, failures=failures),
                  f, indent=2)
        f.write("\n")
    print("\nwrote %s" % args.json)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
