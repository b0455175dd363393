#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""simloop_warp.py: the simulator loop of simloop.py with NVIDIA Warp kernels,
its physics step and its track regeneration, in one torch.cuda.graph.

E envs each drive an agent around a track, as in simloop.py: a step is a
Warp kernel (warp_step.py) that moves each agent by a noisy speed drawn
from a hash of its env's effective seed (the track's (seed, epoch)), its
global index and the step number, ends the episode after a lap, a crash or
at once on an invalid track, and marks the ended envs in a mask.  Their new
tracks come from warp_tracks.py's generator (control points from a hash of
the effective seed, a bounded relaxation of sharp turns, a validity test
and a length): an env's track depends on its (seed, epoch) alone.

With lookahead (--lookahead L, default 2: warp_lookahead.py), each env keeps
its next L tracks ready, made ahead from (seed, epoch + 1) ...: an env that
ends switches to its next one in the step kernel itself (its epoch, key,
validity, length: its thread already knows it ended) and in the next kernel
(its points, 32 threads an env, beside the one thread that tallies the
step).  The spent spares are refilled in one batch once --refill-batch of
them are spent or an env has none left: by default (--refill fused) by the
step's second kernel itself, in the step after the one that decided it, so
the step graph has the floor's two kernels and no node of its own; or by a
track_gen Producer of Warp stages under conditional(refill), a flag the step
sets (--refill conditional), or launched at every step, its kernels
returning at once unless the flag is set (--refill always).  Regeneration
leaves the step's critical path.  On demand (--lookahead 0),
a one-thread kernel sets the any-done flag, and under conditional(any_done)
a Producer regenerates the ended envs' tracks: the SeedState advances their
epochs, a kernel makes the points, a loop stage (a WHILE node) relaxes them,
a kernel tests and measures them.

The step is captured once into a torch.cuda.graph, with torch's capture
registered with Warp by track_gen.interop.torch.graph(): the step's kernels
and the producer's Warp stages land in one torch graph, which keeps the
producer and what Warp made for it.  Torch's graph rather than a
wp.ScopedCapture (which would work too): it is the graph simloop.py
replays, so the two loops, run in the same process (--simloop), compare
like for like.  The same loop driven from the host must end in the same
state bit for bit, and sampled envs' tracks regenerated standalone from
their (seed, epoch) must be bit-identical.  It prints its floor (the same
step graph with no regeneration and no switch) and the regeneration's GPU
time per step; --check-on-demand also compares every env with the loop on
demand after every step.  Without torch, warp or a GPU it says so and
exits 77.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simloop  # noqa: E402  the torch loop this one mirrors: constants, report

try:
    import numpy as np  # with warp
    import warp as wp
except ImportError:
    wp = None

SKIP = simloop.SKIP
TIMEOUT = 120.0  # seconds: the longest any wait for the device may take

if wp is not None:
    import warp_lookahead as wl
    import warp_step
    import warp_tracks as wt
    from warp_step import start_kernel, step_launches


def parse_args(argv=None):
    p = simloop.loop_parser(__doc__)
    p.add_argument("--points", type=int, default=128, help="points per track (default 128)")
    p.add_argument("--control", type=int, default=12,
                   help="control points per track (default 12)")
    p.add_argument("--max-iters", type=int, default=12,
                   help="the relaxation's bound (default 12)")
    p.add_argument("--svg", default="tracks-warp.svg", help="the SVG to write ('' for none)")
    p.add_argument("--simloop", action=argparse.BooleanOptionalAction, default=True,
                   help="run simloop.py's in-graph loop in the same run and compare (default)")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                   help="simloop.py's --compile for that run (default)")
    p.add_argument("--lookahead", type=int, default=2,
                   help="spare tracks each env keeps ready (default 2; 0: regenerate on "
                        "demand, a WHILE node per run)")
    p.add_argument("--refill-batch", type=int, default=64,
                   help="spent spares that trigger a refill (default 64; an env left with "
                        "none triggers one too)")
    p.add_argument("--refill", choices=("conditional", "always", "fused"),
                   default="fused",
                   help="with lookahead, the refill made by the step's second kernel in the "
                        "step after the one that decided it, a warp 32 slots, their tracks "
                        "one after another, each relaxed by the warp's lanes together, an "
                        "env left with no spare making its own track (fused, the default: "
                        "no node of its own), a Producer under conditional(refill) "
                        "(conditional), or that Producer launched at every step, its "
                        "kernels returning at once unless due (always)")
    p.add_argument("--check-on-demand", action="store_true",
                   help="also run the loop on demand (--lookahead 0) beside it and compare "
                        "every env after every step, bit for bit")
    p.add_argument("--short", action="store_true",
                   help="a short run for the tests: 256 envs, 50 steps, crashes likelier")
    args = p.parse_args(argv)
    if args.short:
        given = ["--" + d.replace("_", "-") for d in ("envs", "steps", "crash_prob", "shown")
                 if getattr(args, d) != p.get_default(d)]
        if given:
            p.error("--short sets %s itself: give one or the other" % ", ".join(given))
        args.envs, args.steps, args.crash_prob, args.shown = 256, 50, 0.005, 8
    return args


def wait(torch, stream, what):
    """Waits for the work queued on *stream*, TIMEOUT seconds at most."""
    event = torch.cuda.Event()
    event.record(stream)
    deadline = time.monotonic() + TIMEOUT
    while not event.query():
        if time.monotonic() > deadline:
            raise TimeoutError("simloop_warp.py: %s: the device took over %.0f s"
                               % (what, TIMEOUT))


class Sim:
    """The envs of a population: a seed state, the regeneration (on demand,
    or a Lookahead's spares and refill when args.lookahead > 0), the
    agents."""

    def __init__(self, torch, tg, twarp, args):
        self.torch, self.tg, self.twarp, self.args = torch, tg, twarp, args
        self.n, dev = args.envs, "cuda:0"
        twarp.prepare(0)  # Warp set up outside any capture
        self.stream = torch.cuda.current_stream()
        self.state = tg.seeds.SeedState(self.n, args.seed)
        # On demand, it regenerates the ended envs' tracks; with lookahead,
        # only the first tracks, at a reset.
        self.regen = wt.Regen(tg, twarp, self.state, args, advance=True)
        self.ahead = wl.Lookahead(tg, twarp, self.state, args) if args.lookahead else None
        # Each agent's salt: its global env index's seed, as in simloop.py.
        self.salt = wp.array([tg.seeds.env_seed(simloop.AGENT_SALT, e)
                              for e in range(self.n)], dtype=wp.uint64, device=dev)
        self.progress = wp.zeros(self.n, dtype=wp.float32, device=dev)
        self.step_no = wp.zeros(1, dtype=wp.int64, device=dev)
        self.n_done = wp.zeros(1, dtype=wp.int32, device=dev)
        self.any_done = wp.zeros(1, dtype=wp.int32, device=dev)
        self.counters = wp.zeros(len(simloop.COUNTERS), dtype=wp.int64, device=dev)
        self.flag = torch.zeros(1, dtype=torch.int32, pin_memory=True)
        self.graph = self.floor = None
        for module in (warp_step, wl, wt):  # every kernel, before a capture
            wp.load_module(module, device=dev)
        tiled = []  # each a module of its own, tiled: the refill's relaxation, the fused switch
        if self.ahead is not None:
            tiled.append(wl.refill_relax_kernel(args.points))
            if args.refill == "fused":
                tiled.append(warp_step.switch_fused_kernel(args.points))
        for kernel in tiled:
            wp.load_module(kernel.module, device=dev, block_dim=wl.LANES)

    def array(self, name):
        """The array *name* of the step's kernels: the regeneration's, the
        spares', or the sim's own."""
        for arrays in (self.regen.arrays, self.ahead.arrays if self.ahead else {}):
            if name in arrays:
                return arrays[name]
        return getattr(self, name)

    def step(self, floor=False):
        """A step's kernels, on Warp's view of the sim's stream (the capture's
        own wrapper during the capture).  *floor*: without the lookahead's
        switch, whatever the sim's mode."""
        ws = self.twarp.stream_of(self.stream.cuda_stream, 0)
        slots = 0 if floor or self.ahead is None else self.ahead.slots
        warp_step.launch(step_launches(self.array, self.n, slots, self.args), stream=ws)

    def regenerate(self, policy, conditional=False):
        """The regeneration the step decided, *conditional* on the device: on
        demand, the ended envs' tracks (any_done); with lookahead, the refill
        (its flag); none with the refill fused (the step's kernels make it)."""
        if self.ahead is not None and self.args.refill == "fused":
            return
        run, flag = ((self.regen, self.any_done) if self.ahead is None
                     else (self.ahead, self.ahead["refill"]))
        if self.ahead is not None and self.args.refill == "always":
            conditional = False  # its kernels read the flag
        run.run(self.stream, policy, self.tg.exec.conditional(flag) if conditional else None)

    def reset(self):
        """Every env at epoch 1 with its first track (and its next ones ready,
        with lookahead), its agent at a random start, the counters at 0.
        Blocks."""
        r, policy = self.regen, self.tg.exec.Policy.EAGER
        self.state.reset_epochs(self.stream)  # epochs 0, then 1 by the regeneration
        with wp.ScopedStream(self.twarp.stream_of(self.stream.cuda_stream, 0),
                             sync_enter=False):
            r["mask"].fill_(1)
            r.run(self.stream, policy)
            if self.ahead is not None:
                self.ahead.reset(self.stream, policy)
            wp.launch(start_kernel, self.n,
                      inputs=[r["keys"], self.salt, self.progress, float(self.args.points)])
            for counts in (self.counters, self.step_no, self.n_done, self.any_done):
                counts.zero_()
        wait(self.torch, self.stream, "the reset")

    def capture(self):
        """The step graph: the step's kernels, and the regeneration recorded
        under its condition into the same torch graph; and the floor: the
        same step graph with no regeneration and no switch."""
        torch, tx = self.torch, self.tg.exec
        self.graph, self.floor = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        for graph, floor in ((self.graph, False), (self.floor, True)):
            with self.tg.interop.torch.graph(graph):
                self.stream = torch.cuda.current_stream()
                self.step(floor)
                if not floor:
                    self.regenerate(tx.Policy.AUTO, True)
            self.stream = torch.cuda.current_stream()

    def run_graph(self, n_steps, floor=False):
        graph = self.floor if floor else self.graph
        for _ in range(n_steps):
            graph.replay()
        wait(self.torch, self.stream, "the graph's replays")

    def gpu_time(self, n_steps, floor=False):
        """The mean GPU time of a step graph's replay from a reset, in µs:
        CUDA events around each replay, so the host's time between replays
        is not counted."""
        torch = self.torch
        graph = self.floor if floor else self.graph
        self.reset()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(n_steps)]
        for start, end in events:
            start.record(self.stream)
            graph.replay()
            end.record(self.stream)
        wait(torch, self.stream, "the timed replays")
        return 1000.0 * sum(start.elapsed_time(end) for start, end in events) / n_steps

    def run_host(self, n_steps):
        policy = self.tg.exec.Policy.EAGER
        flag = wp.to_torch(self.any_done if self.ahead is None else self.ahead["refill"])
        for _ in range(n_steps):
            self.step()
            self.flag.copy_(flag, non_blocking=True)  # the host decides: a readback
            wait(self.torch, self.stream, "a step")
            if self.flag.item():
                self.regenerate(policy)
        wait(self.torch, self.stream, "the host-driven steps")

    def drained(self):
        """How many times an env used up its spares before a refill, and (the
        refill fused) how many times one made its own track."""
        counts = self.ahead["counts"].numpy()
        return int(counts[wl.DRAINED_TOTAL]), int(counts[wl.MADE_TOTAL])

    def close(self):
        self.graph = self.floor = None
        if self.ahead is not None:
            self.ahead.close()
        self.regen.close()
        self.state.close()

    def snapshot(self):
        """Everything an env's run leaves: seeds, epochs, agents, tracks."""
        seeds, epochs = self.state.read(self.stream)
        r = self.regen
        return {
            "seeds": np.array(seeds, dtype=np.uint64),
            "epochs": np.array(epochs, dtype=np.uint32),
            "progress": self.progress.numpy(), "lengths": r["lengths"].numpy(),
            "valid": r["valid"].numpy(), "points": r["points"].numpy(),
            "counters": dict(zip(simloop.COUNTERS, self.counters.numpy().tolist())),
        }


TRACK_FIELDS = ("points", "valid", "lengths")


def same_bits(a, b, fields):
    """Per env (the first axis), whether *a* and *b* hold the same bits in
    every one of *fields*."""
    n = len(a[fields[0]])
    same = np.ones(n, dtype=bool)
    for f in fields:
        x, y = (np.ascontiguousarray(v[f]).reshape(n, -1).view(np.uint8) for v in (a, b))
        same &= (x == y).all(axis=1)
    return same


def verify_standalone(torch, tg, twarp, args, snap):
    """Regenerates the most regenerated envs from (seed, epoch) alone, in a
    seed state and a regeneration of their own, and compares their tracks
    with the loop's, bit for bit."""
    order = sorted(range(len(snap["epochs"])), key=lambda e: (-int(snap["epochs"][e]), e))
    picks = order[:min(args.shown, len(order))]
    state = tg.seeds.SeedState.at([int(snap["seeds"][e]) for e in picks],
                                  [int(snap["epochs"][e]) for e in picks])
    regen = wt.Regen(tg, twarp, state, args, advance=False)
    stream = torch.cuda.current_stream()
    regen.run(stream, tg.exec.Policy.EAGER)  # every env masked
    wait(torch, stream, "the standalone regeneration")
    got = {f: regen[f].numpy() for f in TRACK_FIELDS}
    same = int(same_bits(got, {f: snap[f][picks] for f in TRACK_FIELDS},
                         TRACK_FIELDS).sum())
    if args.svg:
        labels = ["env %d, epoch %d" % (e, snap["epochs"][e]) for e in picks]
        tg.tracks.write_svg(args.svg, got["points"].tobytes(), got["valid"].tobytes(),
                            len(picks), args.points, 12.0, labels)
    regen.close()
    state.close()
    return same, len(picks)


def simloop_rate(torch, tg, args):
    """simloop.py's in-graph loop (TrackGen's C track producer and torch ops)
    at the same size, timed as ours: env-steps/s."""
    sim = simloop.Sim(torch, tg, args.envs, args.seed, simloop.parse_args([
        "--envs", str(args.envs), "--steps", str(args.steps), "--seed", str(args.seed),
        "--lap-steps", repr(args.lap_steps), "--crash-prob", repr(args.crash_prob),
        "--lookahead", str(min(args.lookahead, tg.tracks.MAX_LOOKAHEAD)),
        "--refill-batch", str(args.refill_batch),
        "--compile" if args.compile else "--no-compile"]))
    sim.capture()
    sim.reset()
    stream = torch.cuda.current_stream()
    start = time.perf_counter()
    for _ in range(args.steps):
        sim.graph.replay()
    wait(torch, stream, "simloop.py's replays")
    seconds = time.perf_counter() - start
    counters = dict(zip(simloop.COUNTERS, sim.counters.cpu().tolist()))
    rate = simloop.report("simloop.py:", sim, seconds, args.steps, counters)
    sim.close()
    return rate


def report_floor(sim, args, graph_s):
    """The floor (the same step graph with no regeneration and no switch) as
    simloop.py reports it, and the GPU time a step of each graph takes,
    from CUDA events around each replay (the host's time between replays
    not counted): the regeneration's amortized GPU time is the
    difference."""
    sim.reset()
    floor_s = timed(sim.run_graph, args.steps, True)
    simloop.report_floor(sim.n, args.steps, graph_s, floor_s)
    gpu_graph, gpu_floor = (sim.gpu_time(args.steps, floor) for floor in (False, True))
    print("  GPU time by events: %.2f us a step in-graph, %.2f us its floor's: the "
          "regeneration's %.2f us per step, amortized" % (gpu_graph, gpu_floor,
                                                          gpu_graph - gpu_floor))


def check_on_demand(torch, tg, twarp, args, sim):
    """Runs *sim*'s graph beside the same loop on demand (--lookahead 0),
    from a reset, and compares every env after every step, bit for bit:
    whatever its spares, an env's tracks are the ones on-demand generation
    makes.  Prints how many envs matched at every step."""
    demand = Sim(torch, tg, twarp, argparse.Namespace(**dict(vars(args), lookahead=0)))
    demand.reset()
    demand.capture()
    fields = ("seeds", "epochs", "progress") + TRACK_FIELDS
    same = np.ones(args.envs, dtype=bool)
    for s in (sim, demand):
        s.reset()
    for _ in range(args.steps):
        for s in (sim, demand):
            s.run_graph(1)
        a, b = sim.snapshot(), demand.snapshot()
        same &= same_bits(a, b, fields)
    ends = [sum(c[k] for k in ("laps", "crashes", "invalid"))
            for c in (a["counters"], b["counters"])]
    print("lookahead vs on-demand: %d of %d envs bit-identical after each of %d steps "
          "(%d and %d episodes ended; an env used up its spares %d times)"
          % (int(same.sum()), args.envs, args.steps, ends[0], ends[1],
             sim.drained()[0] if sim.ahead is not None else 0))
    demand.close()
    return int(same.sum()) == args.envs and ends[0] == ends[1]


def timed(run, *how):
    start = time.perf_counter()
    run(*how)
    return time.perf_counter() - start


def options_error(args):
    """What is wrong with the options, or None: before any device is touched.
    Warp passes a kernel's int arguments as 32 bits: larger ones would wrap."""
    counts = (args.max_iters, args.refill_batch, args.points, args.control)
    if (min(args.max_iters, args.refill_batch) < 1 or min(args.points, args.control) < 3
            or args.lookahead < 0 or max(counts) > 2 ** 31 - 1):
        return ("--max-iters and --refill-batch must be positive, --points and --control "
                "at least 3, all at most 2**31 - 1, --lookahead at least 0")
    return simloop.loop_options_error(args)


def main(argv=None):
    args = parse_args(argv)
    error = options_error(args)
    if error:
        print("simloop_warp.py: " + error, file=sys.stderr)
        return 2
    why = simloop.missing("simloop_warp.py", warp=True)
    if why:
        print(why, file=sys.stderr)
        return SKIP
    import torch
    import track_gen as tg
    import track_gen.interop.torch  # noqa: F401
    import track_gen.tracks  # noqa: F401
    from track_gen.interop import warp as twarp

    why = args.lookahead and wl.refill_points_error(args.points, "cuda:0",
                                                     args.refill == "fused")
    if why:
        print("simloop_warp.py: " + why, file=sys.stderr)
        return 2
    print("simloop_warp.py: %d envs x %d steps on %s, torch %s, warp %s, track_gen %s, %s"
          % (args.envs, args.steps, torch.cuda.get_device_name(), torch.__version__,
             wp.__version__, tg.__version__, "lookahead %d" % args.lookahead
             if args.lookahead else "on demand"))

    sim = Sim(torch, tg, twarp, args)
    sim.reset()  # runs every stage once, eagerly, before the capture
    sim.capture()
    sim.reset()
    graph_s = timed(sim.run_graph, args.steps)
    in_graph = sim.snapshot()
    rate_graph = simloop.report("in-graph:", sim, graph_s, args.steps, in_graph["counters"])
    if sim.ahead is not None:
        drained, made = sim.drained()
        print("  lookahead %d, refill batch %d, refill %s: an env used up its spares "
              "before a refill %d times%s" % (
                  args.lookahead, args.refill_batch, args.refill, drained,
                  ", made its own track %d times" % made if args.refill == "fused" else ""))
    report_floor(sim, args, graph_s)
    matches = not args.check_on_demand or check_on_demand(torch, tg, twarp, args, sim)

    host = Sim(torch, tg, twarp, args)
    host.reset()
    host_s = timed(host.run_host, args.steps)
    driven = host.snapshot()
    rate_host = simloop.report("host-driven:", host, host_s, args.steps, driven["counters"])

    same = int(same_bits(in_graph, driven, ("seeds", "epochs", "progress")
                         + TRACK_FIELDS).sum())
    identical = same == args.envs and in_graph["counters"] == driven["counters"]
    print("  in-graph speed-up: %.2fx (target >= 1.5x); %d of %d envs and the counters "
          "%s as the host-driven run" % (rate_graph / rate_host, same, args.envs,
                                         "the same" if identical else "NOT the same"))
    n_same, n_shown = verify_standalone(torch, tg, twarp, args, in_graph)
    print("determinism: %d of %d envs regenerated standalone from (seed, epoch) are "
          "bit-identical to the loop's tracks" % (n_same, n_shown))
    if args.svg:
        print("wrote %s (%d tracks)" % (args.svg, n_shown))
    for s in (sim, host):
        s.close()
    if args.simloop:
        rate_c = simloop_rate(torch, tg, args)
        print("  Warp loop / simloop.py in-graph: %.2f (target >= 0.75: within 25%%)"
              % (rate_graph / rate_c))
    if not identical or n_same != n_shown or not matches:
        print("simloop_warp.py: the runs differ: the loop is not deterministic",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
