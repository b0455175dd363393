"""The Python main job, briefly: examples/simloop.py (a torch simulator
regenerating tracks inside one torch.cuda.graph), examples/simloop_dist.py
under torch.distributed, two processes on one GPU over gloo, and
examples/simloop_warp.py (the same loop in Warp kernels), and
examples/race_mjwarp.py (the loop on MuJoCo Warp, in a torch graph and a
Warp capture); their determinism checks and counters.  Without torch or a
GPU they skip.  simloop_warp.py's kernels are also checked against numpy on
Warp's CPU device, wherever warp is installed, and race_mjwarp.py's model,
controller and episodes on it wherever mujoco_warp is too."""
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

    def test_simloop_warp(self):
        tgtest.require_gpu()
        if wp is None:
            self.skipTest("no warp (pip install warp-lang)")
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            r = run([os.path.join(EXAMPLES, "simloop_warp.py"), "--short", "--no-compile",
                     "--svg", svg])
            self.check_loop(r, svg)
            self.assertRegex(r.stdout, r"host-driven: +\d+ env-steps/s")
            self.assertRegex(r.stdout, r"simloop.py: +\d+ env-steps/s")
            self.assertRegex(r.stdout, r"Warp loop / simloop.py in-graph: \d+\.\d\d")

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


class SimloopWarpKernels(unittest.TestCase):
    """simloop_warp.py's kernels on Warp's CPU device against numpy (float32,
    in the kernels' order of operations): no GPU needed."""

    @classmethod
    def setUpClass(cls):
        if wp is None:
            raise unittest.SkipTest("no warp (pip install warp-lang)")
        sys.path.insert(0, EXAMPLES)
        import simloop_warp
        import warp_tracks
        cls.sw, cls.wt = simloop_warp, warp_tracks
        if not wp.is_cpu_available():  # the GPU machine's staged Warp has no warp-clang
            raise unittest.SkipTest("Warp has no CPU backend here (warp-clang)")
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


if __name__ == "__main__":
    sys.exit(tap.main())
