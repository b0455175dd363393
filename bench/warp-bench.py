#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""warp-bench.py: ours, NVIDIA Warp's and the hand-built floors of the
condition rows on one clock (issue 34 section 1).

For each row three graphs are built in this one process: ours as a user
records it (tg-bench's producer of the row, recorded with
tg_producer_run (RECORD) into a capture of the caller's), Warp's as its
users capture it (wp.capture_if, wp.capture_while in a wp.ScopedCapture,
instantiated by Warp), and the hand-built minimal floor (the same functions
tg-bench's rows build it with).  Ours and the floors come from
bench/same-clock.so, tg-bench's code loaded here with ctypes; every body
holds the same kernels (bench/bench-kernels.cu), Warp's too: its bodies
enqueue them on Warp's capturing stream, so the graphs differ only by what
each puts around them.  Then one C loop of that library (tgb_clock_time)
launches all three on one stream, each batch behind one spin kernel and
between one pair of events, in turn round by round; a series is ROUNDS
rounds, its median per graph; the rows show the median of the SERIES
series medians and their min and max, and each target of the issue the
median of the per-series ratios, its min and max and the series that met
it.

    make bench-warp [BENCH_WARP_FLAGS='--quick --dot=DIR']
    python3 bench/warp-bench.py --lib=bench/same-clock.so [--series=5]
        [--rounds=41] [--batch=64] [--spin-us=0] [--quick] [--dot=DIR]
        [--python] [--rows=skip,if-else,while-by,switch] [--json=bench-warp.json]
    python3 bench/warp-bench.py --check      # self-test, no GPU, no Warp

--python adds a column: ours as a Python user records it (track_gen's
capture_if and capture_switch, torch imported for the bodies' stream).
--dot=DIR writes each graph's topology (cudaGraphDebugDotPrint, verbose:
kernel parameters, launch shapes, node attributes, handles) to
DIR/ROW-SIDE.dot, ours and Warp's node by node beside the floor's.

Exit status: 0 when it ran (a missed target is a row marked MISSED, not a
failure), 1 when a check failed (a graph that did not do its work, the GPU
waiting for the host), 77 without warp, a CUDA GPU, or the library (a
build that configure made without the Python module).
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import sys
import tempfile
from collections import namedtuple

import same_clock  # beside this script

# A row: its key in same-clock.c, what it is (formatted with the shapes the
# library reports), what Warp's graph and the floor are, and whether its
# times are per loop iteration.  Warp has no SWITCH.
Row = namedtuple("Row", "key what warp_what floor_what per_iteration")
ROWS = (
    Row("skip", "skipped IF around {kernels} kernels (flag 0)",
        "wp.capture_if(flag, on_true)", "hand-built IF: set kernel, IF (minimal)",
        False),
    Row("if-else", "IF/ELSE, flag 0 (then: {kernels} kernels, else: 1 runs)",
        "wp.capture_if(flag, on_true, on_false)",
        "hand-built IF with 2 bodies (minimal)", False),
    Row("while-by", "WHILE decided by its body, per iteration (of {iters})",
        "reset, wp.capture_while(flag, relax)",
        "minimal WHILE: its own kernels set the handle", True),
    Row("switch", "SWITCH, {cases} cases x {case-kernels} kernels, case {case} runs",
        None, "hand-built SWITCH ({cases} bodies)", False),
)
# Beside the three, Warp's graph instantiated as ours and the floors are
# (cudaGraphInstantiate, flags 0): what Warp's own instantiation changes;
# with --python, ours as a Python user records it (track_gen.capture_if,
# capture_switch; the package has no loop its body decides).
SIDES = ("ours", "warp", "floor", "warp0", "py")
COLUMNS = {"ours": "ours", "warp": "Warp", "floor": "floor",
           "warp0": "Warp's, flags 0", "py": "ours from Python"}
# Issue 34 section 1: ours / (Warp's or the floor's) at most the bound.
Target = namedtuple("Target", "row against bound")
TARGETS = (
    Target("skip", "warp", 1.00),
    Target("skip", "floor", 1.03),
    Target("if-else", "warp", 0.85),
    Target("if-else", "floor", 1.03),
    Target("while-by", "warp", 1.00),
    Target("while-by", "floor", 1.03),
    Target("switch", "floor", 1.03),
)
# The shapes of bench/bench.h, for --check (a run reads them from the library).
SHAPE = {"kernels": 32, "cases": 4, "case-kernels": 8, "case": 2, "iters": 1000}
# series, rounds per series, launches per batch (loops: 1 launch)
SCALES = {False: dict(series=5, rounds=41, batch=64),
          True: dict(series=2, rounds=5, batch=10)}
# A row fails when the GPU waited for the host (the spin ran out before the
# batch was enqueued) in more than this share of its batches; below, the
# report counts them (a few slow samples barely move a median).
LATE_SHARE = 0.05


def skip(reason):
    """Exit status 77, the automake convention for a skipped test."""
    print("warp-bench: skipped: %s" % reason, file=sys.stderr)
    sys.exit(77)


class Failures(list):
    def add(self, message):
        print("warp-bench: FAILED: %s" % message, file=sys.stderr, flush=True)
        self.append(message)


# --------------------------------------------------------------------------
# Statistics and the report: plain functions of numbers, checked by --check.

def spread(values):
    """{median, min, max, series} of per-series values."""
    return dict(median=statistics.median(values), min=min(values), max=max(values),
                series=list(values))


def ratios(ours, other):
    """spread() of ours / other, series by series."""
    return spread([o / t for o, t in zip(ours, other)])


def series_medians(samples, n_series):
    """The median of each series: *samples* holds n_series series of
    equal length, one after the other."""
    n = len(samples) // n_series
    return [statistics.median(samples[s * n:(s + 1) * n]) for s in range(n_series)]


def verdict(ratio, bound):
    """'met' when the median ratio is within the bound, 'MISSED' when not,
    with the series that met it."""
    met = sum(1 for r in ratio["series"] if r <= bound)
    return "%s (%d of %d series)" % ("met" if ratio["median"] <= bound else "MISSED",
                                     met, len(ratio["series"]))


def row_title(row, shape):
    return row.what.format(**shape)


def side_title(row, side):
    return {"ours": "ours: the producer recorded (RECORD)", "warp": row.warp_what,
            "floor": row.floor_what,
            "warp0": "Warp's graph, cudaGraphInstantiate (flags 0)",
            "py": "track_gen.capture_if / capture_switch recorded (RECORD)"}[side]


def evaluate(times, shape, rows=()):
    """The targets' results from *times* ({row: {side: spread}}): a list of
    dicts, one per target whose two sides were measured, and one per target
    of *rows* (the rows asked for) that was not, said so (ratio None)."""
    results = []
    for t in TARGETS:
        sides = times.get(t.row, {})
        row = next(row for row in ROWS if row.key == t.row)
        result = dict(row=t.row, what=row_title(row, shape), against=t.against,
                      bound=t.bound, ratio=None)
        if "ours" in sides and t.against in sides:
            r = ratios(sides["ours"]["series"], sides[t.against]["series"])
            results.append(dict(result, ratio=r, met=verdict(r, t.bound)))
        elif t.row in rows:
            missing = " or ".join(COLUMNS[s] for s in ("ours", t.against)
                                  if s not in sides)
            results.append(dict(result, met="NOT MEASURED (%s)" % (
                "no %s graph" % missing if sides else "row skipped, said why above")))
    return results


def fmt_spread(s, digits=3):
    return "%.*f [%.*f..%.*f]" % (digits, s["median"], digits, s["min"], digits,
                                  s["max"])


def report_lines(times, results, shape, header):
    """The report as lines: each row's three times, then each target."""
    shown = [s for s in SIDES if any(s in sides for sides in times.values())]
    layout = "%-56s" + " %-24s" * len(shown)
    lines = ["", "[%s]" % header,
             (layout % ("row: us per launch, median [min..max] over series",
                        *(COLUMNS[s] for s in shown))).rstrip()]
    for row in ROWS:
        sides = times.get(row.key)
        if not sides:
            continue
        lines.append((layout % (row_title(row, shape),
                                *(fmt_spread(sides[s]) if s in sides else "-"
                                  for s in shown))).rstrip())
    lines += ["", "[issue 34 targets, same clock: ours / theirs, median [min..max] "
              "of the per-series ratios]",
              "%-56s %-7s %-24s %s" % ("target", "vs", "ratio", "bound")]
    for r in results:
        lines.append("%-56s %-7s %-24s %-8s %s" % (
            r["what"], {"warp": "Warp", "floor": "floor"}[r["against"]],
            fmt_spread(r["ratio"]) if r["ratio"] else "-", "<=%.2fx" % r["bound"],
            r["met"]))
    return lines


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="ours, NVIDIA Warp's and the hand-built floors of the condition "
        "rows, built and timed in one process on one clock (issue 34)")
    parser.add_argument("--lib", default=None, metavar="PATH",
                        help="bench/same-clock.so (default: bench/same-clock.so here, "
                        "else beside this script; empty: none was built)")
    parser.add_argument("--json", default="bench-warp.json", metavar="FILE",
                        help="write the samples, rows and targets to FILE")
    parser.add_argument("--quick", action="store_true",
                        help="a short run: %(series)d series of %(rounds)d rounds, "
                        "batches of %(batch)d" % SCALES[True])
    parser.add_argument("--series", type=int, metavar="N",
                        help="series (default %d)" % SCALES[False]["series"])
    parser.add_argument("--rounds", type=int, metavar="N",
                        help="rounds per series (default %d)" % SCALES[False]["rounds"])
    parser.add_argument("--batch", type=int, metavar="N",
                        help="launches per timed batch, loops excepted (default %d)"
                        % SCALES[False]["batch"])
    parser.add_argument("--spin-us", type=float, default=0.0, metavar="US",
                        help="the spin before each batch (default 0: 3x the host's "
                        "slowest enqueue of a batch)")
    parser.add_argument("--rows", default=",".join(r.key for r in ROWS), metavar="LIST",
                        help="rows to run (default: %(default)s)")
    parser.add_argument("--python", action="store_true",
                        help="also ours as a Python user records it: track_gen's "
                        "capture_if / capture_switch (needs track_gen and torch)")
    parser.add_argument("--autofree", action="store_true",
                        help="instantiate ours, the floors and ours from Python with "
                        "cudaGraphInstantiateFlagAutoFreeOnLaunch, as Warp instantiates "
                        "its graphs (default: flags 0, as tg-bench does)")
    parser.add_argument("--dot", metavar="DIR",
                        help="write each graph's cudaGraphDebugDotPrint to DIR")
    parser.add_argument("--check", action="store_true",
                        help="self-test of the statistics and the report, then exit")
    args = parser.parse_args(argv)
    scale = dict(SCALES[args.quick])
    for key in scale:
        value = getattr(args, key)
        if value is not None:
            if value < 1:
                parser.error("--%s takes a positive count" % key)
            scale[key] = value
    args.scale = scale
    args.rows = [r for r in args.rows.split(",") if r]
    unknown = set(args.rows) - {r.key for r in ROWS}
    if unknown or not args.rows:
        parser.error("--rows: %s: rows are %s" % (", ".join(sorted(unknown)) or "none",
                                                  ", ".join(r.key for r in ROWS)))
    if args.spin_us < 0:
        parser.error("--spin-us takes 0 (automatic) or a duration")
    return args


def self_check():
    """--check: the pure functions above on numbers whose answers are known,
    and a report and JSON written from them.  Raises AssertionError."""
    assert series_medians([1, 2, 3, 10, 20, 30], 2) == [2, 20]
    s = spread([3.0, 1.0, 2.0])
    assert (s["median"], s["min"], s["max"]) == (2.0, 1.0, 3.0)
    r = ratios([2.0, 4.0, 3.0], [2.0, 2.0, 3.0])
    assert (r["median"], r["min"], r["max"]) == (1.0, 1.0, 2.0)
    assert verdict(r, 1.00) == "met (2 of 3 series)"
    assert verdict(r, 0.99) == "MISSED (0 of 3 series)"
    times = {"skip": {"ours": spread([4.9, 5.0]), "warp": spread([4.3, 4.4]),
                      "floor": spread([4.9, 4.9])},
             "switch": {"ours": spread([9.0, 9.1]), "floor": spread([9.0, 9.0])}}
    results = evaluate(times, SHAPE)
    assert [(x["row"], x["against"]) for x in results] == [
        ("skip", "warp"), ("skip", "floor"), ("switch", "floor")], results
    assert results[0]["met"].startswith("MISSED") and results[1]["met"].startswith("met")
    # A row asked for whose graphs are missing says so for each target.
    missed = evaluate(times, SHAPE, ["skip", "if-else", "switch"])
    assert [(x["row"], x["met"]) for x in missed if x["ratio"] is None] == [
        ("if-else", "NOT MEASURED (row skipped, said why above)"),
        ("if-else", "NOT MEASURED (row skipped, said why above)")], missed
    no_floor = dict(times, switch={"ours": times["switch"]["ours"]})
    assert evaluate(no_floor, SHAPE, ["switch"])[-1]["met"] == (
        "NOT MEASURED (no floor graph)")
    assert any("NOT MEASURED" in l for l in report_lines(times, missed, SHAPE, "x"))
    lines = report_lines(times, results, SHAPE, "self-test")
    assert any(l.startswith("skipped IF around 32 kernels (flag 0)") for l in lines), lines
    assert any("MISSED (0 of 2 series)" in l for l in lines), lines
    assert any(l.startswith("SWITCH, 4 cases x 8 kernels, case 2 runs") for l in lines)
    for row in ROWS:
        row_title(row, SHAPE)
    args = parse_args(["--quick", "--rounds=7", "--rows=skip,switch"])
    assert args.scale == dict(series=2, rounds=7, batch=10) and args.rows == ["skip",
                                                                           "switch"]
    assert parse_args([]).scale == SCALES[False]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.json")
        write_json(path, dict(times=times, targets=results))
        with open(path) as f:
            assert json.load(f)["targets"][0]["row"] == "skip"
    print("\n".join(lines))
    print("\nwarp-bench: --check: ok")


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


# --------------------------------------------------------------------------
# bench/same-clock.so

def find_lib(path):
    """The library's path: --lib, else bench/same-clock.so here or beside
    this script; exits 77 when --lib is empty (none was built)."""
    if path == "":
        skip("no bench/same-clock.so: configure found no way to build the Python "
             "module, which it is linked as")
    candidates = [path] if path else [
        os.path.join("bench", "same-clock.so"),
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "same-clock.so")]
    for p in candidates:
        if os.path.exists(p):
            return os.path.abspath(p)
    sys.exit("warp-bench: no %s: build it (make bench/same-clock.so) or pass --lib=PATH"
             % " or ".join(candidates))


class Clock:
    """The library's clock: its stream, buffers and graphs."""

    def __init__(self, lib):
        self.lib = lib
        self.c = lib.tgb_clock_new()
        if not self.c:
            skip("bench/same-clock.so found no CUDA GPU (it said why above)")
        self.shape = {k: lib.tgb_clock_constant(k.encode()) for k in SHAPE}

    def address(self, name):
        return self.lib.tgb_clock_address(self.c, name.encode())

    def set(self, name, value):
        self.lib.tgb_clock_set(self.c, name.encode(), value)

    def chain(self, graph):
        p = self.lib.tgb_clock_chain(graph)
        try:
            return ctypes.string_at(p).decode()
        finally:
            self.lib.tgb_clock_string_free(p)

    def runs(self, exec_):
        return self.lib.tgb_clock_runs(self.c, exec_)

    def converged(self):
        return bool(self.lib.tgb_clock_converged(self.c))

    def time(self, execs, batch, rounds, spin_us):
        """([per-round samples of each exec], spin, [the batches of each
        exec whose enqueue outlasted the spin]) of tgb_clock_time."""
        n = len(execs)
        array = (ctypes.c_void_p * n)(*execs)
        samples = (ctypes.c_double * (n * rounds))()
        enqueue = (ctypes.c_double * (n * rounds))()
        spin = self.lib.tgb_clock_time(self.c, array, n, batch, rounds, spin_us,
                                       samples, enqueue)
        return ([list(samples[k * rounds:(k + 1) * rounds]) for k in range(n)], spin,
                [sum(1 for us in enqueue[k * rounds:(k + 1) * rounds] if us > spin)
                 for k in range(n)])


# --------------------------------------------------------------------------
# Warp's graphs: its users' calls, around the library's kernels.

def warp_graph(wp, clock, device, row):
    """Warp's graph of *row* (a wp.Graph, not yet instantiated), or None
    for a row Warp has no call for."""
    lib, c, k = clock.lib, clock.c, clock.shape["kernels"]
    stream = wp.get_stream(device)

    def flag(name):
        return wp.array(ptr=clock.address(name), dtype=wp.int32, shape=(1,),
                        device=device)

    def tiny(n):
        # Warp's stream is the capturing one in Warp's bodies too.
        return lambda: lib.tgb_clock_tiny(c, stream.cuda_stream, n)

    if row == "switch":
        return None
    with wp.ScopedCapture(device=device, stream=stream) as capture:
        if row == "skip":
            wp.capture_if(flag("flag"), on_true=tiny(k), stream=stream)
        elif row == "if-else":
            wp.capture_if(flag("flag"), on_true=tiny(k), on_false=tiny(1), stream=stream)
        elif row == "while-by":
            lib.tgb_clock_reset(c, stream.cuda_stream)
            wp.capture_while(flag("loop-flag"),
                             lambda: lib.tgb_clock_relax(c, stream.cuda_stream),
                             stream=stream)
    return capture.graph


def warp_exec(wp, device, graph):
    """Warp's executable graph of *graph*, made as its users get it: by its
    first wp.capture_launch (which runs it once)."""
    wp.capture_launch(graph)
    wp.synchronize_device(device)
    return graph.graph_exec.value


def load_python():
    """(track_gen.exec, torch) for --python, torch's CUDA set up outside any
    capture; None, said why, when either does not import."""
    try:
        import torch
        from track_gen import exec as tx
    except ImportError as e:
        print("warp-bench: --python: no column: %s (make bench-warp puts the build "
              "tree's package on PYTHONPATH)" % e, file=sys.stderr)
        return None
    torch.cuda.init()
    torch.cuda.current_stream()
    return tx, torch


def python_graph(clock, key, tx, torch):
    """Ours as a Python user records it: track_gen.capture_if or
    capture_switch called in a capture of the clock's stream, the bodies
    enqueueing the library's kernels on torch's current stream (the body's
    during the call); the graph, not instantiated, or None (said why)."""
    if key == "while-by":
        return None  # the package has no loop its body decides
    lib, c, shape = clock.lib, clock.c, clock.shape

    def tiny(n):
        return lambda: lib.tgb_clock_tiny(c, torch.cuda.current_stream().cuda_stream, n)

    stream = lib.tgb_clock_stream(c)
    lib.tgb_clock_begin(c)
    try:
        if key == "skip":
            tx.capture_if(clock.address("flag"), on_true=tiny(shape["kernels"]),
                          stream=stream)
        elif key == "if-else":
            tx.capture_if(clock.address("flag"), on_true=tiny(shape["kernels"]),
                          on_false=tiny(1), stream=stream)
        else:
            tx.capture_switch(clock.address("index"),
                              [tiny(shape["case-kernels"])] * shape["cases"],
                              stream=stream)
    except Exception as e:
        lib.tgb_clock_end(c)
        print("warp-bench: --python: %s: %s: %s" % (key, type(e).__name__, e),
              file=sys.stderr)
        return None
    return lib.tgb_clock_end(c)


def build(wp, clock, device, rows, dot, py, autofree):
    """{row: {side: exec}} of every graph of *rows* (with *py*, (tx, torch),
    ours from Python too; with *autofree*, ours and the floors instantiated
    as Warp's are), and Warp's graphs, to keep; the chains printed and, with
    *dot*, each graph's topology written."""
    lib, graphs, keep = clock.lib, {}, []
    for key in rows:
        made = {"ours": lib.tgb_clock_ours(clock.c, key.encode()),
                "floor": lib.tgb_clock_floor(clock.c, key.encode())}
        wgraph = warp_graph(wp, clock, device, key)
        if wgraph is not None:
            keep.append(wgraph)
            made["warp"] = wgraph.graph.value
        pgraph = python_graph(clock, key, *py) if py else None
        if pgraph:
            made["py"] = pgraph
        if not made["ours"] or not made["floor"]:
            print("  %s: skipped: this build or driver has no such graph (IF/ELSE and "
                  "SWITCH need CUDA 12.8)" % key)
            continue
        chains = []
        for side in SIDES:
            if side not in made:
                continue
            chains.append("%s %s" % (side, clock.chain(made[side])))
            if dot:
                path = os.path.join(dot, "%s-%s.dot" % (key, side))
                rc = lib.tgb_clock_dot(made[side], path.encode())
                if rc != 0:  # a diagnosis missing, not a failed run
                    print("warp-bench: --dot: cudaGraphDebugDotPrint of %s's %s graph: "
                          "cudaError_t %d" % (key, side, rc), file=sys.stderr)
        print("  # %-9s top of each graph (k kernel, c conditional, g child graph): %s"
              % (key, ", ".join(chains)), flush=True)
        graphs[key] = {side: lib.tgb_clock_instantiate(made[side], autofree)
                       for side in ("ours", "floor", "py") if side in made}
        if wgraph is not None:
            graphs[key]["warp"] = warp_exec(wp, device, wgraph)
            # A graph holding conditional nodes takes no second executable
            # while its first lives (record-test's conditional-limits case):
            # flags 0 instantiate a second capture of Warp's.
            again = warp_graph(wp, clock, device, key)
            keep.append(again)
            warp0 = lib.tgb_clock_instantiate_kept(again.graph.value)
            if warp0:
                graphs[key]["warp0"] = warp0
    return graphs, keep


def check(clock, key, execs, failures):
    """Fails unless each graph of row *key* does its work: the small kernels
    each flag runs, the loop's iterations.  Leaves the flag as the timed
    rows have it (0; the switch's case)."""
    shape = clock.shape
    if key == "while-by":
        for side, e in execs.items():
            clock.runs(e)
            if not clock.converged():
                failures.add("%s's %s graph did not stop after %d iterations"
                             % (key, side, shape["iters"]))
        return
    name, cases = {"skip": ("flag", {1: shape["kernels"], 0: 0}),
                   "if-else": ("flag", {1: shape["kernels"], 0: 1}),
                   "switch": ("index", {-1: 0, shape["case"]: shape["case-kernels"]})}[key]
    for value, want in cases.items():
        clock.set(name, value)
        for side, e in execs.items():
            ran = clock.runs(e)
            if ran != want:
                failures.add("%s's %s graph ran %d small kernels with the %s %d, not %d"
                             % (key, side, ran, name, value, want))


def measure(clock, graphs, scale, spin_us, failures):
    """{row: {side: per-round samples over every series}}, the spins and
    the batches the GPU waited for the host: each series times every row in
    turn, its graphs interleaved round by round (tgb_clock_time).  A row
    where more than LATE_SHARE of the batches of a side a target reads
    waited fails; the Python column's are counted apart: its graph holds
    TrackGen's user object, whose cost a launch pays (tg-bench's "holding
    one user object" row), which is its figure, not the clock's fault."""
    samples = {key: {side: [] for side in execs} for key, execs in graphs.items()}
    spins, late, late_py = {}, dict.fromkeys(graphs, 0), dict.fromkeys(graphs, 0)
    for s in range(scale["series"]):
        for key, execs in graphs.items():
            sides = list(execs)
            loop = key == "while-by"
            batch = 1 if loop else scale["batch"]
            per_side, spin, n_late = clock.time([execs[x] for x in sides], batch,
                                                scale["rounds"], spin_us)
            spins[key] = spin
            for side, n in zip(sides, n_late):
                if side == "py":
                    late_py[key] += n
                else:
                    late[key] += n
            per = clock.shape["iters"] if loop else 1
            for side, values in zip(sides, per_side):
                samples[key][side] += [v / per for v in values]
            if loop and not clock.converged():
                failures.add("%s: the last timed launch did not stop after %d "
                             "iterations" % (key, clock.shape["iters"]))
        print("  series %d of %d done" % (s + 1, scale["series"]), flush=True)
    per_side = scale["series"] * scale["rounds"]
    for key, n_late in late.items():
        batches = per_side * (len(graphs[key]) - ("py" in graphs[key]))
        if late_py[key]:
            print("  # %s: ours from Python: the GPU waited for the host in %d of %d "
                  "batches (its graph holds TrackGen's user object: see tg-bench's "
                  "\"holding one user object\" row)" % (key, late_py[key], per_side))
        if n_late:
            print("  # %s: the GPU waited for the host in %d of %d batches (the host "
                  "took longer than the spin to enqueue them)" % (key, n_late, batches))
        if n_late > LATE_SHARE * batches:
            failures.add("%s: the GPU waited for the host in %d of %d batches: pass a "
                         "longer --spin-us" % (key, n_late, batches))
    return samples, spins, late


def environment(wp, device):
    env = {"warp": wp.__version__, "gpu": device.name,
           "python": platform.python_version()}
    try:
        with open("/proc/driver/nvidia/version") as f:
            env["driver"] = f.readline().strip()
    except OSError:
        env["driver"] = "CUDA driver %s" % (wp.get_cuda_driver_version(),)
    return env


def main(argv=None):
    args = parse_args(argv)
    # Each line out before the library's own (C's stdout, flushed by it).
    sys.stdout.reconfigure(line_buffering=True)
    if args.check:
        self_check()
        return 0
    try:
        import warp as wp
    except ImportError as e:
        skip("needs NVIDIA Warp (%s): pip install warp-lang" % e)
    clock = Clock(same_clock.load(find_lib(args.lib)))
    wp.init()
    if wp.get_cuda_device_count() == 0:
        skip("Warp finds no CUDA GPU (wp.get_cuda_device_count() is 0)")
    if not wp.is_conditional_graph_supported():
        skip("Warp cannot build conditional graph nodes here (CUDA 12.4 needed)")
    return bench(wp, clock, args, load_python() if args.python else None)


def bench(wp, clock, args, py=None):
    """The run, once warp and the clock are there (and, for --python, *py*:
    track_gen.exec and torch): builds, checks and times every row, prints
    the report and writes the JSON; the exit status."""
    failures = Failures()
    device = wp.get_cuda_device(0)
    env = environment(wp, device)
    for key, value in env.items():
        print("# %-7s %s" % (key, value))
    if args.dot:
        os.makedirs(args.dot, exist_ok=True)
    with wp.ScopedDevice(device):
        graphs, keep = build(wp, clock, device, args.rows, args.dot, py, args.autofree)
        for key, execs in graphs.items():
            check(clock, key, execs, failures)
        if failures:
            write_json(args.json, dict(environment=env, failures=failures))
            return 1
        clock.set("flag", 0)
        clock.set("index", clock.shape["case"])
        samples, spins, late = measure(clock, graphs, args.scale, args.spin_us,
                                       failures)
        wp.synchronize_device(device)
    n = args.scale["series"]
    times = {key: {side: spread(series_medians(v, n)) for side, v in sides.items()}
             for key, sides in samples.items()}
    results = evaluate(times, clock.shape, args.rows)
    spin = sorted(set("%.0f" % us for us in spins.values()), key=float)
    flags = "AutoFreeOnLaunch" if args.autofree else "flags 0"
    header = ("one clock: ours, NVIDIA Warp %s, hand-built floors; %d series x %d "
              "rounds, batches of %d (loops: 1 launch); spin %s us; ours and the "
              "floors instantiated with %s"
              % (wp.__version__, n, args.scale["rounds"], args.scale["batch"],
                 spin[0] if len(spin) == 1 else "%s-%s" % (spin[0], spin[-1]), flags))
    print("\n".join(report_lines(times, results, clock.shape, header)))
    write_json(args.json, dict(
        environment=env, scale=args.scale, shape=clock.shape, instantiate=flags,
        spin_us=spins,
        late_batches=late,
        rows=[dict(row=r.key, what=row_title(r, clock.shape),
                   sides={s: side_title(r, s) for s in SIDES
                          if s in times.get(r.key, {})})
              for r in ROWS if r.key in times],
        times=times, targets=results, samples=samples, dot=args.dot,
        failures=failures))
    print("\nwrote %s%s" % (args.json, "; graphs in %s/" % args.dot if args.dot else ""))
    for key, execs in graphs.items():
        for side in ("ours", "floor", "warp0", "py"):
            if side in execs:
                clock.lib.tgb_clock_exec_destroy(execs[side])
    del keep  # Warp's graphs and executables, destroyed by Warp
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
