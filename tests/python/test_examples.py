"""The Python main job, briefly: examples/simloop.py (a torch simulator
regenerating tracks inside one torch.cuda.graph), examples/simloop_dist.py
under torch.distributed, two processes on one GPU over gloo,
examples/simloop_warp.py (the same loop in Warp kernels, with lookahead and
on demand) and examples/race_mjwarp.py (the loop on MuJoCo Warp, in a torch
graph and a Warp capture); their determinism checks and counters.
Without torch or a GPU they skip.  simloop_warp.py's kernels are also
checked against numpy on Warp's CPU device, wherever warp is installed, and
its loop with lookahead against its loop on demand there, kernel by kernel;
race_mjwarp.py's model, controller and episodes on it wherever mujoco_warp
is too."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import unittest

import tap
import tgtest
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

    def test_simloop(self):
        tgtest.require_gpu()
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            r = run([os.path.join(EXAMPLES, "simloop.py"), "--envs", "256", "--steps", "300",
                     "--curriculum", "100", "--crash-prob", "0.002", "--svg", svg])
            self.check_loop(r, svg)
            self.assertIn("lookahead: 2 spare tracks per env", r.stdout)

    def test_simloop_on_demand(self):
        tgtest.require_gpu()
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            r = run([os.path.join(EXAMPLES, "simloop.py"), "--envs", "256", "--steps", "300",
                     "--curriculum", "100", "--crash-prob", "0.002", "--svg", svg,
                     "--lookahead", "0"])
            self.check_loop(r, svg)
            self.assertIn("on demand", r.stdout)

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
        self.assertRegex(out, r"lookahead 2, refill batch 64, refill conditional: an env "
                              r"used up its spares before a refill \d+ times")
        self.assertRegex(out, r"simloop.py: +\d+ env-steps/s")
        self.assertRegex(out, r"Warp loop / simloop.py in-graph: \d+\.\d\d")

    def test_simloop_warp_on_demand(self):
        out = self.run_simloop_warp("--short", "--no-simloop", "--lookahead", "0")
        self.assertIn("on demand", out.splitlines()[0])

    def test_simloop_warp_lookahead_equals_on_demand(self):
        """A long run with lookahead beside the loop on demand, every env
        compared after every step, with envs that end twice before a refill."""
        out = self.run_simloop_warp("--envs", "256", "--steps", "1000", "--lap-steps", "200",
                                    "--crash-prob", "0.003", "--refill-batch", "16",
                                    "--check-on-demand", "--no-simloop")
        m = re.search(r"lookahead vs on-demand: 256 of 256 envs bit-identical after each of "
                      r"1000 steps \((\d+) and \1 episodes ended; an env used up its spares "
                      r"(\d+) times\)", out)
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
            # with the default lookahead (2) and on demand (0).
            for lookahead in ("2", "0"):
                r = run([os.path.join(EXAMPLES, "race_mjwarp.py"), "--worlds", "64",
                         "--steps", "50", "--max-episode-steps", "20", "--lookahead",
                         lookahead, "--shown", "8", "--svg", svg], timeout=900)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                out = r.stdout
                for name in (r"in-graph \(torch\)", r"in-graph \(Warp\)",
                             r"floor \(torch, no regen\)", "host-driven"):
                    self.assertRegex(out, name + r": +\d+ env-steps/s")
                for name in ("torch graph", "Warp graph"):
                    self.assertIn(name + ": 64 of 64 worlds and the counters the same", out)
                self.assertRegex(out, r"determinism: 8 of 8 worlds' tracks regenerated")
                self.assertRegex(out, r"regeneration \+ reset: -?\d+\.\d% of a step")
                self.assertGreaterEqual(
                    int(re.search(r"episodes ended: (\d+)", out).group(1)), 128)
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


def warp_examples():
    """The modules simloop_warp and warp_tracks, for their kernels on Warp's
    CPU device, or a skip saying why they cannot run."""
    if wp is None:
        raise unittest.SkipTest("no warp (pip install warp-lang)")
    if not wp.is_cpu_available():  # the GPU machine's staged Warp has no warp-clang
        raise unittest.SkipTest("Warp has no CPU backend here (warp-clang)")
    sys.path.insert(0, EXAMPLES)
    import simloop_warp
    import warp_tracks
    return simloop_warp, warp_tracks


class SimloopWarpKernels(unittest.TestCase):
    """simloop_warp.py's kernels on Warp's CPU device against numpy (float32,
    in the kernels' order of operations): no GPU needed."""

    @classmethod
    def setUpClass(cls):
        cls.sw, cls.wt = warp_examples()
        cls.n, cls.n_points, cls.n_control = 64, 32, 6
        cls.keys = [seeds.effective_seed(seeds.env_seed(7, e), e % 3 + 1) for e in range(cls.n)]
        cls.salts = [seeds.env_seed(0xA6E7, e) for e in range(cls.n)]

    def array(self, values, dtype):
        return wp.array(values, dtype=dtype, device="cpu")

    def unit(self, z, high):
        """A hash's top or low 24 bits as float32 in [0, 1)."""
        bits = z >> 40 if high else z & 0xFFFFFF
        return np.float32(bits) * np.float32(1.0 / (1 << 24))

    def test_start_and_step(self):
        sw, n = self.sw, self.n
        keys, salt = self.array(self.keys, wp.uint64), self.array(self.salts, wp.uint64)
        progress = wp.zeros(n, dtype=wp.float32, device="cpu")
        lap = np.float32(32.0)
        wp.launch(sw.start_kernel, n, inputs=[keys, salt, progress, lap], device="cpu")
        start = np.array([lap * (np.float32(1.0) - self.unit(seeds.mix64(k ^ s), True))
                          for k, s in zip(self.keys, self.salts)], dtype=np.float32)
        np.testing.assert_array_equal(progress.numpy(), start)

        valid_in = np.array([e % 11 != 0 for e in range(n)], dtype=np.uint8)
        step, speed, crash = 5, np.float32(4.0), np.float32(0.2)
        arrays = [keys, salt, self.array([step], wp.int64), self.array(valid_in, wp.uint8),
                  progress, wp.zeros(n, dtype=wp.uint8, device="cpu"),
                  wp.zeros(1, dtype=wp.int32, device="cpu"),
                  wp.zeros(5, dtype=wp.int64, device="cpu")]
        wp.launch(sw.step_kernel, n, inputs=arrays + [speed, crash, lap], device="cpu")
        salt_step = (step * sw.simloop.GOLDEN) % (1 << 64)
        counts = [0, 0, 0]
        for e in range(n):
            z = seeds.mix64(self.keys[e] ^ self.salts[e] ^ salt_step)
            moved = start[e] + speed * (np.float32(0.5) + self.unit(z, True))
            crashed = self.unit(z, False) < crash
            done = not valid_in[e] or crashed or moved >= lap
            if done:
                counts[2 if not valid_in[e] else 1 if crashed else 0] += 1
            self.assertEqual(arrays[4].numpy()[e], 0.0 if done else moved, e)
            self.assertEqual(arrays[5].numpy()[e], int(done), e)
        self.assertEqual(arrays[7].numpy().tolist(), counts + [0, 0])
        self.assertEqual(int(arrays[6].numpy()[0]), sum(counts))
        self.assertTrue(all(counts), counts)  # each cause seen

        any_done, step_no = wp.zeros(1, dtype=wp.int32, device="cpu"), arrays[2]
        for done, expect in ((sum(counts), [1, 1, 0]), (0, [0, 1, 1])):
            arrays[6].assign([done])
            wp.launch(sw.tally_kernel, 1, inputs=[arrays[6], any_done, arrays[7], step_no],
                      device="cpu")
            self.assertEqual([int(any_done.numpy()[0])] + arrays[7].numpy()[3:].tolist(),
                             expect)
            self.assertEqual(int(arrays[6].numpy()[0]), 0)
        self.assertEqual(int(step_no.numpy()[0]), step + 2)

    def controls(self, key):
        """The control points of a track, (radius, angle) as float32."""
        sw, wt, k_n = self.sw, self.wt, self.n_control
        out = []
        for k in range(k_n + 1):
            z = seeds.mix64(key ^ (((k % k_n + 1) * sw.simloop.GOLDEN) % (1 << 64)))
            one, two = np.float32(1.0), np.float32(2.0)
            r = np.float32(wt.RADIUS) * (one + np.float32(wt.R_JITTER)
                                         * (two * self.unit(z, True) - one))
            a = (np.float32(k) + np.float32(wt.A_JITTER) * (self.unit(z, False)
                                                            - np.float32(0.5))) \
                * (two * np.float32(np.pi) / np.float32(k_n))
            out.append((r, a))
        return out

    def sharp(self, p, min_cos):
        """Per point of every track, whether its turn is sharper than
        acos(min_cos)."""
        a, b, c = np.roll(p, 1, axis=1), p, np.roll(p, -1, axis=1)
        u, v = b - a, c - b
        return (u[..., 0] * v[..., 0] + u[..., 1] * v[..., 1]) < min_cos * np.sqrt(
            (u[..., 0] * u[..., 0] + u[..., 1] * u[..., 1])
            * (v[..., 0] * v[..., 0] + v[..., 1] * v[..., 1]))

    def test_generate_relax_measure(self):
        wt, n, n_pts = self.wt, self.n, self.n_points
        mask_in = np.array([e % 5 != 0 for e in range(n)], dtype=np.uint8)
        masked = mask_in == 1
        keys, mask = self.array(self.keys, wp.uint64), self.array(mask_in, wp.uint8)
        points = wp.zeros((n, n_pts), dtype=wp.vec2, device="cpu")
        relaxed = wp.zeros((n, n_pts), dtype=wp.vec2, device="cpu")
        go = wp.zeros(1, dtype=wp.int32, device="cpu")
        wp.launch(wt.generate_kernel, (n, n_pts), inputs=[
            keys, mask, points, go, self.n_control, wt.RADIUS, wt.R_JITTER, wt.A_JITTER],
            device="cpu")
        got = points.numpy().copy()  # numpy() of a CPU array is a view
        self.assertFalse(got[~masked].any())  # untouched
        for e in np.flatnonzero(masked):
            c = self.controls(self.keys[e])
            for i in range(n_pts):
                k = i * self.n_control // n_pts
                f = np.float32(i * self.n_control - k * n_pts) / np.float32(n_pts)
                r = c[k][0] + (c[k + 1][0] - c[k][0]) * f
                a = c[k][1] + (c[k + 1][1] - c[k][1]) * f
                # cos and sin may differ from numpy's in the last bit
                np.testing.assert_allclose(got[e, i], [r * np.cos(a), r * np.sin(a)],
                                           rtol=1e-5, atol=1e-4)
        self.assertEqual(int(go.numpy()[0]), 1)

        # The relaxation from the kernels' own points, step by step: the
        # loop's flag says whether a masked track is still sharp.
        ref, min_cos = got.copy(), np.float32(wt.MIN_COS)
        for steps in range(1, 40):
            for kernel in (wt.relax_kernel, wt.settle_kernel):
                wp.launch(kernel, (n, n_pts), inputs=[mask, points, relaxed, go, wt.MIN_COS],
                          device="cpu")
            mid = np.float32(0.5) * (np.roll(ref, 1, axis=1) + np.roll(ref, -1, axis=1))
            move = self.sharp(ref, min_cos) & masked[:, None]
            ref = np.where(move[..., None], mid, ref)
            np.testing.assert_array_equal(points.numpy(), ref)
            still = self.sharp(ref, min_cos).any(axis=1) & masked
            self.assertEqual(int(go.numpy()[0]), int(still.any()), steps)
            if not still.any():
                break
        self.assertGreater(steps, 2)

        valid = wp.zeros(n, dtype=wp.uint8, device="cpu")
        lengths = wp.zeros(n, dtype=wp.float32, device="cpu")
        for stop in (steps - 2, 0):  # some tracks still sharp, then none
            if stop:
                points.assign(got)
                for _ in range(stop):
                    for kernel in (wt.relax_kernel, wt.settle_kernel):
                        wp.launch(kernel, (n, n_pts),
                                  inputs=[mask, points, relaxed, go, wt.MIN_COS],
                                  device="cpu")
            else:
                points.assign(ref)
            wp.launch(wt.measure_kernel, n,
                      inputs=[mask, points, valid, lengths, wt.MIN_COS], device="cpu")
            p = points.numpy()
            seg = np.roll(p, -1, axis=1) - p
            d = np.sqrt(seg[..., 0] * seg[..., 0] + seg[..., 1] * seg[..., 1])
            total = np.zeros(n, dtype=np.float32)
            for i in range(n_pts):  # the kernel's order
                total += d[:, i]
            np.testing.assert_array_equal(lengths.numpy()[masked], total[masked])
            smooth = ~self.sharp(p, min_cos).any(axis=1) & masked
            self.assertEqual(valid.numpy().astype(bool).tolist(), smooth.tolist(), stop)
            self.assertEqual(smooth[masked].all(), stop == 0, stop)


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
            wp.launch(rm.reset_kernel, n, inputs=[
                mask, points, wp.array(seed_list, dtype=wp.uint64), epochs, d.qpos, d.qvel,
                d.qacc_warmstart, nearest, progress, age, speed_target, look])
            p = points.numpy()
            np.testing.assert_array_equal(d.qpos.numpy()[:, :2], p[:, 0])
            t = p[:, 1] - p[:, 0]
            t /= np.linalg.norm(t, axis=1, keepdims=True)
            np.testing.assert_allclose(d.qvel.numpy()[:, :2], rm.START_SPEED * t, rtol=1e-6)
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


def on_demand(wt, keys, mask, points, relaxed, valid, lengths, go, n_control, max_iters):
    """Regen's generate, relax and measure stages on the CPU, for the envs
    in *mask*: the loop stage's WHILE as the host's loop, at most
    *max_iters* bodies while the flag is set."""
    dims = points.shape
    wp.launch(wt.generate_kernel, dims, inputs=[
        keys, mask, points, go, n_control, wt.RADIUS, wt.R_JITTER, wt.A_JITTER], device="cpu")
    it = 0
    while go.numpy()[0] and it < max_iters:
        for kernel in (wt.relax_kernel, wt.settle_kernel):
            wp.launch(kernel, dims, inputs=[mask, points, relaxed, go, wt.MIN_COS],
                      device="cpu")
        it += 1
    wp.launch(wt.measure_kernel, dims[0], inputs=[mask, points, valid, lengths, wt.MIN_COS],
              device="cpu")


class CpuLoop:
    """simloop_warp.py's loop on Warp's CPU device, kernel by kernel, with
    its producers' stages run by the host when the step's flag says so (a
    Producer needs a GPU): on demand (*lookahead* 0: its SeedState's
    advance and keys done here with track_gen.seeds), or with lookahead."""

    # simloop_warp.py's options: about 10% of the tracks still sharp after 6
    # relaxation steps, a lap in about 12 steps, crashes likely.
    N_POINTS, N_CONTROL, MAX_ITERS = 24, 6, 6
    ARGS = dict(points=N_POINTS, control=N_CONTROL, max_iters=MAX_ITERS, lap_steps=12.0,
                crash_prob=0.02)

    def __init__(self, sw, wt, env_seeds, lookahead, batch, always=False):
        self.sw, self.wt, self.slots = sw, wt, lookahead
        self.args = argparse.Namespace(**self.ARGS, refill_batch=batch)
        self.always = always  # the refill launched at every step, gated by its flag
        n, p = self.n, self.p = len(env_seeds), self.N_POINTS
        self.env_seeds = env_seeds

        def zeros(shape, dtype):
            return wp.zeros(shape, dtype=dtype, device="cpu")

        self.seeds = wp.array(env_seeds, dtype=wp.uint64, device="cpu")
        self.epochs, self.keys = zeros(n, wp.uint32), zeros(n, wp.uint64)
        self.mask, self.valid = zeros(n, wp.uint8), zeros(n, wp.uint8)
        self.points, self.relaxed = zeros((n, p), wp.vec2), zeros((n, p), wp.vec2)
        self.lengths, self.progress = zeros(n, wp.float32), zeros(n, wp.float32)
        self.go, self.n_done, self.any_done = (zeros(1, wp.int32) for _ in range(3))
        self.step_no, self.counters = zeros(1, wp.int64), zeros(5, wp.int64)
        self.salt = wp.array([seeds.env_seed(0xA6E7, e) for e in range(n)], dtype=wp.uint64,
                             device="cpu")
        if lookahead:
            rows = n * lookahead
            self.head, self.ready, self.fill = (zeros(k, wp.int32) for k in (n, n, rows))
            self.spare_points = zeros((rows, p), wp.vec2)
            self.spare_relaxed = zeros((rows, p), wp.vec2)
            self.spare_valid, self.spare_lengths = zeros(rows, wp.uint8), zeros(rows, wp.float32)
            self.counts, self.refill = zeros(3, wp.int32), zeros(1, wp.int32)
        self.mask.fill_(1)  # the reset: every env at epoch 1, its first track
        self.regenerate()
        if lookahead:
            self.refill.fill_(1)
            self.refill_spares()
        wp.launch(sw.start_kernel, n, inputs=[self.keys, self.salt, self.progress,
                                              float(self.N_POINTS)], device="cpu")
        self.counters.zero_()

    def regenerate(self):
        """Regen(advance=True)'s run."""
        epochs = self.epochs.numpy() + self.mask.numpy().astype(np.uint32)
        self.epochs.assign(epochs)
        self.keys.assign([seeds.effective_seed(s, int(e))
                          for s, e in zip(self.env_seeds, epochs)])
        on_demand(self.wt, self.keys, self.mask, self.points, self.relaxed, self.valid,
                  self.lengths, self.go, self.N_CONTROL, self.MAX_ITERS)

    def array(self, name):
        return getattr(self, name)

    def refill_spares(self):
        """Lookahead's refill: its stages' launches."""
        for stage in self.wt.REFILL_USES:
            kernel, dim, inputs = self.wt.refill_launch(stage, self.array, self.slots,
                                                        self.args)
            wp.launch(kernel, dim, inputs=inputs, device="cpu")

    def step(self):
        """Sim.step()'s launches, then the regeneration when the step's flag
        is set (or at every step: --refill always)."""
        for kernel, dim, inputs in self.sw.step_launches(self.array, self.n, self.slots,
                                                          self.args):
            wp.launch(kernel, dim, inputs=inputs, device="cpu")
        if not self.slots:
            if self.any_done.numpy()[0]:
                self.regenerate()
        elif self.always or self.refill.numpy()[0]:
            self.refill_spares()

    def state(self):
        """Every env's epoch, key, agent and track, and the episodes' ends."""
        return {name: getattr(self, name).numpy().copy() for name in (
            "epochs", "keys", "progress", "mask", "points", "valid", "lengths")}


class LookaheadKernels(unittest.TestCase):
    """simloop_warp.py's switch and refill kernels (warp_tracks.py's
    lookahead) on Warp's CPU device: against numpy, and a whole loop with
    lookahead against the loop on demand, every env after every step."""

    @classmethod
    def setUpClass(cls):
        cls.sw, cls.wt = warp_examples()

    def test_switch_and_refill(self):
        sw, wt, n, slots, p = self.sw, self.wt, 24, 3, CpuLoop.N_POINTS
        rng = np.random.default_rng(5)
        env_seeds = [seeds.env_seed(3, e) for e in range(n)]
        epochs = rng.integers(1, 1000, n).astype(np.uint32)
        epochs[1] = 0xFFFFFFFF  # its next epoch wraps to 0, as the SeedState's does
        head = rng.integers(0, slots, n).astype(np.int32)
        ready = rng.integers(1, slots + 1, n).astype(np.int32)  # one spare at least
        ready[[0, 1]] = 1  # ends with its last spare
        rows = n * slots
        spare_points = rng.normal(size=(rows, p, 2)).astype(np.float32)
        spare_valid = rng.integers(0, 2, rows).astype(np.uint8)
        spare_lengths = rng.normal(size=rows).astype(np.float32)
        ended = np.arange(n) % 3 != 2  # an invalid track ends at once; the rest go on
        points = rng.normal(size=(n, p, 2)).astype(np.float32)
        counts = np.array([5, 0, 7], dtype=np.int32)
        a = {name: wp.array(v, dtype=t, device="cpu") for name, v, t in (
            ("keys", np.zeros(n, np.uint64), wp.uint64), ("salt", np.zeros(n, np.uint64),
                                                            wp.uint64),
            ("step_no", [9], wp.int64), ("valid", (~ended).astype(np.uint8), wp.uint8),
            ("progress", np.zeros(n, np.float32), wp.float32),
            ("mask", np.zeros(n, np.uint8), wp.uint8), ("counters", np.zeros(5), wp.int64),
            ("seeds", env_seeds, wp.uint64), ("epochs", epochs, wp.uint32),
            ("lengths", np.zeros(n, np.float32), wp.float32), ("head", head, wp.int32),
            ("ready", ready, wp.int32), ("spare_valid", spare_valid, wp.uint8),
            ("spare_lengths", spare_lengths, wp.float32), ("counts", counts, wp.int32),
            ("spare_points", spare_points, wp.vec2), ("points", points, wp.vec2),
            ("refill", [0], wp.int32), ("fill", np.zeros(rows), wp.int32),
            ("spare_relaxed", np.zeros((rows, p, 2)), wp.vec2))}
        # No lap in sight, no crash: the envs with an invalid track end.
        args = argparse.Namespace(**dict(CpuLoop.ARGS, lap_steps=1e9, crash_prob=0.0),
                                  refill_batch=1000)

        def launch(launches):
            for kernel, dim, inputs in launches:
                wp.launch(kernel, dim, inputs=inputs, device="cpu")

        launch(sw.step_launches(a.__getitem__, n, slots, args))

        # numpy: an ended env's next spare becomes its track, its epoch one more
        src = np.arange(n) * slots + head
        new_epochs = np.where(ended, epochs + np.uint32(1), epochs)  # wraps
        left = np.where(ended, ready - 1, ready)
        self.assertEqual(a["epochs"].numpy().tolist(), new_epochs.tolist())
        self.assertEqual(a["mask"].numpy().tolist(), ended.astype(int).tolist())
        self.assertEqual(a["head"].numpy().tolist(),
                         np.where(ended, (head + 1) % slots, head).tolist())
        self.assertEqual(a["ready"].numpy().tolist(), left.tolist())
        self.assertEqual(new_epochs[1], 0)
        for e in np.flatnonzero(ended):
            self.assertEqual(int(a["keys"].numpy()[e]),
                             seeds.effective_seed(env_seeds[e], int(new_epochs[e])), e)
        np.testing.assert_array_equal(a["valid"].numpy(),
                                      np.where(ended, spare_valid[src], 1))
        np.testing.assert_array_equal(a["lengths"].numpy(),
                                      np.where(ended, spare_lengths[src], 0))
        np.testing.assert_array_equal(a["points"].numpy(),
                                      np.where(ended[:, None, None], spare_points[src], points))
        drained = int((left == 0).sum())
        self.assertGreater(drained, 1)
        self.assertEqual(a["counts"].numpy().tolist(),
                         [5 + int(ended.sum()), drained, 7 + drained])
        self.assertEqual(int(a["refill"].numpy()[0]), 1)  # an env has no spare left
        self.assertEqual(a["counters"].numpy().tolist(), [0, 0, int(ended.sum()), 1, 0])
        self.assertEqual(int(a["step_no"].numpy()[0]), 10)
        for spent, drained_now, batch, due in ((9, 0, 10, 0), (10, 0, 10, 1), (0, 1, 99, 1)):
            a["counts"].assign([spent, drained_now, 0])
            args.refill_batch = batch
            launch(sw.step_launches(a.__getitem__, n, slots, args)[1:])  # the switch kernel
            self.assertEqual(int(a["refill"].numpy()[0]), due, (spent, drained_now, batch))

        # The refill: every empty slot (after its env's ready spares) gets the
        # track of its epoch + d, d its place; the kept slots stay as they were.
        a["counts"].assign([40, 3, 9])
        before = {k: a[k].numpy().copy() for k in (
            "fill", "ready", "counts", "spare_points", "spare_valid", "spare_lengths")}
        for due in (0, 1):  # not due: the kernels return at once
            a["refill"].assign([due])
            launch(wt.refill_launch(stage, a.__getitem__, slots, args)
                   for stage in wt.REFILL_USES)
            if not due:
                for k, value in before.items():
                    self.assertTrue(a[k].numpy().tobytes() == value.tobytes(), k)
        kept_points, kept_valid = before["spare_points"], before["spare_valid"]
        new_head = a["head"].numpy()
        place = (np.arange(rows) % slots - np.repeat(new_head, slots)) % slots
        fill = np.where(place >= np.repeat(left, slots), place + 1, 0)
        self.assertEqual(a["fill"].numpy().tolist(), fill.tolist())
        self.assertEqual(a["ready"].numpy().tolist(), [slots] * n)
        self.assertEqual(a["counts"].numpy().tolist(), [0, 0, 9])
        kept = fill == 0
        self.assertTrue(kept.any() and not kept.all())
        np.testing.assert_array_equal(a["spare_points"].numpy()[kept], kept_points[kept])
        np.testing.assert_array_equal(a["spare_valid"].numpy()[kept], kept_valid[kept])

        filled = np.flatnonzero(~kept)
        env = filled // slots
        keys = [seeds.effective_seed(env_seeds[e], (int(new_epochs[e]) + int(fill[r]))
                                     % (1 << 32)) for r, e in zip(filled, env)]
        m = len(filled)
        ref = {"points": wp.zeros((m, p), dtype=wp.vec2, device="cpu"),
               "valid": wp.zeros(m, dtype=wp.uint8, device="cpu"),
               "lengths": wp.zeros(m, dtype=wp.float32, device="cpu")}
        on_demand(wt, wp.array(keys, dtype=wp.uint64, device="cpu"),
                  wp.ones(m, dtype=wp.uint8, device="cpu"), ref["points"],
                  wp.zeros((m, p), dtype=wp.vec2, device="cpu"), ref["valid"],
                  ref["lengths"], wp.zeros(1, dtype=wp.int32, device="cpu"),
                  CpuLoop.N_CONTROL, CpuLoop.MAX_ITERS)
        for name in ("points", "valid", "lengths"):  # bit for bit
            got = a["spare_" + name].numpy()[filled]
            self.assertTrue(got.tobytes() == ref[name].numpy().tobytes(), name)

    def test_lookahead_equals_on_demand(self):
        """Every env's epoch, key, agent and track after every step of a long
        run are those of the loop on demand, with envs that end twice (or L
        times) before a refill, for several ring sizes and batches."""
        env_seeds = [seeds.env_seed(21, e) for e in range(32)]
        demand = CpuLoop(self.sw, self.wt, env_seeds, 0, 1)
        runs = [(CpuLoop(self.sw, self.wt, env_seeds, slots, batch, always), slots, batch)
                for slots, batch, always in ((2, 16, False), (1, 4, False), (3, 1000, False),
                                             (2, 16, True))]
        for step in range(150):
            demand.step()
            want = demand.state()
            for loop, slots, batch in runs:
                loop.step()
                for name, value in loop.state().items():
                    self.assertTrue(value.tobytes() == want[name].tobytes(),
                                    "%s after step %d, lookahead %d" % (name, step, slots))
        ends = demand.counters.numpy()[:3]
        self.assertGreater(int(ends.sum()), 200)
        self.assertTrue(ends[2] > 0, ends)  # invalid tracks seen
        for loop, slots, batch in runs:
            self.assertEqual(loop.counters.numpy()[:3].tolist(), ends.tolist())
            refills = int(loop.counters.numpy()[3])
            drained = int(loop.counts.numpy()[self.wt.DRAINED_TOTAL])
            self.assertGreater(refills, 5, slots)
            self.assertGreater(drained, 0, slots)  # an env ended L times before a refill
            if batch < 1000:
                self.assertLess(refills, 150, slots)  # in batches: not at every end


if __name__ == "__main__":
    sys.exit(tap.main())
