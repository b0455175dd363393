#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""race_mjwarp.py: the main job on a real simulator, MuJoCo Warp: N worlds of a
vehicle following TrackGen tracks, the whole step in one graph.

Each world is a puck on a plane (a sphere on three slide joints, resting on
the ground: one contact, so MuJoCo Warp's constraint solver and its
wp.capture_while run every step) with two motors, the force along x and y.
A pure-pursuit controller (a Warp kernel reading the world's track from
TrackGen's "points") aims at the centerline point a look-ahead distance
ahead and turns that into a force: the lateral acceleration of the arc
through it, v^2 * 2 sin(alpha) / L, and a longitudinal one towards the
world's target speed.  Each episode's speed and look-ahead come from a hash
of the track's (seed, epoch).  An env step is the controller, then
--substeps physics steps (action repeat); an episode ends on a lap, on
leaving the track (distance to the centerline over half its width), on an
invalid track, or at a step limit.  Ended worlds are marked in the track
producer's "mask"; tracks.run() switches them to their next track (with
--lookahead, every step, one always-on kernel; with --lookahead 0,
generated on demand under conditional(any_done)) and a Warp kernel resets
their puck to the new track's start.  With --overlap the spare tracks are
refilled beside the steps (TrackProducer.poll() after each), and with
--heavy N from a generator far slower than a step; the torch graph's steps
are then timed against its floor's.

The step is captured twice, into a torch graph (track_gen.interop.torch.graph(),
which registers torch's capture with Warp and with TrackGen) and into a
wp.ScopedCapture, and the same loop is driven from the host (MuJoCo Warp's
solver loop evaluated eagerly, the host reading back whether any episode
ended): the three runs must end bit for bit the same (qpos, qvel, tracks,
epochs, counters).  A third graph, the step with no tracks.run() and no
reset (the mask still written), is the floor the regeneration's share is
measured against.  Each kind of graph is captured --graphs times (3), each
instance with its own worlds, and the instances take turns, a stretch of
steps each per round (--rounds): identical graphs run at different speeds,
each steadily, and the clock drifts (see main()).  Every instance must end
as the host-driven run.  Sampled worlds' tracks regenerated standalone from
(seed, epoch, family) must be bit-identical.  Without torch, warp,
mujoco_warp or a GPU it says so and exits 77.
"""
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simloop  # noqa: E402  loop_parser(), verify_standalone(), SKIP

try:
    import numpy as np  # with warp
    import warp as wp
except ImportError:
    wp = None

SKIP = simloop.SKIP
COUNTERS = ("laps", "off_track", "timeouts", "invalid")

# The puck and its world: metres, kilograms, seconds.
PUCK_RADIUS = 0.5
MASS = 1.0
DRAG = 0.1         # N per m/s, the x and y joints' damping
FORCE_MAX = 40.0   # N, each motor's range
TIMESTEP = 0.02    # s, one physics step
START_SPEED = 5.0  # m/s along the track at a reset
# An episode's driving style, from its track's (seed, epoch): target speed
# and look-ahead distance (metres per m/s of target speed).
SPEED_MIN, SPEED_MAX = 12.0, 24.0
LOOK_MIN, LOOK_MAX = 0.4, 0.8
WINDOW = 8         # centerline points searched ahead of the last nearest one

XML = """<mujoco model="race">
  <option timestep="%(timestep)r"/>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" condim="1"/>
    <body name="puck" pos="0 0 %(radius)r">
      <joint name="x" type="slide" axis="1 0 0" damping="%(drag)r"/>
      <joint name="y" type="slide" axis="0 1 0" damping="%(drag)r"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="sphere" size="%(radius)r" mass="%(mass)r" condim="1"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="fx" joint="x" ctrllimited="true" ctrlrange="-%(force)r %(force)r"/>
    <motor name="fy" joint="y" ctrllimited="true" ctrlrange="-%(force)r %(force)r"/>
  </actuator>
</mujoco>
"""


def model_xml(timestep=TIMESTEP):
    """The MJCF of one world: qpos = (x, y, z - radius), ctrl = (fx, fy)."""
    return XML % {"timestep": timestep, "radius": PUCK_RADIUS, "drag": DRAG,
                  "mass": MASS, "force": FORCE_MAX}


if wp is not None:
    wp.set_module_options({"enable_backward": False})
    from warp_tracks import GOLDEN, mix64  # noqa: E402  simloop_warp.py's hashes
    STYLE_SALT = wp.constant(wp.uint64(0x5EED5EED))

    @wp.func
    def unit(bits: wp.uint64):
        """24 bits as a float in [0, 1)."""
        return wp.float32(wp.int32(bits & wp.uint64(0xFFFFFF))) * wp.float32(1.0 / 16777216.0)

    @wp.func
    def pursuit(pos: wp.vec2, vel: wp.vec2, target: wp.vec2, tangent: wp.vec2,
                speed_target: float, force_max: float):
        """The pure-pursuit force on the puck at *pos* moving at *vel*, aiming at
        *target*: the arc through the target tangent to the heading (the
        velocity's direction, the track's *tangent* when nearly still) has
        curvature 2 sin(alpha) / L = 2 cross(heading, d) / |d|^2; its lateral
        acceleration v^2 * curvature, plus a longitudinal one towards the
        target speed, plus the drag, each component clamped to the motors'
        range.  No trigonometry: the same bits on every device."""
        speed = wp.length(vel)
        heading = tangent
        if speed > 0.5:
            heading = vel / speed
        d = target - pos
        dd = wp.max(wp.dot(d, d), 1.0e-6)
        curvature = 2.0 * (heading[0] * d[1] - heading[1] * d[0]) / dd
        lateral = speed * speed * curvature
        along = 2.0 * (speed_target - speed)
        normal = wp.vec2(-heading[1], heading[0])
        f = MASS * (along * heading + lateral * normal) + DRAG * vel
        return wp.vec2(wp.clamp(f[0], -force_max, force_max),
                       wp.clamp(f[1], -force_max, force_max))

    @wp.func
    def segment_distance(p: wp.vec2, a: wp.vec2, b: wp.vec2):
        """The distance from p to the segment [a, b]."""
        ab = b - a
        t = wp.clamp(wp.dot(p - a, ab) / wp.max(wp.dot(ab, ab), 1.0e-12), 0.0, 1.0)
        return wp.length(p - (a + t * ab))

    @wp.kernel
    def control_kernel(points: wp.array2d(dtype=wp.vec2), qpos: wp.array2d(dtype=float),
                       qvel: wp.array2d(dtype=float), nearest: wp.array(dtype=wp.int32),
                       speed_target: wp.array(dtype=float), look: wp.array(dtype=float),
                       ctrl: wp.array2d(dtype=float), any_done: wp.array(dtype=wp.int32)):
        """A world's action: the pure-pursuit force towards the first
        centerline point ahead of its nearest one at least the look-ahead
        distance away (WINDOW points at most)."""
        e = wp.tid()
        if e == 0:
            any_done[0] = 0  # until the step's done_kernel says otherwise
        n = points.shape[1]
        pos = wp.vec2(qpos[e, 0], qpos[e, 1])
        i = nearest[e]
        dist = look[e] * speed_target[e]
        k = int(1)
        while k < WINDOW and wp.length(points[e, (i + k) % n] - pos) < dist:
            k += 1
        tangent = wp.normalize(points[e, (i + 1) % n] - points[e, i])
        f = pursuit(pos, wp.vec2(qvel[e, 0], qvel[e, 1]), points[e, (i + k) % n], tangent,
                    speed_target[e], FORCE_MAX)
        ctrl[e, 0] = f[0]
        ctrl[e, 1] = f[1]

    @wp.kernel
    def done_kernel(points: wp.array2d(dtype=wp.vec2), valid: wp.array(dtype=wp.uint8),
                    qpos: wp.array2d(dtype=float), nearest: wp.array(dtype=wp.int32),
                    progress: wp.array(dtype=wp.int32), age: wp.array(dtype=wp.int32),
                    mask: wp.array(dtype=wp.uint8), any_done: wp.array(dtype=wp.int32),
                    counters: wp.array(dtype=wp.int64), half_width: float, max_steps: int):
        """A world's episode after the physics: its nearest centerline point
        (searched from the last one), its progress in points, and whether it
        ended (a lap, off the track, an invalid track, the step limit); an
        ended world is marked in *mask*, counted, and sets *any_done*."""
        e = wp.tid()
        n = points.shape[1]
        pos = wp.vec2(qpos[e, 0], qpos[e, 1])
        last = nearest[e]
        best = last
        best_d = wp.length(points[e, last] - pos)
        for k in range(-2, WINDOW + 1):
            j = (last + k + n) % n
            dj = wp.length(points[e, j] - pos)
            if dj < best_d:
                best = j
                best_d = dj
        step = (best - last + n + n // 2) % n - n // 2  # wrapped to [-n/2, n/2)
        nearest[e] = best
        progress[e] = progress[e] + step
        age[e] = age[e] + 1
        off = wp.min(segment_distance(pos, points[e, (best + n - 1) % n], points[e, best]),
                     segment_distance(pos, points[e, best], points[e, (best + 1) % n]))
        cause = int(-1)
        if valid[e] == wp.uint8(0):
            cause = 3
        elif off > half_width:
            cause = 1
        elif progress[e] >= n:
            cause = 0
        elif age[e] >= max_steps:
            cause = 2
        if cause >= 0:
            mask[e] = wp.uint8(1)
            wp.atomic_add(counters, cause, wp.int64(1))
            any_done[0] = 1  # every writer writes 1
        else:
            mask[e] = wp.uint8(0)

    @wp.kernel
    def reset_kernel(mask: wp.array(dtype=wp.uint8), points: wp.array2d(dtype=wp.vec2),
                     seeds: wp.array(dtype=wp.uint64), epochs: wp.array(dtype=wp.uint32),
                     qpos: wp.array2d(dtype=float), qvel: wp.array2d(dtype=float),
                     qacc_warmstart: wp.array2d(dtype=float),
                     nearest: wp.array(dtype=wp.int32), progress: wp.array(dtype=wp.int32),
                     age: wp.array(dtype=wp.int32), speed_target: wp.array(dtype=float),
                     look: wp.array(dtype=float)):
        """A masked world's new episode, after tracks.run() gave it its next
        track: the puck at the track's first point, moving along it, and a
        driving style from the track's (seed, epoch).  Its height, vertical
        speed and their warm start stay those of the settled puck: one
        dropped at z = 0 took MuJoCo Warp's solver a second iteration in its
        third physics step, and the solver's loop runs as many iterations as
        its slowest world, so that with a world reset on most steps every
        world paid one more (H100: ~55 us a step, of the 4.9% the
        regeneration and reset then cost; doc/simulators.md)."""
        e = wp.tid()
        if mask[e] == wp.uint8(0):
            return
        p0 = points[e, 0]
        t = wp.normalize(points[e, 1] - p0)
        qpos[e, 0] = p0[0]
        qpos[e, 1] = p0[1]
        qvel[e, 0] = START_SPEED * t[0]
        qvel[e, 1] = START_SPEED * t[1]
        qacc_warmstart[e, 0] = 0.0
        qacc_warmstart[e, 1] = 0.0
        nearest[e] = 0
        progress[e] = 0
        age[e] = 0
        z = mix64(seeds[e] ^ (wp.uint64(epochs[e]) * GOLDEN) ^ STYLE_SALT)
        speed_target[e] = SPEED_MIN + (SPEED_MAX - SPEED_MIN) * unit(z >> wp.uint64(40))
        look[e] = LOOK_MIN + (LOOK_MAX - LOOK_MIN) * unit(z)


def parse_args(argv=None):
    p = simloop.loop_parser(__doc__, agents=False)
    p.add_argument("--worlds", dest="envs", type=int,
                   help="worlds, the same as --envs (default 4096)")
    # A world's step is about a millisecond: a refill of 512 spares, a block
    # each side by side, takes about the time of one of 64, and comes an
    # eighth as often (on the H100, one graph timed against one:
    # regeneration + reset 2.9% of a step, against 4.1% with 64).
    simloop.add_track_options(p, refill_batch=512)
    p.add_argument("--substeps", type=int, default=4,
                   help="physics steps per env step, one action each (default 4)")
    p.add_argument("--max-episode-steps", type=int, default=600,
                   help="env steps before an episode times out (default 600)")
    p.add_argument("--graphs", type=int, default=3,
                   help="graphs of each kind, each with its own worlds, timed and checked "
                        "(default 3)")
    p.add_argument("--rounds", type=int, default=10,
                   help="rounds in which the graphs take turns, a stretch of steps each "
                        "(default 10)")
    p.add_argument("--svg", default="tracks-mjwarp.svg", help="the SVG to write ('' for none)")
    return p.parse_args(argv)


class Race:
    """N worlds of MuJoCo Warp, their seed state and track producer, the
    episode's bookkeeping.  Its Warp work goes to Warp's current stream;
    TrackGen's calls name their stream (*stream*)."""

    def __init__(self, tg, twarp, mjw, model, mjmodel, args):
        self.tg, self.mjw, self.args, self.m = tg, mjw, args, model
        n, dev = args.envs, "cuda:0"
        self.n = n
        self.state = tg.seeds.SeedState(n, args.seed)
        self.tracks = tg.tracks.TrackProducer(self.state, **simloop.track_config(args))
        t = self.tracks
        self.points = twarp.array(t, "points", wp.vec2, (n, t.n_points))
        self.mask, self.valid, self.families = (twarp.array(t, name, wp.uint8, (n,))
                                                for name in ("mask", "valid", "families"))
        self.seeds = wp.array(ptr=self.state.seeds_ptr, dtype=wp.uint64, shape=(n,),
                              device=dev)
        self.epochs = wp.array(ptr=self.state.epochs_ptr, dtype=wp.uint32, shape=(n,),
                               device=dev)
        self.d = mjw.make_data(mjmodel, nworld=n)
        self.nearest, self.progress, self.age = (wp.zeros(n, dtype=wp.int32, device=dev)
                                                 for _ in range(3))
        self.speed_target = wp.zeros(n, dtype=float, device=dev)
        self.look = wp.zeros(n, dtype=float, device=dev)
        self.any_done = wp.zeros(1, dtype=wp.int32, device=dev)
        self.counters = wp.zeros(len(COUNTERS), dtype=wp.int64, device=dev)

    def physics(self):
        """The controller and the physics: what every step graph holds."""
        d = self.d
        wp.launch(control_kernel, self.n, inputs=[
            self.points, d.qpos, d.qvel, self.nearest, self.speed_target, self.look,
            d.ctrl, self.any_done])
        for _ in range(self.args.substeps):
            self.mjw.step(self.m, d)
        wp.launch(done_kernel, self.n, inputs=[
            self.points, self.valid, d.qpos, self.nearest, self.progress, self.age,
            self.mask, self.any_done, self.counters, 0.5 * self.tracks.width,
            self.args.max_episode_steps])

    def regenerate(self, stream, policy, condition=None):
        """The ended worlds' next tracks, then their resets."""
        self.tracks.run(stream, policy, condition)
        d = self.d
        wp.launch(reset_kernel, self.n, inputs=[
            self.mask, self.points, self.seeds, self.epochs, d.qpos, d.qvel,
            d.qacc_warmstart, self.nearest, self.progress, self.age, self.speed_target,
            self.look])

    def step(self, stream, regenerate=True):
        """One env step, recorded: *stream* is the capture's."""
        tx = self.tg.exec
        self.physics()
        if regenerate:
            on_demand = self.args.lookahead == 0
            self.regenerate(stream, tx.Policy.AUTO,
                            tx.conditional(self.any_done) if on_demand else None)

    def start(self, stream):
        """Every world's first track (epoch 1) and its puck at the start (with
        overlap, their spares too: a refill, due once the first call's totals
        are in).  Blocks."""
        self.regenerate(stream, self.tg.exec.Policy.EAGER)
        wp.synchronize_device()
        if self.args.overlap:
            self.tracks.poll()
            self.tracks.wait_refill()

    def poll(self):
        """After each step, with overlap: a refill beside the steps when due."""
        if self.args.overlap:
            self.tracks.poll()

    def run_host(self, n_steps, stream):
        """The loop driven from the host: each step's physics launched eagerly,
        the regeneration when the host read back that an episode ended."""
        policy = self.tg.exec.Policy.EAGER
        for _ in range(n_steps):
            self.physics()
            if self.any_done.numpy()[0]:  # the host decides: a readback
                self.regenerate(stream, policy)
            self.poll()
        wp.synchronize_device()

    def snapshot(self, torch):
        """What each world's run leaves, on the host."""
        seeds, epochs = self.state.read(wp.get_stream().cuda_stream)
        return {
            "seeds": seeds, "epochs": epochs,
            "qpos": self.d.qpos.numpy(), "qvel": self.d.qvel.numpy(),
            "points": torch.from_numpy(self.points.numpy().reshape(self.n, -1, 2)),
            "valid": self.valid.numpy(), "families": self.families.numpy(),
            "counters": dict(zip(COUNTERS, self.counters.numpy().tolist())),
        }

    def close(self):
        self.tracks.close()
        self.state.close()


def same_worlds(a, b):
    """How many worlds of snapshots *a* and *b* hold the same bits."""
    same = 0
    for e in range(len(a["seeds"])):
        same += (a["seeds"][e] == b["seeds"][e] and a["epochs"][e] == b["epochs"][e]
                 and all(np.array_equal(a[f][e:e + 1].view(np.uint8),
                                        b[f][e:e + 1].view(np.uint8))
                         for f in ("qpos", "qvel", "valid", "families"))
                 and np.array_equal(a["points"][e].numpy().view(np.uint8),
                                    b["points"][e].numpy().view(np.uint8)))
    return same


def report(name, n, seconds, n_steps, counters=None):
    rate = n * n_steps / seconds
    print("%-22s %12.0f env-steps/s  (%d steps in %.3f s)" % (name, rate, n_steps, seconds))
    if counters is not None:
        print("  episodes ended: %d (laps %d, off track %d, timeouts %d, invalid tracks %d)"
              % ((sum(counters.values()),) + tuple(counters[c] for c in COUNTERS)))
    return rate


def main(argv=None):
    args = parse_args(argv)
    error = simloop.loop_options_error(args) or simloop.track_options_error(args) or (
        min(args.substeps, args.max_episode_steps, args.graphs, args.rounds) < 1
        and "--substeps, --max-episode-steps, --graphs and --rounds must be positive")
    if error:
        print("race_mjwarp.py: " + error, file=sys.stderr)
        return 2
    try:
        import mujoco
        import mujoco_warp as mjw
    except ImportError:
        mujoco = None
    why = simloop.missing("race_mjwarp.py", warp=True) or (
        mujoco is None and "race_mjwarp.py: needs MuJoCo Warp (pip install "
        "track-gen[mujoco])")
    if why:
        print(why, file=sys.stderr)
        return SKIP
    import torch
    import track_gen as tg
    import track_gen.tracks  # noqa: F401
    from track_gen.interop import torch as tgt
    from track_gen.interop import warp as twarp

    print("race_mjwarp.py: %d worlds x %d steps (%d physics steps each) on %s, "
          "mujoco_warp %s, warp %s, torch %s, track_gen %s\n  %s"
          % (args.envs, args.steps, args.substeps, torch.cuda.get_device_name(),
             mjw.__version__ if hasattr(mjw, "__version__") else "?", wp.__version__,
             torch.__version__, tg.__version__, simloop.describe_tracks(args)))

    twarp.prepare(0)  # Warp set up outside any capture
    wp.load_module(sys.modules[__name__], device="cuda:0")
    mjmodel = mujoco.MjModel.from_xml_string(model_xml())
    model = mjw.put_model(mjmodel)
    ws = wp.get_stream("cuda:0")  # Warp's current stream: every eager call goes there

    def race():
        r = Race(tg, twarp, mjw, model, mjmodel, args)
        r.start(ws.cuda_stream)
        return r

    # The warm-up: one eager step compiles and loads every kernel (MuJoCo
    # Warp's take about a minute the first time), outside any capture.
    start = time.perf_counter()
    warm = race()
    warm.run_host(1, ws.cuda_stream)
    warm.close()
    print("warm-up (compiling MuJoCo Warp's kernels): %.1f s" % (time.perf_counter() - start))

    def timed(run):
        wp.synchronize_device()
        start = time.perf_counter()
        run()
        wp.synchronize_device()
        torch.cuda.synchronize()
        return time.perf_counter() - start

    # 1. A torch graph: tgt.graph() registers torch's capture with TrackGen
    # and with Warp (Warp's current stream is the capture's in the block).
    def torch_graph(regenerate):
        r = race()
        g = torch.cuda.CUDAGraph()
        with tgt.graph(g):
            r.step(torch.cuda.current_stream().cuda_stream, regenerate)
        return r, g.replay, g

    # 2. A Warp capture on Warp's stream: TrackGen's call names the stream.
    def warp_graph(regenerate):
        r = race()
        with wp.ScopedCapture(device="cuda:0", stream=ws, force_module_load=False) as cap:
            r.step(ws.cuda_stream, regenerate)
        # With overlap, launched on a stream of a greater priority than the
        # refills' (the device's least), so that the steps' blocks go first.
        steps_ws = wp.Stream("cuda:0", priority=-1) if args.overlap else ws
        return r, (lambda: wp.capture_launch(cap.graph, stream=steps_ws)), cap.graph

    # Each kind of graph is captured --graphs times, each instance with its
    # own worlds: identical graphs captured in one process run at different
    # speeds, each steadily (H100, the floor's: 1132 to 1186 us a step), so
    # that one instance against one would measure which was captured when;
    # each kind's speed is its instances' mean.  The instances take turns, a
    # stretch of steps each per round (--rounds): all timed on one clock, the
    # GPU's clock and temperature drifting over a run.  With overlap or a
    # heavy generator, the first torch graph's steps are timed too (events
    # after each, on a stream of a greater priority than the refills'), as
    # simloop.py's: a refill in the step graph stalls its step, one beside
    # should not; with overlap, its refills counted.
    kinds = (("in-graph (torch):", torch_graph, True), ("in-graph (Warp):", warp_graph, True),
             ("floor (torch, no regen):", torch_graph, False))
    n_rounds = min(args.rounds, args.steps)
    bounds = [args.steps * k // n_rounds for k in range(n_rounds + 1)]

    def instance(name, make, regenerate, first):
        r, replay, graph = make(regenerate)
        timing = first and (args.overlap or args.heavy > 0) and make is torch_graph
        return types.SimpleNamespace(
            name=name, r=r, replay=replay, graph=graph, seconds=[],
            steps=simloop.StepTimes(torch, args.steps if timing else 0),
            stream=torch.cuda.Stream(priority=-1) if timing else torch.cuda.current_stream(),
            before=r.tracks.refill_stats() if args.overlap else None)

    runs = [instance(name, make, regenerate, i == 0)
            for i in range(args.graphs) for name, make, regenerate in kinds]
    for k in range(n_rounds):
        for run in runs:
            def stretch():
                with torch.cuda.stream(run.stream):
                    for t in range(bounds[k], bounds[k + 1]):
                        run.replay()
                        run.steps.record(t, run.stream)
                        run.r.poll()

            run.seconds.append(timed(stretch))
    rates, snaps, seconds, rounds, times, refills = {}, {}, {}, {}, {}, {}
    for run in runs:
        first = run.name not in snaps
        run.steps.read(args.steps, bounds)
        if args.overlap:
            run.r.tracks.wait_refill()
            if first:
                refills[run.name] = (run.before, run.r.tracks.refill_stats())
        if first:
            times[run.name] = run.steps
        snaps.setdefault(run.name, []).append(run.r.snapshot(torch))
        seconds.setdefault(run.name, []).append(sum(run.seconds))
        rounds[run.name] = [a + b for a, b in zip(rounds.get(run.name, [0.0] * n_rounds),
                                                  run.seconds)]
        run.graph = run.replay = None  # the graph goes before its worlds
        run.r.close()
    for name, _, regenerate in kinds:
        s = seconds[name]
        rates[name] = report(name, args.envs, sum(s) / len(s), args.steps,
                             snaps[name][0]["counters"] if regenerate else None)
        if len(s) > 1:
            print("  %d graphs, each all %d steps: %.1f to %.1f us a step"
                  % (len(s), args.steps, min(s) * 1e6 / args.steps, max(s) * 1e6 / args.steps))

    host = race()
    host_s = timed(lambda: host.run_host(args.steps, ws.cuda_stream))
    driven = host.snapshot(torch)
    rate_host = report("host-driven:", host.n, host_s, args.steps, driven["counters"])
    host.close()

    graph_name, floor_name = kinds[0][0], kinds[2][0]
    identical = True
    for name, key in (("torch graph", graph_name), ("Warp graph", kinds[1][0])):
        same = min(same_worlds(snap, driven) for snap in snaps[key])
        ok = same == args.envs and all(snap["counters"] == driven["counters"]
                                       for snap in snaps[key])
        identical = identical and ok
        print("  %s: %d of %d worlds and the counters %s as the host-driven run%s"
              % (name, same, args.envs, "the same" if ok else "NOT the same",
                 " (each of its %d)" % args.graphs if args.graphs > 1 else ""))
    rate_graph, floor = rates[graph_name], rates[floor_name]
    print("  in-graph speed-up: %.2fx the host-driven loop (target >= 5x)"
          % (rate_graph / rate_host))
    per_round = sorted(f / g for f, g in zip(rounds[floor_name], rounds[graph_name]))
    graph_us, floor_us = (1e6 * args.envs / rate for rate in (rate_graph, floor))  # a step
    print("  regeneration + reset: %.1f%% of a step, %.1f us beside the floor's %.1f us "
          "(in-graph / floor %.3f; target <= 3%%); over %d rounds, in-graph / floor %.3f "
          "to %.3f, median %.3f"
          % (100.0 * (1.0 - rate_graph / floor), graph_us - floor_us, floor_us,
             rate_graph / floor, n_rounds, per_round[0], per_round[-1],
             per_round[len(per_round) // 2]))
    if args.overlap or args.heavy > 0:
        simloop.report_step_times(times[floor_name].quantile(0.5),
                                  times[floor_name].quantile(0.99), times[graph_name])
    if args.overlap:
        simloop.report_overlap(*refills[graph_name], times[floor_name].quantile(0.5),
                               seconds[floor_name][0], seconds[graph_name][0])
    n_same, n_shown = simloop.verify_standalone(torch, tg, snaps[graph_name][0],
                                                min(args.shown, args.envs), args.svg,
                                                simloop.shape_config(args))
    print("determinism: %d of %d worlds' tracks regenerated standalone from (seed, epoch, "
          "family) are bit-identical to the loop's" % (n_same, n_shown))
    if args.svg:
        print("wrote %s (%d tracks)" % (args.svg, n_shown))
    if not identical or n_same != n_shown:
        print("race_mjwarp.py: the runs differ: the loop is not deterministic",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
