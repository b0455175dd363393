#!/usr/bin/env python3
"""simloop_warp.py: the simulator loop of simloop.py with NVIDIA Warp kernels,
its physics step and its track regeneration, in one torch.cuda.graph.

E envs each drive an agent around a track, as in simloop.py: a step is a
Warp kernel that moves each agent by a noisy speed drawn from a hash of its
env's effective seed (the track's (seed, epoch)), its global index and the
step number, ends the episode after a lap, a crash or at once on an invalid
track, marks the ended envs in a mask and counts them; a one-thread kernel
sets the any-done flag.  Under conditional(any_done), a track_gen Producer
of Warp stages regenerates the marked envs' tracks: the SeedState advances
their epochs, each track's control points come from a hash of its effective
seed, a bounded relaxation loop (a loop stage, a WHILE node) smooths its
sharp turns away, and a validity test and its length close it (the
generator: warp_tracks.py).  An env's track depends on its (seed, epoch)
alone.

The step is captured once into a torch.cuda.graph, with torch's capture
registered with Warp by track_gen.interop.torch.graph(): the step's kernels
and the producer's Warp stages land in one torch graph, which keeps the
producer and what Warp made for it.  Torch's graph rather than a
wp.ScopedCapture (which would work too): it is the graph simloop.py
replays, so the two loops, run in the same process (--simloop), compare
like for like.  The same loop driven from the
host must end in the same state bit for bit, and sampled envs' tracks
regenerated standalone from their (seed, epoch) must be bit-identical.
Without torch, warp or a GPU it says so and exits 77.
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
    import warp_tracks as wt
    from warp_tracks import GOLDEN, high_unit, low_unit, mix64

    @wp.kernel
    def step_kernel(keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
                    step_no: wp.array(dtype=wp.int64), valid: wp.array(dtype=wp.uint8),
                    progress: wp.array(dtype=wp.float32), mask: wp.array(dtype=wp.uint8),
                    n_done: wp.array(dtype=wp.int32), counters: wp.array(dtype=wp.int64),
                    mean_speed: wp.float32, crash_prob: wp.float32, lap: wp.float32):
        """One env's step: simloop.py's, counted with integer atomics (any order
        gives the same sums)."""
        e = wp.tid()
        z = mix64(keys[e] ^ salt[e] ^ (wp.uint64(step_no[0]) * GOLDEN))
        moved = progress[e] + mean_speed * (0.5 + high_unit(z))
        crashed = low_unit(z) < crash_prob
        if valid[e] == wp.uint8(0) or crashed or moved >= lap:
            progress[e] = 0.0
            mask[e] = wp.uint8(1)
            wp.atomic_add(n_done, 0, 1)
            slot = 0  # a lap, unless a crash (1), unless an invalid track (2)
            if valid[e] == wp.uint8(0):
                slot = 2
            elif crashed:
                slot = 1
            wp.atomic_add(counters, slot, wp.int64(1))
        else:
            progress[e] = moved
            mask[e] = wp.uint8(0)

    @wp.kernel
    def tally_kernel(n_done: wp.array(dtype=wp.int32), any_done: wp.array(dtype=wp.int32),
                     counters: wp.array(dtype=wp.int64), step_no: wp.array(dtype=wp.int64)):
        """One thread: the any-done flag, the steps that regenerate or skip."""
        done = 0
        if n_done[0] > 0:
            done = 1
        any_done[0] = done
        counters[3] = counters[3] + wp.int64(done)
        counters[4] = counters[4] + wp.int64(1 - done)
        n_done[0] = 0
        step_no[0] = step_no[0] + wp.int64(1)

    @wp.kernel
    def start_kernel(keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
                     progress: wp.array(dtype=wp.float32), lap: wp.float32):
        """An agent's start on its first track, as simloop.py's."""
        e = wp.tid()
        progress[e] = lap * (1.0 - high_unit(mix64(keys[e] ^ salt[e])))


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
    p.add_argument("--short", action="store_true",
                   help="a short run for the tests: 256 envs, 50 steps, crashes likelier")
    args = p.parse_args(argv)
    if args.short:
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
    """The envs of a population: a seed state, the regeneration, the agents."""

    def __init__(self, torch, tg, twarp, args):
        self.torch, self.tg, self.twarp, self.args = torch, tg, twarp, args
        self.n, dev = args.envs, "cuda:0"
        twarp.prepare(0)  # Warp set up outside any capture
        self.stream = torch.cuda.current_stream()
        self.state = tg.seeds.SeedState(self.n, args.seed)
        self.regen = wt.Regen(tg, twarp, self.state, args, advance=True)
        # Each agent's salt: its global env index's seed, as in simloop.py.
        self.salt = wp.array([tg.seeds.env_seed(simloop.AGENT_SALT, e)
                              for e in range(self.n)], dtype=wp.uint64, device=dev)
        self.progress = wp.zeros(self.n, dtype=wp.float32, device=dev)
        self.step_no = wp.zeros(1, dtype=wp.int64, device=dev)
        self.n_done = wp.zeros(1, dtype=wp.int32, device=dev)
        self.any_done = wp.zeros(1, dtype=wp.int32, device=dev)
        self.counters = wp.zeros(len(simloop.COUNTERS), dtype=wp.int64, device=dev)
        self.flag = torch.zeros(1, dtype=torch.int32, pin_memory=True)
        self.graph = None
        for module in (sys.modules[__name__], wt):  # every kernel, before a capture
            wp.load_module(module, device=dev)

    def step(self):
        """A step's kernels, on Warp's view of the sim's stream (the capture's
        own wrapper during the capture)."""
        a, r = self.args, self.regen
        ws = self.twarp.stream_of(self.stream.cuda_stream, 0)
        wp.launch(step_kernel, self.n, stream=ws, inputs=[
            r["keys"], self.salt, self.step_no, r["valid"], self.progress, r["mask"],
            self.n_done, self.counters, a.points / a.lap_steps, a.crash_prob,
            float(a.points)])
        wp.launch(tally_kernel, 1, stream=ws,
                  inputs=[self.n_done, self.any_done, self.counters, self.step_no])

    def reset(self):
        """Every env at epoch 1 with its first track, its agent at a random
        start, the counters at 0.  Blocks."""
        r = self.regen
        self.state.reset_epochs(self.stream)  # epochs 0, then 1 by the regeneration
        with wp.ScopedStream(self.twarp.stream_of(self.stream.cuda_stream, 0),
                             sync_enter=False):
            r["mask"].fill_(1)
            r.run(self.stream, self.tg.exec.Policy.EAGER)
            wp.launch(start_kernel, self.n,
                      inputs=[r["keys"], self.salt, self.progress, float(self.args.points)])
            for counts in (self.counters, self.step_no, self.n_done, self.any_done):
                counts.zero_()
        wait(self.torch, self.stream, "the reset")

    def capture(self):
        """The step graph: the step's kernels, and the regeneration recorded
        under conditional(any_done) into the same torch graph."""
        torch, tx = self.torch, self.tg.exec
        self.graph = torch.cuda.CUDAGraph()
        with self.tg.interop.torch.graph(self.graph):
            self.stream = torch.cuda.current_stream()
            self.step()
            self.regen.run(self.stream, tx.Policy.AUTO, tx.conditional(self.any_done))
        self.stream = torch.cuda.current_stream()

    def run_graph(self, n_steps):
        for _ in range(n_steps):
            self.graph.replay()
        wait(self.torch, self.stream, "the graph's replays")

    def run_host(self, n_steps):
        policy = self.tg.exec.Policy.EAGER
        any_done = wp.to_torch(self.any_done)
        for _ in range(n_steps):
            self.step()
            self.flag.copy_(any_done, non_blocking=True)  # the host decides: a readback
            wait(self.torch, self.stream, "a step")
            if self.flag.item():
                self.regen.run(self.stream, policy)
        wait(self.torch, self.stream, "the host-driven steps")

    def close(self):
        self.graph = None
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


def timed(run, *how):
    start = time.perf_counter()
    run(*how)
    return time.perf_counter() - start


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("simloop_warp.py: needs PyTorch (pip install torch)", file=sys.stderr)
        return SKIP
    if wp is None:
        print("simloop_warp.py: needs NVIDIA Warp (pip install warp-lang)", file=sys.stderr)
        return SKIP
    if not torch.cuda.is_available():
        print("simloop_warp.py: needs a CUDA GPU", file=sys.stderr)
        return SKIP
    wp.config.log_level = wp.LOG_WARNING  # no banner
    if wp.get_cuda_device_count() < 1:
        print("simloop_warp.py: Warp sees no CUDA GPU", file=sys.stderr)
        return SKIP
    import track_gen as tg
    import track_gen.interop.torch  # noqa: F401
    import track_gen.tracks  # noqa: F401
    from track_gen.interop import warp as twarp

    if min(args.envs, args.steps, args.max_iters, args.shown) < 1 or min(
            args.points, args.control) < 3:
        print("simloop_warp.py: --envs, --steps, --max-iters and --shown must be "
              "positive, --points and --control at least 3", file=sys.stderr)
        return 2
    print("simloop_warp.py: %d envs x %d steps on %s, torch %s, warp %s, track_gen %s"
          % (args.envs, args.steps, torch.cuda.get_device_name(), torch.__version__,
             wp.__version__, tg.__version__))

    sim = Sim(torch, tg, twarp, args)
    sim.reset()  # runs every stage once, eagerly, before the capture
    sim.capture()
    sim.reset()
    graph_s = timed(sim.run_graph, args.steps)
    in_graph = sim.snapshot()
    rate_graph = simloop.report("in-graph:", sim, graph_s, args.steps, in_graph["counters"])

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
    if not identical or n_same != n_shown:
        print("simloop_warp.py: the runs differ: the loop is not deterministic",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
