#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""simloop.py: a PyTorch batched simulator that regenerates tracks inside one
torch.cuda.graph, with TrackGen from Python.

E envs each drive an agent around a track.  One step is torch ops: the
agents move by a noisy speed drawn from a hash of each env's effective seed
(its track's (seed, epoch)), its global index and the step number; an
episode ends after a lap, a crash or at once on an invalid track; the ended
envs are marked in the track producer's "mask" and an any-done flag is set
on the device.  Then TrackGen gives the marked envs their next tracks, of
the shape family of the step's curriculum.  With --lookahead L (default 2)
each env keeps its L next tracks ready: the track producer, run on every
step, switches the marked envs to them in one always-on kernel and refills
the spent ones in batches, when the device decides so.  With --lookahead 0
they are generated on demand under conditional(any_done): the example track
producer (C kernels: a switch over the family, a relaxation loop, a validity
test), and a Python stage of torch ops that measures each new track's
length (a stage appended to the producer runs with every call: with
lookahead, on every step, so only this mode measures lengths).  The whole
step is captured once into a torch.cuda.graph; replaying it T times runs the
loop without a host round trip.  Beside it, its floor: the same step graph
with no regeneration and no track switch.

The same loop is then driven from the host (the any-done flag read back
each step, the producers run eagerly when needed): it must end in the same
state bit for bit.  Sampled envs' tracks are regenerated standalone from
their (seed, epoch, family) and compared bit for bit, and drawn to an SVG.
Without torch or a GPU it says so and exits 77.
"""
import argparse
import math
import os
import sys
import time

SKIP = 77
GOLDEN = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
AGENT_SALT = 0xA6E7
COUNTERS = ("laps", "crashes", "invalid", "regen_steps", "skipped_steps")


def signed64(v):
    """A 64-bit pattern as the int64 torch holds it."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def add_compile_option(p):
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                   help="fuse the step's and the stage's torch ops with torch.compile "
                        "(default; --no-compile runs them op by op)")


def loop_parser(doc, agents=True):
    """A parser with the options every simulator loop of these examples takes
    (its population, its episodes, what it checks and draws); *agents*: the
    options of the hashed agents (their lap time and crash rate) too."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", type=int, default=4096, help="envs (default 4096)")
    p.add_argument("--steps", type=int, default=2000, help="steps (default 2000)")
    p.add_argument("--seed", type=int, default=1234, help="the population's base seed")
    if agents:
        p.add_argument("--lap-steps", type=float, default=6000.0,
                       help="mean steps per lap (default 6000)")
        p.add_argument("--crash-prob", type=float, default=2e-5,
                       help="crash probability per env and step (default 2e-5)")
    p.add_argument("--shown", type=int, default=16,
                   help="envs regenerated standalone and drawn (default 16)")
    return p


def parse_args(argv=None):
    p = loop_parser(__doc__)
    p.add_argument("--curriculum", type=int, default=500,
                   help="steps of each shape family, in turn (default 500)")
    p.add_argument("--svg", default="tracks-py.svg", help="the SVG to write ('' for none)")
    add_track_options(p)
    add_compile_option(p)
    return p.parse_args(argv)


def add_track_options(p, refill_batch=64):
    """The track producer's options of the loops: --lookahead, --refill-batch
    (default *refill_batch*), --overlap, --heavy."""
    p.add_argument("--lookahead", type=int, default=2,
                   help="spare tracks kept ready per env, 0 to 8 (default 2; 0: "
                        "generate on demand)")
    p.add_argument("--refill-batch", type=int, default=refill_batch,
                   help="with lookahead: spent spares that start a refill (default %d)"
                        % refill_batch)
    p.add_argument("--overlap", action="store_true",
                   help="with lookahead: refill beside the steps, on a stream of the "
                        "least priority, started by the loop's poll(); times the steps")
    p.add_argument("--heavy", type=int, default=0, metavar="N",
                   help="a heavy generator: tighter turns, N relaxation iterations "
                        "every spare track (on demand, up to N; default 0: the normal "
                        "one); times the steps")


def loop_options_error(args):
    """What is wrong with the options loop_parser() adds, and --svg, or
    None: checked before anything touches a device, so that a run never
    fails at its end (an SVG that cannot be written) for what its start
    could tell."""
    if not 1 <= args.envs <= 2 ** 31 - 1 or args.steps < 1 or args.shown < 1:
        return "--envs (1 to 2**31 - 1), --steps and --shown must be positive"
    if not 0 <= args.seed < 2 ** 64:
        return "--seed must be in [0, 2**64 - 1]"
    if not 0 < getattr(args, "lap_steps", 1.0) < math.inf:
        return "--lap-steps must be a positive number"
    if not 0 <= getattr(args, "crash_prob", 0.0) <= 1:
        return "--crash-prob must be a probability, in [0, 1]"
    svg = getattr(args, "svg", "")
    if svg:
        where = os.path.dirname(os.path.abspath(svg))
        if os.path.isdir(svg) or not os.path.isdir(where) or not os.access(where, os.W_OK):
            return ("--svg %s: not a file in a writable directory; pass one (or '' for "
                    "no SVG)" % svg)
    return None


def track_options_error(args):
    """What is wrong with the track options, or None."""
    from track_gen.tracks import MAX_LOOKAHEAD as top
    if not 0 <= args.lookahead <= top or args.refill_batch < 1 or args.heavy < 0:
        return "--lookahead must be in [0, %d], --refill-batch positive, --heavy >= 0" % top
    if args.overlap and not args.lookahead:
        return "--overlap needs --lookahead of 1 or more"
    return None


def shape_config(args):
    """The generator's shape options: the heavy one's, or none (the default)."""
    return dict(max_iters=args.heavy, min_turn_radius=45.0) if args.heavy else {}


def track_config(args):
    """TrackProducer's keyword arguments for the loops' options: with a heavy
    generator, every spare track runs all its iterations (a smooth one does
    not move: the same tracks, at a set cost)."""
    config = dict(advance=True, **shape_config(args))
    if args.lookahead:
        config.update(lookahead=args.lookahead, refill_batch=args.refill_batch,
                      overlap=args.overlap, min_iters=args.heavy)
    return config


def describe_tracks(args):
    """A line on how the loop gets its tracks."""
    if not args.lookahead:
        line = "on demand: tracks generated when an episode ends"
    else:
        line = "lookahead: %d spare tracks per env, refilled %d at a time, %s" % (
            args.lookahead, args.refill_batch,
            "beside the steps" if args.overlap else "in the step graph")
    if args.heavy:
        line += "; heavy generator: %s %d relaxation iterations a track" % (
            "all" if args.lookahead else "up to", args.heavy)
    return line


# With overlap, the host loop stays at most this many steps ahead of the
# device (simloop.c's RUN_AHEAD).
RUN_AHEAD = 16


class StepTimes:
    """Events after each step on a stream; the GPU time between consecutive
    ones, and its quantiles."""

    def __init__(self, torch, n_steps):
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(n_steps)]
        self.us = []

    def record(self, t, stream):
        if t < len(self.events):
            self.events[t].record(stream)

    def read(self, n_steps, starts=()):
        """After a synchronization: the step times of the last run, in us;
        *starts*: steps that began a new stretch of the run (after a pause
        for other work), not timed."""
        n = min(n_steps, len(self.events))
        self.us = sorted(self.events[t - 1].elapsed_time(self.events[t]) * 1e3
                         for t in range(1, n) if t not in starts)

    def quantile(self, q):
        return self.us[min(int(q * len(self.us)), len(self.us) - 1)] if self.us else 0.0


def report_step_times(floor_median, floor_p99, times):
    """The timed loop's step times against its floor's median: a stall shows
    in the p99 (a refill in the step graph stalls its step; one beside
    should not).  The floor's own p99 beside: the jitter of a step with no
    regeneration at all, under which no loop's p99 can go."""
    p99 = times.quantile(0.99)
    print("  step times: floor median %.2f us, p99 %.2f us (%.2fx); loop median %.2f us, "
          "p99 %.2f us = %.2fx the floor's median (target <= 1.2x)"
          % (floor_median, floor_p99, floor_p99 / floor_median if floor_median else 0.0,
             times.quantile(0.5), p99, p99 / floor_median if floor_median else 0.0))


def report_overlap(before, after, floor_median, floor_s, graph_s):
    """The refills beside the timed loop (refill_stats() before and after it)
    against issue 36's other promises: only its share (the loop's speed
    against the floor's times 1 - the refills' share of the GPU: the SM time
    their blocks, one an SM, were resident, counted as if each held its SM
    whole), and the ends that found no spare ready.  *graph_s* runs until
    the device is idle (run_graph(), race_mjwarp's timed()), so the refills'
    time *after* counts lies within it (simloop.c, which times the steps
    alone, prints the share without and with the refill still running at
    the loop's end)."""
    refills = after["started"] - before["started"]
    ms = after["gpu_ms"] - before["gpu_ms"]
    busy_s = (after["busy_ms"] - before["busy_ms"]) / 1e3
    share = min(busy_s / (max(after["blocks"], 1) * graph_s), 1.0)
    print("  overlapped refill: %d refills, %d spares made, %.2f ms of GPU each (%.0f "
          "steps of the floor)" % (refills, after["made"] - before["made"],
                                   ms / refills if refills else 0.0,
                                   ms * 1e3 / refills / floor_median
                                   if refills and floor_median else 0.0))
    print("  ends: %d, of which %d found no spare ready and made their track at once "
          "(envs touched); %d steps left an env with no spare (each makes a refill due)"
          % (after["freed"] - before["freed"], after["misses"] - before["misses"],
             after["urgent"] - before["urgent"]))
    print("  a refill ran %.0f%% of the loop's time; its blocks (one an SM) held %.1f%% "
          "of the GPU's SM time: its share" % (min(ms / 1e3 / graph_s, 1.0) * 100,
                                                share * 100))
    print("  only its share: the loop's speed is %.3fx its floor's times (1 - share), "
          "1 - share being %.3f (target >= 0.9x)"
          % (floor_s / graph_s / (1 - share) if share < 1 else 0.0, 1 - share))


class Sim:
    """Envs [first_env, first_env + n_envs) of a population: a seed state shard,
    a track producer with a Python post-processing stage, and the agents."""

    def __init__(self, torch, tg, n_envs, base_seed, args, first_env=0, device=0):
        self.torch, self.tg, self.args = torch, tg, args
        self.n, self.first = n_envs, first_env
        dev = self.dev = torch.device("cuda", device)
        self.stream = torch.cuda.current_stream(dev)
        self.state = tg.seeds.SeedState.shard(first_env, n_envs, base_seed, device=device)
        self.lookahead, self.overlap = args.lookahead, args.overlap
        self.tracks = tg.tracks.TrackProducer(self.state, stream=self.stream,
                                              **track_config(args))
        # With overlap the steps replay on a stream of a greater priority than
        # the refills' (the least, the default), so their blocks go first.
        self.replay_stream = torch.cuda.Stream(dev, priority=-1) if self.overlap else None
        self.times = None
        self.n_points = self.tracks.n_points
        self.mask = self.tracks.tensor("mask")
        self.family = self.tracks.tensor("family")
        self.points = self.tracks.tensor("points")
        self.valid = self.tracks.tensor("valid")
        self.keys = torch.zeros(n_envs, dtype=torch.int64, device=dev)
        self.progress = torch.zeros(n_envs, dtype=torch.float32, device=dev)
        self.lengths = torch.zeros(n_envs, dtype=torch.float32, device=dev)
        self.any_done = torch.zeros(1, dtype=torch.int32, device=dev)
        self.step_no = torch.zeros(1, dtype=torch.int64, device=dev)
        self.counters = torch.zeros(len(COUNTERS), dtype=torch.int64, device=dev)
        # Each agent's salt: its GLOBAL env index, so the sharding changes nothing.
        salts = tg.seeds.SeedState.shard(first_env, n_envs, AGENT_SALT, device=device)
        self.salt = tg.interop.torch.tensor_at(salts.seeds_ptr, (n_envs,), torch.int64,
                                               salts).clone()
        salts.close()
        self.mean_speed = self.n_points / args.lap_steps
        self.step, self.lengths_of = self._step, self._lengths
        if args.compile:
            self.step = torch.compile(self._step, fullgraph=True)
            self.lengths_of = torch.compile(self._lengths, fullgraph=True)
        # The Python stage joins the C producer's: one condition guards both.
        # With lookahead the producer runs on every step: no stage of torch ops.
        if not self.lookahead:
            self.tracks.add_device_stage("lengths", lambda ctx: self.lengths_of(),
                                         capture_safe=True)

    # -- the regeneration's Python stage ------------------------------------

    def _lengths(self):
        """The new tracks' lengths, summed in a fixed order (a tree of adds:
        the same bits for any batch size)."""
        torch = self.torch
        seg = self.points.roll(-1, dims=1) - self.points
        d = torch.sqrt(seg[..., 0] * seg[..., 0] + seg[..., 1] * seg[..., 1])
        while d.shape[1] > 1:
            half = d.shape[1] // 2
            d = d[:, :half] + d[:, half:]
        self.lengths.copy_(torch.where(self.mask.bool(), d[:, 0], self.lengths))

    # -- one step of torch ops ------------------------------------------------

    def _lsr(self, z, k):
        """Logical right shift of int64 bit patterns."""
        return (z >> k) & ((1 << (64 - k)) - 1)

    def _mix(self, z):
        z = (z ^ self._lsr(z, 30)) * signed64(MIX1)
        z = (z ^ self._lsr(z, 27)) * signed64(MIX2)
        return z ^ self._lsr(z, 31)

    def _uniforms(self, salt_step):
        z = self._mix(self.keys ^ self.salt ^ salt_step)
        scale = 1.0 / (1 << 24)
        return (self._lsr(z, 40).float() * scale, (z & 0xFFFFFF).float() * scale)

    def _step(self):
        torch = self.torch
        u_speed, u_crash = self._uniforms(self.step_no * signed64(GOLDEN))
        moved = self.progress + self.mean_speed * (0.5 + u_speed)
        crash = u_crash < self.args.crash_prob
        lap = moved >= self.n_points
        invalid = self.valid == 0
        done = crash | lap | invalid
        self.progress.copy_(torch.where(done, torch.zeros_like(moved), moved))
        self.mask.copy_(done)
        self.any_done.copy_(done.any())
        self.counters[:3] += torch.stack(
            [(lap & ~crash & ~invalid).sum(), (crash & ~invalid).sum(), invalid.sum()])
        self.counters[3:] += torch.cat([self.any_done, 1 - self.any_done])
        self.family.copy_((self.step_no // self.args.curriculum) % len(self.tg.tracks.FAMILIES))
        self.step_no += 1

    def step_all(self):
        """A step: the agents, then (in the caller) the regeneration."""
        self.state.fill_effective(self.keys, self.stream)
        self.step()

    def regenerate(self, policy):
        """The producer's part of a step: with lookahead on every step (its
        switch kernel decides the refill); on demand under any-done, which
        the host-driven loop has read back."""
        tx = self.tg.exec
        recorded = policy == tx.Policy.AUTO and not self.lookahead
        self.tracks.run(self.stream, policy,
                        tx.conditional(self.any_done) if recorded else None)

    # -- life cycle ---------------------------------------------------------------

    def reset(self):
        """Every env at epoch 1 with its first track (family 0), its agent at a
        random start, the counters at 0.  Blocks."""
        tx = self.tg.exec
        if self.overlap:  # a refill still running would finish on dropped spares
            self.tracks.wait_refill()
        self.state.reset_epochs(stream=self.stream)
        self.tracks.reset(self.stream)
        self.mask.fill_(1)
        self.family.zero_()
        self.regenerate(tx.Policy.EAGER)
        if self.overlap:  # their spares: a refill, due once the first call's totals are in
            self.torch.cuda.synchronize()
            self.tracks.poll()
            self.tracks.wait_refill()
        elif self.lookahead:  # a call with no env ended: their spares
            self.mask.zero_()
            self.regenerate(tx.Policy.EAGER)
        self.state.fill_effective(self.keys, self.stream)
        u, _ = self._uniforms(0)
        self.progress.copy_(self.n_points * (1.0 - u))
        self.counters.zero_()
        self.step_no.zero_()
        self.torch.cuda.synchronize()

    def _warm_up_once(self):
        for _ in range(2):
            self.step()
            self.lengths_of()

    def warm_up(self):
        """Runs the step and the stage twice on a side stream: torch.compile
        compiles here, not in a capture or a timed loop.  reset() follows."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(self.stream)
        with torch.cuda.stream(side):
            try:
                self._warm_up_once()
            except Exception as e:  # no Triton, no C compiler: say so, go op by op
                if not self.args.compile:
                    raise
                print("simloop.py: torch.compile failed (%s: %s); running op by op"
                      % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
                      file=sys.stderr)
                self.args.compile = False
                self.step, self.lengths_of = self._step, self._lengths
                self._warm_up_once()
        self.stream.wait_stream(side)

    def capture(self):
        """The step graph: the agents, and the regeneration recorded into the
        same torch graph; and the floor's, the agents alone."""
        torch, tx = self.torch, self.tg.exec
        self.warm_up()
        self.graph, self.floor = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        for graph in (self.graph, self.floor):
            with self.tg.interop.torch.graph(graph):
                self.stream = torch.cuda.current_stream()
                self.step_all()
                if graph is self.graph:
                    self.regenerate(tx.Policy.AUTO)
        self.stream = torch.cuda.current_stream(self.dev)

    def run_graph(self, n_steps, graph=None):
        """Replays the step graph (or *graph*) *n_steps* times; with overlap,
        on the replay stream, polling after each step; with overlap or a
        heavy generator, timing each."""
        torch = self.torch
        graph = graph or self.graph
        if not (self.overlap or self.args.heavy):
            for _ in range(n_steps):
                graph.replay()
            torch.cuda.synchronize()
            return
        stream = self.replay_stream or torch.cuda.current_stream(self.dev)
        self.times = StepTimes(torch, n_steps)
        stream.wait_stream(self.stream)
        with torch.cuda.stream(stream):
            for t in range(n_steps):
                graph.replay()
                self.times.record(t, stream)
                if self.overlap:
                    # poll() reads what the steps that ran wrote: a loop far
                    # ahead of them (CUDA queues launches without blocking)
                    # would start each refill that late.
                    if t >= RUN_AHEAD:
                        self.times.events[t - RUN_AHEAD].synchronize()
                    self.tracks.poll()
        torch.cuda.synchronize()
        self.times.read(n_steps)

    def run_host(self, n_steps):
        tx = self.tg.exec
        for _ in range(n_steps):
            self.step_all()
            # On demand the host decides, from a readback.
            if self.lookahead or self.any_done.item():
                self.regenerate(tx.Policy.EAGER)
            if self.overlap:
                self.tracks.poll()
        self.torch.cuda.synchronize()

    def close(self):
        self.graph = self.floor = None
        self.tracks.close()
        self.state.close()

    def snapshot(self):
        """Everything an env's run leaves: seeds, epochs, agents, tracks."""
        seeds, epochs = self.state.read()
        return {
            "seeds": seeds, "epochs": epochs,
            "progress": self.progress.cpu(), "lengths": self.lengths.cpu(),
            "families": self.tracks.tensor("families").cpu(),
            "valid": self.valid.cpu(), "points": self.points.cpu(),
            "counters": dict(zip(COUNTERS, self.counters.cpu().tolist())),
        }


def same_envs(torch, a, b):
    """How many envs are the same in snapshots @a and @b, bit for bit."""
    n = len(a["seeds"])
    same = 0
    for e in range(n):
        same += (a["seeds"][e] == b["seeds"][e] and a["epochs"][e] == b["epochs"][e]
                 and torch.equal(a["progress"][e], b["progress"][e])
                 and torch.equal(a["lengths"][e], b["lengths"][e])
                 and int(a["families"][e]) == int(b["families"][e])
                 and int(a["valid"][e]) == int(b["valid"][e])
                 and torch.equal(a["points"][e], b["points"][e]))
    return same


def verify_standalone(torch, tg, snap, n_shown, svg, shape=None):
    """Regenerates the most regenerated envs from (seed, epoch, family) alone,
    in a seed state and a track producer of their own (of the loop's *shape*
    options, shape_config()), one call per family, and compares their tracks
    with the loop's, bit for bit."""
    tx = tg.exec
    order = sorted(range(len(snap["epochs"])), key=lambda e: (-snap["epochs"][e], e))
    picks = order[:n_shown]
    state = tg.seeds.SeedState.at([snap["seeds"][e] for e in picks],
                                  [snap["epochs"][e] for e in picks])
    tracks = tg.tracks.TrackProducer(state, advance=False, **(shape or {}))
    mask, family = tracks.tensor("mask"), tracks.tensor("family")
    stream = torch.cuda.current_stream()
    for f in range(len(tg.tracks.FAMILIES)):
        chosen = [int(snap["families"][e]) == f for e in picks]
        if any(chosen):
            mask.copy_(torch.tensor(chosen, dtype=torch.uint8))
            family.fill_(f)
            tracks.run(stream, tx.Policy.EAGER)
    points = tracks.tensor("points").cpu()
    same = sum(torch.equal(points[i], snap["points"][e]) for i, e in enumerate(picks))
    if svg:
        labels = ["env %d, epoch %d, %s" % (e, snap["epochs"][e],
                                            tg.tracks.family_name(int(snap["families"][e])))
                  for e in picks]
        tracks.write_svg(svg, range(len(picks)), labels)
    tracks.close()
    state.close()
    return same, len(picks)


def report(name, sim, seconds, n_steps, counters):
    rate = sim.n * n_steps / seconds
    print("%-17s %12.0f env-steps/s  (%d steps in %.3f s)" % (name, rate, n_steps, seconds))
    print("  tracks regenerated: %d (laps %d, crashes %d, invalid %d)"
          % (counters["laps"] + counters["crashes"] + counters["invalid"],
             counters["laps"], counters["crashes"], counters["invalid"]))
    print("  regeneration ran after %d steps, skipped on the device after %d (%.1f%%)"
          % (counters["regen_steps"], counters["skipped_steps"],
             100.0 * counters["skipped_steps"] / max(1, n_steps)))
    return rate


def report_floor(n_envs, n_steps, graph_s, floor_s):
    """The floor's rate, the loop's speed as a share of it, and what the
    regeneration costs a step, amortized."""
    print("%-17s %12.0f env-steps/s  (%d steps in %.3f s)"
          % ("floor:", n_envs * n_steps / floor_s, n_steps, floor_s))
    print("  the same step graph with no regeneration and no track switch; the loop "
          "runs at %.2fx its speed (target >= 0.6x)" % (floor_s / graph_s))
    print("  regeneration: %.2f us of GPU time per step, amortized (the loop's %.2f us "
          "a step, its floor's %.2f)" % ((graph_s - floor_s) * 1e6 / n_steps,
                                         graph_s * 1e6 / n_steps, floor_s * 1e6 / n_steps))


def missing(program, warp=False):
    """Why *program* cannot run on this machine (a line for stderr, after
    which it exits with SKIP), or None: PyTorch and a CUDA GPU, and with
    *warp* NVIDIA Warp seeing one."""
    try:
        import torch
    except ImportError:
        return "%s: needs PyTorch (pip install torch)" % program
    if warp:
        try:
            import warp as wp
        except ImportError:
            return "%s: needs NVIDIA Warp (pip install warp-lang)" % program
    if not torch.cuda.is_available():
        return "%s: needs a CUDA GPU" % program
    if warp:
        wp.config.log_level = wp.LOG_WARNING  # no banner
        if wp.get_cuda_device_count() < 1:
            return "%s: Warp sees no CUDA GPU" % program
    return None


def main(argv=None):
    args = parse_args(argv)
    error = loop_options_error(args) or track_options_error(args) or (
        args.curriculum < 1 and "--curriculum must be positive")
    if error:
        print("simloop.py: " + error, file=sys.stderr)
        return 2
    why = missing("simloop.py")
    if why:
        print(why, file=sys.stderr)
        return SKIP
    import torch
    import track_gen as tg
    import track_gen.interop.torch  # noqa: F401
    import track_gen.tracks  # noqa: F401

    print("simloop.py: %d envs x %d steps on %s, torch %s, track_gen %s%s"
          % (args.envs, args.steps, torch.cuda.get_device_name(), torch.__version__,
             tg.__version__, ", torch.compile" if args.compile else ""))
    print("  " + describe_tracks(args))

    sim = Sim(torch, tg, args.envs, args.seed, args)
    sim.capture()
    sim.reset()
    start = time.perf_counter()
    sim.run_graph(args.steps, sim.floor)
    floor_s = time.perf_counter() - start
    floor_median = sim.times.quantile(0.5) if sim.times else 0.0
    floor_p99 = sim.times.quantile(0.99) if sim.times else 0.0
    sim.reset()
    before = sim.tracks.refill_stats() if args.overlap else None
    start = time.perf_counter()
    sim.run_graph(args.steps)
    graph_s = time.perf_counter() - start
    if args.overlap:
        sim.tracks.wait_refill()
    in_graph = sim.snapshot()
    rate_graph = report("in-graph:", sim, graph_s, args.steps, in_graph["counters"])
    report_floor(sim.n, args.steps, graph_s, floor_s)
    if sim.times:
        report_step_times(floor_median, floor_p99, sim.times)
    if args.overlap:
        report_overlap(before, sim.tracks.refill_stats(), floor_median, floor_s, graph_s)

    host = Sim(torch, tg, args.envs, args.seed, args)
    host.warm_up()
    host.reset()
    start = time.perf_counter()
    host.run_host(args.steps)
    host_s = time.perf_counter() - start
    driven = host.snapshot()
    rate_host = report("host-driven:", host, host_s, args.steps, driven["counters"])

    same = same_envs(torch, in_graph, driven)
    identical = same == args.envs and in_graph["counters"] == driven["counters"]
    print("  in-graph speed-up: %.2fx (target >= 1.5x); %d of %d envs and the counters "
          "%s as the host-driven run" % (rate_graph / rate_host, same, args.envs,
                                         "the same" if identical else "NOT the same"))
    n_same, n_shown = verify_standalone(torch, tg, in_graph, min(args.shown, args.envs),
                                        args.svg, shape_config(args))
    print("determinism: %d of %d envs regenerated standalone from (seed, epoch, family) "
          "are bit-identical to the loop's tracks" % (n_same, n_shown))
    if args.svg:
        print("wrote %s (%d tracks)" % (args.svg, n_shown))
    for s in (sim, host):
        s.close()
    if not identical or n_same != n_shown:
        print("simloop.py: the runs differ: the loop is not deterministic", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
