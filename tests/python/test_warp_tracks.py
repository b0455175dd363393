# SPDX-License-Identifier: Apache-2.0
"""simloop_warp.py's step kernels (warp_step.py's), warp_tracks.py's and
warp_lookahead.py's (the examples' track generator in Warp, on demand and
with lookahead) on Warp's CPU device, no GPU needed: against numpy, and the
loop with lookahead against the loop on demand, kernel by kernel, every env
after every step (their launches the very lists the examples launch on a
GPU).  Without warp or its CPU backend they skip; test_examples runs the
programs on a GPU."""
import argparse
import os
import sys
import unittest
from unittest import mock

import tap
from track_gen import seeds

try:
    import numpy as np  # with warp
    import warp as wp
    wp.config.log_level = wp.LOG_WARNING  # no banner
except ImportError:
    wp = None

EXAMPLES = os.path.join(os.environ.get("abs_top_srcdir",
                                       os.path.join(os.path.dirname(__file__), "..", "..")),
                        "examples")


def warp_examples():
    """The modules warp_step, warp_tracks and warp_lookahead, for their
    kernels on Warp's CPU device, or a skip saying why they cannot run."""
    if wp is None:
        raise unittest.SkipTest("no warp (pip install warp-lang)")
    if not wp.is_cpu_available():  # the GPU machine's staged Warp has no warp-clang
        raise unittest.SkipTest("Warp has no CPU backend here (warp-clang)")
    # The refill's relaxation is a tiled kernel, a warp a slot: its lanes run
    # as lanes (cooperative fibers) on the CPU only with this; else one
    # thread a block.
    wp.config.enable_cpu_blocks = True
    sys.path.insert(0, EXAMPLES)
    import warp_lookahead
    import warp_step
    import warp_tracks
    return warp_step, warp_tracks, warp_lookahead


class SimloopWarpKernels(unittest.TestCase):
    """simloop_warp.py's step kernels (warp_step.py's) and warp_tracks.py's
    on Warp's CPU device against numpy (float32, in the kernels' order of
    operations): no GPU needed."""

    @classmethod
    def setUpClass(cls):
        cls.sw, cls.wt, _ = warp_examples()
        import simloop  # the torch loop's constant: the reference, not the kernels'
        cls.golden = simloop.GOLDEN
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
        salt_step = (step * self.golden) % (1 << 64)
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
        wt, k_n = self.wt, self.n_control
        out = []
        for k in range(k_n + 1):
            z = seeds.mix64(key ^ (((k % k_n + 1) * self.golden) % (1 << 64)))
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


def on_demand(wt, keys, mask, points, relaxed, valid, lengths, go, n_control, max_iters):
    """Regen's generate, relax and measure stages on the CPU, for the envs
    in *mask*: the loop stage's WHILE as the host's loop, at most
    *max_iters* bodies while the flag is set."""
    wp.launch(wt.generate_kernel, points.shape, inputs=[
        keys, mask, points, go, n_control, wt.RADIUS, wt.R_JITTER, wt.A_JITTER], device="cpu")
    relax_on_demand(wt, mask, points, relaxed, valid, lengths, go, max_iters)


def relax_on_demand(wt, mask, points, relaxed, valid, lengths, go, max_iters):
    """Regen's relax and measure stages on the CPU, from *points* as they
    are, the loop's flag *go* as generate_kernel leaves it."""
    dims = points.shape
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
    advance and keys done here with track_gen.seeds), or with lookahead, its
    refill as --refill *refill* says."""

    # simloop_warp.py's options: about 10% of the tracks still sharp after 6
    # relaxation steps, a lap in about 12 steps, crashes likely.
    N_POINTS, N_CONTROL, MAX_ITERS = 24, 6, 6
    ARGS = dict(points=N_POINTS, control=N_CONTROL, max_iters=MAX_ITERS, lap_steps=12.0,
                crash_prob=0.02, refill="conditional")

    def __init__(self, sw, wt, wl, env_seeds, lookahead, batch, refill="conditional",
                 points=N_POINTS):
        self.sw, self.wt, self.wl, self.slots = sw, wt, wl, lookahead
        self.args = argparse.Namespace(**dict(self.ARGS, refill=refill, points=points),
                                       refill_batch=batch)
        n, p = self.n, self.p = len(env_seeds), points
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
            self.spare_valid, self.spare_lengths = zeros(rows, wp.uint8), zeros(rows, wp.float32)
            self.counts, self.refill = zeros(4, wp.int32), zeros(1, wp.int32)
            for name, array in wl.fused_arrays(n, "cpu").items():
                setattr(self, name, array)
        self.mask.fill_(1)  # the reset: every env at epoch 1, its first track
        self.regenerate()
        if lookahead:
            self.refill.fill_(1)
            self.refill_spares()
        wp.launch(sw.start_kernel, n, inputs=[self.keys, self.salt, self.progress,
                                              float(p)], device="cpu")
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
        for stage in self.wl.REFILL_USES:
            self.wl.launch_refill(stage, self.array, self.slots, self.args, device="cpu")

    def step(self):
        """Sim.step()'s launches, then the regeneration when the step's flag
        is set (or at every step: --refill always; never apart: fused)."""
        self.sw.launch(self.sw.step_launches(self.array, self.n, self.slots, self.args),
                       device="cpu")
        refill = self.args.refill
        if not self.slots:
            if self.any_done.numpy()[0]:
                self.regenerate()
        elif refill == "always" or refill == "conditional" and self.refill.numpy()[0]:
            self.refill_spares()

    def state(self):
        """Every env's epoch, key, agent and track, and the episodes' ends."""
        return {name: getattr(self, name).numpy().copy() for name in (
            "epochs", "keys", "progress", "mask", "points", "valid", "lengths")}


class LookaheadKernels(unittest.TestCase):
    """simloop_warp.py's switch and refill kernels (warp_step.py's and
    warp_lookahead.py's) on Warp's CPU device: against numpy, and a whole
    loop with lookahead against the loop on demand, every env after every
    step."""

    @classmethod
    def setUpClass(cls):
        cls.sw, cls.wt, cls.wl = warp_examples()

    def test_copy_taken_walks_its_list(self):
        """The fused switch kernel's copy: each slot listed in the step's
        parity's list (its row) gives its points to its env, with fewer
        warps than slots listed (the warps take the list in turn); no other
        env is touched, nor anything past the list's count."""
        wt, wl = self.wt, self.wl

        @wp.kernel
        def copy(p: int, n_taken: int, took: wp.array(dtype=wp.int32),
                 spare_points: wp.array2d(dtype=wp.vec2), points: wp.array2d(dtype=wp.vec2),
                 n_spares: int, n_warps: int):
            wl.copy_taken(wp.tid(), p, n_taken, took, spare_points, points, n_spares, n_warps)

        n, slots, n_points, n_warps = 12, 2, 40, 2
        rng = np.random.default_rng(9)
        spare = rng.normal(size=(n * slots, n_points, 2)).astype(np.float32)
        before = rng.normal(size=(n, n_points, 2)).astype(np.float32)
        listed = [7 * slots + 1, 2 * slots, 11 * slots + 1, 0, 5 * slots + 1]
        for p in (0, 1):
            took = np.full(2 * n, 3 * slots, np.int32)  # env 3, unlisted, past the count
            took[p * n:p * n + len(listed)] = listed
            points = wp.array(before, dtype=wp.vec2, device="cpu")
            wp.launch(copy, n_warps * wt.LANES, device="cpu", inputs=[
                p, len(listed), wp.array(took, dtype=wp.int32, device="cpu"),
                wp.array(spare, dtype=wp.vec2, device="cpu"), points, slots, n_warps])
            want = before.copy()
            for row in listed:
                want[row // slots] = spare[row]
            np.testing.assert_array_equal(points.numpy(), want)

    def test_switch_and_refill(self):
        """At the loops' track size, and at one that takes a thread of the
        switch's copy more than two batches of points."""
        for p in (CpuLoop.N_POINTS, 2 * self.wt.LANES * self.wt.BATCH + 3):
            with self.subTest(points=p):
                self.switch_and_refill(p)

    def switch_and_refill(self, p):
        sw, wt, wl, n, slots = self.sw, self.wt, self.wl, 24, 3
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
            ("refill", [0], wp.int32), ("fill", np.zeros(rows), wp.int32))}
        # No lap in sight, no crash: the envs with an invalid track end.
        args = argparse.Namespace(**dict(CpuLoop.ARGS, points=p, lap_steps=1e9,
                                         crash_prob=0.0), refill_batch=1000)

        def launch(launches):
            sw.launch(launches, device="cpu")

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
            for stage in wl.REFILL_USES:
                wl.launch_refill(stage, a.__getitem__, slots, args, device="cpu")
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

    def test_refill_relaxation(self):
        """The refill's relaxation (a tiled kernel, a warp a slot) against
        the loop on demand, bit for bit, where the loops' runs may not take
        it: point counts below, at and past a multiple of its lanes, tracks
        smooth from the start (no step), still sharp after max_iters
        (invalid), no step allowed at all (max_iters 0 or below), and no
        bound (the int32 maximum) on tracks that become smooth."""
        wt, wl, lanes = self.wt, self.wl, self.wt.LANES

        def relax(start, max_iters):  # the loop on demand's, the refill's
            rows, p = start.shape[:2]
            ref = {"points": wp.array(start, dtype=wp.vec2, device="cpu"),
                   "valid": wp.zeros(rows, dtype=wp.uint8, device="cpu"),
                   "lengths": wp.zeros(rows, dtype=wp.float32, device="cpu")}
            relax_on_demand(wt, wp.ones(rows, dtype=wp.uint8, device="cpu"), ref["points"],
                            wp.zeros((rows, p), dtype=wp.vec2, device="cpu"), ref["valid"],
                            ref["lengths"], wp.ones(1, dtype=wp.int32, device="cpu"), max_iters)
            a = {"refill": wp.ones(1, dtype=wp.int32, device="cpu"),
                 "fill": wp.ones(rows, dtype=wp.int32, device="cpu"),
                 "ready": wp.zeros(rows, dtype=wp.int32, device="cpu"),
                 "spare_points": wp.array(start, dtype=wp.vec2, device="cpu"),
                 "spare_valid": wp.zeros(rows, dtype=wp.uint8, device="cpu"),
                 "spare_lengths": wp.zeros(rows, dtype=wp.float32, device="cpu"),
                 "counts": wp.full(4, 5, dtype=wp.int32, device="cpu")}
            wl.launch_refill("relax", a.__getitem__, 1,
                             argparse.Namespace(max_iters=max_iters), device="cpu")
            how = "points %d, max_iters %d" % (p, max_iters)
            for name in ("points", "valid", "lengths"):
                self.assertTrue(a["spare_" + name].numpy().tobytes()
                                == ref[name].numpy().tobytes(), "%s, %s" % (name, how))
            self.assertEqual(a["ready"].numpy().tolist(), [1] * rows, how)
            self.assertEqual(a["counts"].numpy().tolist(), [0, 0, 5, 5], how)
            return ((ref["points"].numpy() != start).any(axis=(1, 2)),
                    ref["valid"].numpy().astype(bool))

        rng, rows = np.random.default_rng(11), 8
        seen = set()  # (moved or kept, valid or invalid, whether a step was allowed)
        for p in (5, 24, lanes, lanes + 1, 3 * lanes + 4):
            keys = wp.array([seeds.effective_seed(seeds.env_seed(17, r), 1) for r in range(rows)],
                            dtype=wp.uint64, device="cpu")
            start = wp.zeros((rows, p), dtype=wp.vec2, device="cpu")
            wp.launch(wt.generate_kernel, (rows, p), device="cpu", inputs=[
                keys, wp.ones(rows, dtype=wp.uint8, device="cpu"), start,
                wp.zeros(1, dtype=wp.int32, device="cpu"), CpuLoop.N_CONTROL, wt.RADIUS,
                wt.R_JITTER, wt.A_JITTER])
            start = start.numpy().copy()  # tracks; then a circle and noise
            turn = np.float32(2.0 * np.pi) * np.arange(p, dtype=np.float32) / np.float32(p)
            start[0] = np.stack([np.cos(turn), np.sin(turn)], axis=1) * np.float32(wt.RADIUS)
            start[1] = rng.normal(scale=wt.RADIUS, size=(p, 2)).astype(np.float32)
            for max_iters in (-1, 0, 1, CpuLoop.MAX_ITERS):
                moved, valid = relax(start, max_iters)
                seen.update(("moved" if m else "kept", "valid" if v else "invalid",
                             max_iters > 0) for m, v in zip(moved, valid))
            if p >= 24:  # a circle's turns, 360 / p degrees, are not sharp
                self.assertTrue(valid[0] and not moved[0], p)
                # The noise (row 1) never becomes smooth; the rest do, in a
                # few steps: with no bound, a loop to max_iters + 1 overflowed.
                moved, valid = relax(np.delete(start, 1, axis=0), 2**31 - 1)
                self.assertTrue(valid.all() and moved.any(), p)
        self.assertEqual(seen, {("moved", "valid", True), ("moved", "invalid", True),
                                ("kept", "valid", True), ("kept", "invalid", False),
                                ("kept", "valid", False)})

    def test_refill_points_limit(self):
        """Tracks too long for a block's shared memory (the relaxation's
        tiles) are refused when the Lookahead is built, naming --points and
        the limit: 8264 points with an H100's 227 KB a block."""
        h100 = argparse.Namespace(name="NVIDIA H100", max_shared_memory_per_block=232448)
        state = argparse.Namespace(n_envs=4, device=0)
        with mock.patch.object(self.wl.wp, "get_device", return_value=h100):
            self.assertIsNone(self.wl.refill_points_error(8264, "cuda:0"))
            with self.assertRaisesRegex(ValueError, r"^--points 8265: .* at most 8264 points"):
                self.wl.Lookahead(None, None, state, argparse.Namespace(
                    lookahead=2, points=8265, refill="conditional"))
            # Fused, the switch kernel keeps its lanes' flags and keys beside
            # the track: 8249 points at most.
            self.assertIsNone(self.wl.refill_points_error(8249, "cuda:0", True))
            with self.assertRaisesRegex(ValueError, r"^--points 8250: .* at most 8249 points"):
                self.wl.Lookahead(None, None, state, argparse.Namespace(
                    lookahead=2, points=8250, refill="fused"))

    def test_fused_refill_points(self):
        """The fused refill (its lanes' slots made one after another by their
        block, a track's points generated and relaxed by its lanes
        together) against the loop on demand, every env after every step,
        bit for bit, at point counts below, at, past and well past a
        multiple of its lanes, with blocks that make several tracks in a
        refill (a block's 32 slots are 16 envs')."""
        env_seeds = [seeds.env_seed(23, e) for e in range(48)]  # 96 slots: 3 blocks
        for p in (5, self.wt.LANES, self.wt.LANES + 1, 100):
            with self.subTest(points=p):
                demand = CpuLoop(self.sw, self.wt, self.wl, env_seeds, 0, 1, points=p)
                fused = CpuLoop(self.sw, self.wt, self.wl, env_seeds, 2, 6, "fused", points=p)
                for step in range(60):
                    demand.step()
                    fused.step()
                    want = demand.state()
                    for name, value in fused.state().items():
                        self.assertTrue(value.tobytes() == want[name].tobytes(),
                                        "%s after step %d" % (name, step))
                # refills of 6 slots at least (or an env's last spare taken):
                # a block makes several tracks in one
                self.assertGreater(int(fused.counters.numpy()[3]), 5)
                ends = int(demand.counters.numpy()[:3].sum())
                self.assertGreater(ends, 60)
                # The refills made the spares: an env that found none made
                # its own track, the same one, so the tracks alone cannot
                # tell a refill that made nothing.
                own = int(fused.counts.numpy()[self.wl.MADE_TOTAL])
                self.assertLess(own, ends // 10, "own tracks")

    def test_lookahead_equals_on_demand(self):
        """Every env's epoch, key, agent and track after every step of a long
        run are those of the loop on demand, with envs that end twice (or L
        times) before a refill, for several ring sizes and batches, and each
        way of running the refill (fused: envs that make their own track,
        as when one runs out and ends again before its refill)."""
        env_seeds = [seeds.env_seed(21, e) for e in range(32)]
        demand = CpuLoop(self.sw, self.wt, self.wl, env_seeds, 0, 1)
        runs = [CpuLoop(self.sw, self.wt, self.wl, env_seeds, slots, batch, refill)
                for slots, batch, refill in (
                    (2, 16, "conditional"), (1, 4, "conditional"), (3, 1000, "conditional"),
                    (2, 16, "always"), (2, 16, "fused"), (1, 4, "fused"), (3, 1000, "fused"))]
        for step in range(150):
            demand.step()
            want = demand.state()
            for loop in runs:
                loop.step()
                for name, value in loop.state().items():
                    self.assertTrue(value.tobytes() == want[name].tobytes(),
                                    "%s after step %d, lookahead %d, refill %s"
                                    % (name, step, loop.slots, loop.args.refill))
        ends = demand.counters.numpy()[:3]
        self.assertGreater(int(ends.sum()), 200)
        self.assertTrue(ends[2] > 0, ends)  # invalid tracks seen
        made = 0
        for loop in runs:
            how = (loop.slots, loop.args.refill)
            self.assertEqual(loop.counters.numpy()[:3].tolist(), ends.tolist(), how)
            refills = int(loop.counters.numpy()[3])
            drained = int(loop.counts.numpy()[self.wl.DRAINED_TOTAL])
            own = int(loop.counts.numpy()[self.wl.MADE_TOTAL])
            made += own
            # most ends took a spare a refill made (its own track otherwise)
            self.assertLess(own, int(ends.sum()) // 2, how)
            self.assertGreater(refills, 5, how)
            self.assertGreater(drained, 0, how)  # an env ended L times before a refill
            if loop.args.refill_batch < 1000:
                self.assertLess(refills, 150, how)  # in batches: not at every end
        self.assertGreater(made, 0)  # the fused runs' own path taken


if __name__ == "__main__":
    sys.exit(tap.main())
