# SPDX-License-Identifier: Apache-2.0
"""The Python main job, briefly: examples/simloop.py (a torch simulator
regenerating tracks inside one torch.cuda.graph), examples/simloop_dist.py
under torch.distributed, two processes on one GPU over gloo,
examples/simloop_warp.py (the same loop in Warp kernels, with lookahead and
on demand) and examples/race_mjwarp.py (the loop on MuJoCo Warp, in a torch
graph and a Warp capture); their determinism checks and counters.
Without torch or a GPU they skip.  race_mjwarp.py's model, controller and
episodes are also checked on Warp's CPU device wherever mujoco_warp is
installed (simloop_warp.py's kernels: test_warp_tracks).  Without a GPU,
the C loop examples/simloop is checked to say so and exit 77."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import tap
import tgtest
from track_gen import exec as tx
from track_gen import seeds

try:
    import numpy as np  # with warp
    import warp as wp
    wp.config.log_level = wp.LOG_WARNING  # no banner
except ImportError:
    wp = None
try:
    import mujoco
    import mujoco_warp as mjw
except ImportError:
    mjw = None

EXAMPLES = os.path.join(os.environ.get("abs_top_srcdir",
                                       os.path.join(os.path.dirname(__file__), "..", "..")),
                        "examples")
BUILT_EXAMPLES = os.path.join(os.environ.get("abs_top_builddir",
                                             os.path.join(os.path.dirname(__file__), "..",
                                                          "..")),
                              "examples")


def built_simloop():
    """The build tree's examples/simloop.  Under make check (which builds it)
    it must be there; an installed wheel tested from a checkout with no
    build (.ci/wheel-test on a GPU machine) has none: the C loop's tests
    skip there, saying why."""
    path = os.path.join(BUILT_EXAMPLES, "simloop")
    if not os.path.exists(path) and "abs_top_builddir" not in os.environ:
        raise unittest.SkipTest("no %s: the C example is built by make, not by the "
                                "wheel" % path)
    return path


def run(args, timeout=600):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable] + args, capture_output=True, text=True,
                          timeout=timeout, env=env)


class Examples(unittest.TestCase):
    def check_loop(self, r, svg):
        """What every simulator loop run of 256 envs prints and writes."""
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = r.stdout
        self.assertRegex(out, r"in-graph: +\d+ env-steps/s")
        self.assertRegex(out, r"floor: +\d+ env-steps/s")
        self.assertRegex(out, r"the loop runs at \d+\.\d\dx its speed")
        self.assertRegex(out, r"256 of 256 envs and the counters the same")
        self.assertRegex(out, r"determinism: (\d+) of \1 envs regenerated standalone")
        regen = int(re.search(r"tracks regenerated: (\d+)", out).group(1))
        skipped = int(re.search(r"skipped on the device after (\d+)", out).group(1))
        self.assertGreater(regen, 0)
        self.assertGreater(skipped, 0)
        with open(svg) as f:
            self.assertIn("<svg", f.read())

    def simloop(self, *extra):
        """simloop.py on 256 envs with *extra* options, its loop checked (what
        every loop run prints and writes); its output."""
        tgtest.require_gpu()
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            r = run([os.path.join(EXAMPLES, "simloop.py"), "--envs", "256", "--steps", "300",
                     "--curriculum", "100", "--crash-prob", "0.002", "--svg", svg]
                    + list(extra))
            self.check_loop(r, svg)
        return r.stdout

    def test_simloop(self):
        self.assertIn("lookahead: 2 spare tracks per env", self.simloop())

    def test_simloop_on_demand(self):
        self.assertIn("on demand", self.simloop("--lookahead", "0"))

    def test_simloop_overlap_heavy(self):
        # A heavy generator's refills beside the steps: the same checks, and
        # the overlap report (issue 36).
        out = self.simloop("--overlap", "--heavy", "300")
        self.assertIn("beside the steps; heavy generator", out)
        self.assertRegex(out, r"overlapped refill: [1-9]\d* refills")
        self.assertRegex(out, r"step times: floor median \d+\.\d\d us, p99 \d+\.\d\d us "
                              r"\(\d+\.\d\dx\); loop median")
        self.assertIn("heavy generator: all 300 relaxation iterations a track", out)
        ends, misses = map(int, re.search(r"ends: (\d+), of which (\d+) found",
                                          out).groups())
        self.assertGreater(ends, misses)

    def test_simloop_distributed(self):
        tgtest.require_gpu()
        r = run(["-m", "torch.distributed.run", "--nproc-per-node=2", "--master-port=29533",
                 os.path.join(EXAMPLES, "simloop_dist.py"), "--envs", "384", "--steps",
                 "200", "--backend", "gloo", "--check", "--no-compile"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("sharding determinism: 384/384 envs identical", r.stdout)
        self.assertEqual(sorted(re.findall(r"rank (\d) of 2 \(", r.stdout)), ["0", "1"])

    def run_simloop_warp(self, *args):
        """simloop_warp.py's run with *args*, checked as every loop's, with its
        floor: its output."""
        tgtest.require_gpu()
        if wp is None:
            self.skipTest("no warp (pip install warp-lang)")
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            r = run([os.path.join(EXAMPLES, "simloop_warp.py"), "--svg", svg] + list(args))
            self.check_loop(r, svg)
        self.assertRegex(r.stdout, r"host-driven: +\d+ env-steps/s")
        self.assertRegex(r.stdout, r"GPU time by events: [\d.]+ us a step in-graph, [\d.]+ us "
                                   r"its floor's: the regeneration's -?[\d.]+ us per step")
        return r.stdout

    def test_simloop_warp(self):
        out = self.run_simloop_warp("--short", "--no-compile")
        self.assertRegex(out, r"lookahead 2, refill batch 64, refill fused: an env used up "
                              r"its spares before a refill \d+ times, made its own track \d+ "
                              r"times")
        self.assertRegex(out, r"simloop.py: +\d+ env-steps/s")
        self.assertRegex(out, r"Warp loop / simloop.py in-graph: \d+\.\d\d")

    def test_simloop_warp_refill_conditional(self):
        """The refill by a Producer under conditional(refill): the same
        checks."""
        out = self.run_simloop_warp("--short", "--no-simloop", "--refill", "conditional")
        self.assertRegex(out, r"refill conditional: an env used up its spares")

    def test_simloop_warp_refill_always(self):
        """The refill launched at every step, no conditional node: the same
        checks (the host-driven run launches it only when due)."""
        out = self.run_simloop_warp("--short", "--no-simloop", "--refill", "always")
        self.assertRegex(out, r"refill always: an env used up its spares")

    def test_simloop_warp_refill_fused(self):
        """The refill made by the step's second kernel (no node of its own),
        with envs that make their own track: the same checks, and every env
        beside the loop on demand after every step.  About 3 ends a step:
        some steps due no refill (the loop's check that one is skipped), and
        envs that end again the step after, before their refill, so make
        their own track (on Warp's CPU with 128-point tracks, 256 envs and
        three seeds: 20 to 24 steps skipped, 11 to 16 own tracks; with a
        lap in 20 steps every step was due one)."""
        out = self.run_simloop_warp("--envs", "256", "--steps", "300", "--lap-steps", "200",
                                    "--crash-prob", "0.008", "--lookahead", "1",
                                    "--refill-batch", "16", "--refill", "fused",
                                    "--check-on-demand", "--no-simloop")
        m = re.search(r"refill fused: an env used up its spares before a refill \d+ times, "
                      r"made its own track (\d+) times", out)
        self.assertIsNotNone(m, out)
        own = int(m.group(1))
        self.assertGreater(own, 0)
        m = re.search(r"lookahead vs on-demand: 256 of 256 envs bit-identical after "
                      r"each of 300 steps \((\d+) and \1 episodes ended", out)
        self.assertIsNotNone(m, out)
        # Most ends took a spare a refill made: an env that found none made
        # its own track, the same one, so the tracks alone cannot tell.
        self.assertLess(own, int(m.group(1)) // 4, out)

    def test_simloop_warp_points(self):
        """The refills' tiled relaxation (a warp a slot) on the GPU at point
        counts the runs above (all 128) never take: 24, fewer than a warp's
        lanes (a partial warp's tile_max()), and 100, not a multiple of
        them; with the conditional refill and the fused one, every env
        beside the loop on demand after every step."""
        tgtest.require_gpu()
        for points, refill in (("24", "conditional"), ("100", "conditional"),
                               ("24", "fused"), ("100", "fused")):
            with self.subTest(points=points, refill=refill):
                out = self.run_simloop_warp("--envs", "256", "--steps", "200", "--points",
                                            points, "--lap-steps", "200", "--crash-prob",
                                            "0.005", "--refill-batch", "16", "--refill",
                                            refill, "--check-on-demand", "--no-simloop")
                m = re.search(r"lookahead vs on-demand: 256 of 256 envs bit-identical after "
                              r"each of 200 steps \((\d+) and \1 episodes ended", out)
                self.assertIsNotNone(m, out)
                self.assertGreater(int(m.group(1)), 100)  # refills every few steps

    def test_simloop_warp_on_demand(self):
        out = self.run_simloop_warp("--short", "--no-simloop", "--lookahead", "0")
        self.assertIn("on demand", out.splitlines()[0])

    def test_simloop_warp_lookahead_equals_on_demand(self):
        """A long run with lookahead beside the loop on demand, every env
        compared after every step, with envs that end twice before a refill:
        with the refill fused (the default) and under its condition."""
        for refill in ("fused", "conditional"):
            with self.subTest(refill=refill):
                out = self.run_simloop_warp("--envs", "256", "--steps", "1000", "--lap-steps",
                                            "200", "--crash-prob", "0.003", "--refill-batch",
                                            "16", "--refill", refill, "--check-on-demand",
                                            "--no-simloop")
                m = re.search(r"lookahead vs on-demand: 256 of 256 envs bit-identical after "
                              r"each of 1000 steps \((\d+) and \1 episodes ended; an env used "
                              r"up its spares (\d+) times\)", out)
                self.assertIsNotNone(m, out)
                self.assertGreater(int(m.group(1)), 1000)
                self.assertGreater(int(m.group(2)), 0)

    def test_race_mjwarp(self):
        tgtest.require_gpu()
        if wp is None or mjw is None:
            self.skipTest("no warp or mujoco_warp (pip install track-gen[mujoco])")
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            # Episodes of 20 steps at most: every world ends twice or more,
            # with the default lookahead (2), on demand (0), and a heavy
            # generator refilled beside the steps, 64 spent spares at a time
            # (the 64 worlds' first ends start one).  Two graphs of each
            # kind, each checked against the host-driven run.
            for options in (["--lookahead", "2"], ["--lookahead", "0"],
                            ["--overlap", "--heavy", "20", "--refill-batch", "64"]):
                r = run([os.path.join(EXAMPLES, "race_mjwarp.py"), "--worlds", "64",
                         "--steps", "50", "--max-episode-steps", "20", "--shown", "8",
                         "--graphs", "2", "--svg", svg] + options, timeout=900)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                out = r.stdout
                for name in (r"in-graph \(torch\)", r"in-graph \(Warp\)",
                             r"floor \(torch, no regen\)", "host-driven"):
                    self.assertRegex(out, name + r": +\d+ env-steps/s")
                for name in ("torch graph", "Warp graph"):
                    self.assertIn(name + ": 64 of 64 worlds and the counters the same as "
                                  "the host-driven run (each of its 2)", out)
                self.assertEqual(len(re.findall(r"2 graphs, each all 50 steps", out)), 3)
                self.assertRegex(out, r"determinism: 8 of 8 worlds' tracks regenerated")
                self.assertRegex(out, r"regeneration \+ reset: -?\d+\.\d% of a step")
                self.assertGreaterEqual(
                    int(re.search(r"episodes ended: (\d+)", out).group(1)), 128)
                if "--overlap" in options:
                    self.assertRegex(out, r"step times: floor median [\d.]+ us")
                    self.assertRegex(out, r"overlapped refill: [1-9]\d* refills")
                with open(svg) as f:
                    self.assertIn("<svg", f.read())

    def test_help_and_skip(self):
        try:
            import torch  # noqa: F401
            have = torch.cuda.is_available()
        except ImportError:
            have = False
        needs = {"simloop_warp.py": wp is None, "race_mjwarp.py": wp is None or mjw is None}
        for name in ("simloop.py", "simloop_warp.py", "race_mjwarp.py"):
            r = run([os.path.join(EXAMPLES, name), "--help"])
            self.assertEqual(r.returncode, 0, name)
            self.assertIn("--envs", r.stdout)
            if not have or needs.get(name, False):
                r = run([os.path.join(EXAMPLES, name)])
                self.assertEqual(r.returncode, 77, name + ": " + r.stderr)

    def test_python_loops_refuse_their_bad_options(self):
        """The Python loops check their options before anything touches a
        device (here without one too): status 2, naming the option; an SVG
        that could not be written is refused before the run, not after."""
        for name in ("simloop.py", "simloop_warp.py", "race_mjwarp.py", "simloop_dist.py"):
            for args, word in ((["--envs", "0"], "--envs"), (["--steps", "-1"], "--steps"),
                               (["--seed", "-1"], "--seed"), (["--seed", str(2 ** 64)], "--seed"),
                               (["--svg", "/nonexistent/dir/x.svg"], "--svg"),
                               (["--lookahead", "-1"], "--lookahead")):
                if name == "simloop_dist.py" and word in ("--svg", "--lookahead"):
                    continue  # it draws nothing, and takes simloop.py's track options
                with self.subTest(name=name, args=args):
                    r = run([os.path.join(EXAMPLES, name)] + args, timeout=120)
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    self.assertIn(word, r.stderr)
        r = run([os.path.join(EXAMPLES, "simloop.py"), "--lap-steps", "0"], timeout=120)
        self.assertEqual((r.returncode, "--lap-steps" in r.stderr), (2, True), r.stderr)
        r = run([os.path.join(EXAMPLES, "simloop_warp.py"), "--short", "--envs", "7"],
                timeout=120)
        self.assertEqual((r.returncode, "--short" in r.stderr), (2, True), r.stderr)

    def test_c_simloop_without_a_gpu(self):
        """The README's promise: without a GPU, examples/simloop says so and
        exits with status 77."""
        try:
            tx.device_check(0)
        except tx.TrackGenError:
            pass
        else:
            self.skipTest("a device runs TrackGen's kernels here: simloop would run")
        r = subprocess.run([built_simloop()], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("simloop: needs a CUDA GPU", r.stderr)

    def test_c_simloop(self):
        """examples/simloop, the C loop, in each of its modes on a GPU: its
        host-driven run and its standalone regeneration agree with the
        in-graph loop (a heavy generator's spares included, whose min_iters
        the standalone producer, on demand, must not take)."""
        tgtest.require_gpu()
        for extra in ([], ["--lookahead", "0"], ["--producer-call"],
                      ["--overlap", "--heavy", "50", "--step-times"]):
            # The heavy run long enough for envs to end and refills to run.
            steps = 2000 if "--heavy" in extra else 300
            with self.subTest(extra=extra), tempfile.TemporaryDirectory() as tmp:
                r = subprocess.run([built_simloop(), "--envs", "512",
                                    "--steps", str(steps), "-o", os.path.join(tmp, "t.svg")]
                                   + extra, capture_output=True, text=True, timeout=300)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("same epochs, tracks, agents and counters as the in-graph "
                              "loop: yes", r.stdout)
                self.assertIn("determinism: 16 of 16 envs regenerated", r.stdout)
                if "--heavy" in extra:
                    self.assertIn("all 50 relaxation iterations a track", r.stdout)
                    self.assertRegex(r.stdout, r"floor median [\d.]+ us, p99 [\d.]+ us")
                    # Every timed step (all but the first) in one class or
                    # the other, and refills ran beside some.
                    beside, alone = map(int, re.search(
                        r"steps a refill ran beside: (\d+), .*; steps with none: (\d+),",
                        r.stdout).groups())
                    self.assertEqual(beside + alone, steps - 1)
                    refills = int(re.search(r"overlapped refill: (\d+) refills",
                                            r.stdout).group(1))
                    self.assertGreater(refills, 1)
                    self.assertGreater(beside, 0)

    def test_c_simloop_refuses_its_bad_options(self):
        """examples/simloop's options checked before any device is touched:
        a refused combination exits with status 2, naming the options."""
        for args, names in ((["--fused", "--producer-call"], ("--fused", "--producer-call")),
                            (["--lookahead", "0", "--producer-call"], ("--producer-call",
                                                                       "--lookahead")),
                            (["--lookahead", "0", "--fused"], ("--fused", "--lookahead")),
                            (["--refill-batch", "0"], ("--refill-batch",)),
                            (["--refill-batch", "-5"], ("--refill-batch",)),
                            (["--heavy", "-1"], ("--heavy",)),
                            (["--envs", "0"], ("--envs",)), (["--steps", "0"], ("--steps",)),
                            (["--seed", "-1"], ("--seed",)),
                            (["--lookahead", "0", "--refill-batch", "8"], ("--refill-batch",)),
                            (["--output", "/nonexistent/dir/x.svg"], ("--output",)),
                            (["--devices", "2", "--output", "x.svg"], ("--output",)),
                            (["1000"], ("1000",))):
            with self.subTest(args=args):
                r = subprocess.run([built_simloop()] + args,
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                for name in names:
                    self.assertIn(name, r.stderr)


class RaceMjwarpCpu(unittest.TestCase):
    """race_mjwarp.py's model, controller, episodes and resets on Warp's CPU
    device, MuJoCo Warp included, with hand-made tracks: no GPU needed."""

    @classmethod
    def setUpClass(cls):
        if wp is None or mjw is None:
            raise unittest.SkipTest("no warp or mujoco_warp (pip install track-gen[mujoco])")
        if not wp.is_cpu_available():  # the GPU machine's staged Warp has no warp-clang
            raise unittest.SkipTest("Warp has no CPU backend here (warp-clang)")
        cls.rm = race_mjwarp
        cls.mjmodel = mujoco.MjModel.from_xml_string(race_mjwarp.model_xml())

    def test_model(self):
        m, rm = self.mjmodel, self.rm
        self.assertEqual((m.nq, m.nv, m.nu), (3, 3, 2))
        self.assertEqual(m.actuator_ctrlrange.tolist(), [[-rm.FORCE_MAX, rm.FORCE_MAX]] * 2)
        self.assertAlmostEqual(m.body_mass[1], rm.MASS)
        self.assertEqual(m.opt.timestep, rm.TIMESTEP)

    def test_pursuit_matches_numpy(self):
        rm = self.rm
        rng = np.random.default_rng(5)
        n = 256
        pos, vel, target = (rng.uniform(-30, 30, (n, 2)).astype(np.float32) for _ in range(3))
        vel[:8] *= np.float32(0.001)  # nearly still: the track's tangent is the heading
        tangent = rng.normal(size=(n, 2)).astype(np.float32)
        tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
        speed_target = rng.uniform(5, 30, n).astype(np.float32)
        arrays = [wp.array(a, dtype=wp.vec2, device="cpu") for a in (pos, vel, target, tangent)]
        out = wp.zeros(n, dtype=wp.vec2, device="cpu")
        wp.launch(pursuit_kernel, n, inputs=arrays + [
            wp.array(speed_target, dtype=wp.float32, device="cpu"), out], device="cpu")
        f32 = np.float32
        speed = np.sqrt(vel[:, 0] * vel[:, 0] + vel[:, 1] * vel[:, 1])
        heading = np.where((speed > f32(0.5))[:, None], vel / speed[:, None], tangent)
        d = target - pos
        dd = np.maximum(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1], f32(1e-6))
        curvature = f32(2) * (heading[:, 0] * d[:, 1] - heading[:, 1] * d[:, 0]) / dd
        lateral = speed * speed * curvature
        along = f32(2) * (speed_target - speed)
        normal = np.stack([-heading[:, 1], heading[:, 0]], axis=1)
        f = f32(rm.MASS) * (along[:, None] * heading + lateral[:, None] * normal) \
            + f32(rm.DRAG) * vel
        expect = np.clip(f, -rm.FORCE_MAX, rm.FORCE_MAX)
        np.testing.assert_array_equal(out.numpy(), expect)
        self.assertTrue((np.abs(expect) == rm.FORCE_MAX).any())  # some clamped

    def circles(self, radii, n_points=64):
        """Closed circular tracks of *radii* around the origin, as "points"."""
        a = np.arange(n_points) * (2 * np.pi / n_points)
        r = np.asarray(radii, dtype=np.float64)[:, None]
        return np.stack([r * np.cos(a), r * np.sin(a)], axis=-1).astype(np.float32)

    def test_episodes(self):
        """Four worlds, each episode ending its own way: a lap (a 20 m circle),
        off the track (the same, far too fast), the step limit (a 100 m
        circle), an invalid track (at the first step); reset to the track's
        start with a style from (seed, epoch) first."""
        rm, n = self.rm, 4
        with wp.ScopedDevice("cpu"):
            model, d = mjw.put_model(self.mjmodel), mjw.make_data(self.mjmodel, nworld=n)
            points = wp.array(self.circles([20, 20, 100, 20]), dtype=wp.vec2)
            valid = wp.array([1, 1, 1, 0], dtype=wp.uint8)
            mask = wp.ones(n, dtype=wp.uint8)
            seed_list = [seeds.env_seed(9, e) for e in range(n)]
            epochs = wp.array([1, 2, 3, 4], dtype=wp.uint32)
            nearest, progress, age = (wp.zeros(n, dtype=wp.int32) for _ in range(3))
            speed_target, look = wp.zeros(n, dtype=float), wp.zeros(n, dtype=float)
            any_done, counters = wp.zeros(1, dtype=wp.int32), wp.zeros(4, dtype=wp.int64)
            # A settled puck's state: the reset keeps its height, vertical
            # speed and their warm start, and zeroes the plane's warm start.
            settled = np.arange(1, 3 * n * 3 + 1, dtype=np.float32).reshape(3, n, 3) / 64
            for array, values in zip((d.qpos, d.qvel, d.qacc_warmstart), settled):
                array.assign(values)
            wp.launch(rm.reset_kernel, n, inputs=[
                mask, points, wp.array(seed_list, dtype=wp.uint64), epochs, d.qpos, d.qvel,
                d.qacc_warmstart, nearest, progress, age, speed_target, look])
            p = points.numpy()
            np.testing.assert_array_equal(d.qpos.numpy()[:, :2], p[:, 0])
            t = p[:, 1] - p[:, 0]
            t /= np.linalg.norm(t, axis=1, keepdims=True)
            np.testing.assert_allclose(d.qvel.numpy()[:, :2], rm.START_SPEED * t, rtol=1e-6)
            for array, values in zip((d.qpos, d.qvel, d.qacc_warmstart), settled):
                np.testing.assert_array_equal(array.numpy()[:, 2], values[:, 2])
            np.testing.assert_array_equal(d.qacc_warmstart.numpy()[:, :2], 0.0)
            for array in (d.qpos, d.qvel, d.qacc_warmstart):  # back on the ground
                values = array.numpy()
                values[:, 2] = 0.0
                array.assign(values)
            for e in range(n):
                z = seeds.mix64(seed_list[e] ^ ((e + 1) * rm.simloop.GOLDEN % (1 << 64))
                                ^ 0x5EED5EED)
                u = [float(bits & 0xFFFFFF) / (1 << 24) for bits in (z >> 40, z)]
                self.assertAlmostEqual(speed_target.numpy()[e], rm.SPEED_MIN + (
                    rm.SPEED_MAX - rm.SPEED_MIN) * u[0], places=4)
                self.assertAlmostEqual(look.numpy()[e], rm.LOOK_MIN + (
                    rm.LOOK_MAX - rm.LOOK_MIN) * u[1], places=5)
            speed_target.assign([20.0, 60.0, 20.0, 20.0])  # world 1: far too fast
            first = {}  # cause: the step of its first end
            for step in range(1, 101):
                wp.launch(rm.control_kernel, n, inputs=[
                    points, d.qpos, d.qvel, nearest, speed_target, look, d.ctrl, any_done])
                for _ in range(4):
                    mjw.step(model, d)
                wp.launch(rm.done_kernel, n, inputs=[
                    points, valid, d.qpos, nearest, progress, age, mask, any_done, counters,
                    6.0, 100])
                self.assertEqual(bool(any_done.numpy()[0]), bool(mask.numpy().any()), step)
                for cause in np.flatnonzero(counters.numpy()):
                    first.setdefault(rm.COUNTERS[cause], step)
        # No resets here: an ended world goes on ending, by the same cause.
        self.assertEqual(first["invalid"], 1)
        self.assertLess(first["off_track"], first["laps"])
        self.assertLess(first["laps"], 100)
        self.assertEqual(first["timeouts"], 100)
        self.assertEqual(mask.numpy().tolist(), [1, 1, 1, 1])


if wp is not None and mjw is not None:
    sys.path.insert(0, EXAMPLES)
    import race_mjwarp

    @wp.kernel
    def pursuit_kernel(pos: wp.array(dtype=wp.vec2), vel: wp.array(dtype=wp.vec2),
                       target: wp.array(dtype=wp.vec2), tangent: wp.array(dtype=wp.vec2),
                       speed_target: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.vec2)):
        """race_mjwarp.pursuit() for each input."""
        i = wp.tid()
        out[i] = race_mjwarp.pursuit(pos[i], vel[i], target[i], tangent[i], speed_target[i],
                                     40.0)


if __name__ == "__main__":
    sys.exit(tap.main())
