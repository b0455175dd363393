# SPDX-License-Identifier: Apache-2.0
"""A producer written in C from Python: the example track producer
(track_gen.tracks), bit-identical eagerly, replayed and recorded into a
torch.cuda.graph, its buffers as torch tensors, each family's tracks, and
the SVG.  GPU cases skip without torch or a device; the SVG writer and the
families need neither."""
import math
import os
import struct
import sys
import tempfile
import unittest

import tap
import tgtest
from track_gen import exec as tx
from track_gen import seeds

N = 64


class Tracks(tgtest.GpuCase):
    def setUp(self):
        super().setUp()
        from track_gen import tracks
        self.tracks = tracks

    def generate(self, policy, family, base=77):
        """The outputs of one call under @policy on a fresh state and producer."""
        torch = self.torch
        state = seeds.SeedState(N, base)
        p = self.tracks.TrackProducer(state, advance=True)
        p.tensor("family").fill_(family)
        if policy == tx.Policy.RECORD:
            g = torch.cuda.CUDAGraph()
            with self.interop.graph(g):
                p.run()
            g.replay()
        else:
            p.run(torch.cuda.current_stream(), policy)
        torch.cuda.synchronize()
        out = {name: p.tensor(name).clone() for name in ("points", "control", "valid",
                                                          "families")}
        out["epochs"] = state.read()[1]
        p.close()
        state.close()
        return out

    def test_policies_bit_identical(self):
        torch = self.torch
        for family in range(len(self.tracks.FAMILIES)):
            eager = self.generate(tx.Policy.EAGER, family)
            self.assertTrue(bool((eager["families"] == family).all()))
            self.assertEqual(eager["epochs"], [1] * N)
            self.assertGreater(int(eager["valid"].sum()), N // 2)
            for policy in (tx.Policy.REPLAY, tx.Policy.RECORD):
                with self.subTest(family=family, policy=policy.name):
                    got = self.generate(policy, family)
                    for name in ("points", "control", "valid", "families"):
                        self.assertTrue(torch.equal(got[name], eager[name]), name)
                    self.assertEqual(got["epochs"], eager["epochs"])

    def test_a_c_producer_is_a_producer(self):
        torch = self.torch
        state = seeds.SeedState(N, 5)
        p = self.tracks.TrackProducer(state, max_iters=8, n_points=64)
        self.assertIsInstance(p, tx.Producer)
        self.assertEqual((p.name, p.n_points, p.n_envs), ("track", 64, N))
        self.assertEqual(p.tensor("points").shape, (N, 64, 2))
        self.assertEqual(tx.resolve(p, torch.cuda.current_stream())[0], tx.Policy.REPLAY)
        # A condition on the device: nothing regenerates while the flag is 0.
        flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        p.run(torch.cuda.current_stream(), tx.Policy.EAGER, tx.conditional(flag))
        self.assertEqual(state.read()[1], [0] * N)
        with self.assertRaises(TypeError):
            self.tracks.TrackProducer(state, colour="red")
        with self.assertRaises(tx.ArgumentError):
            self.tracks.TrackProducer(state, n_points=33)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.svg")
            p.run(torch.cuda.current_stream())
            p.write_svg(path, range(4), ["a", "b", "c", "d"])
            with open(path) as f:
                self.assertIn("<svg", f.read())
        p.close()
        state.close()


class Lookahead(tgtest.GpuCase):
    """TrackProducer(lookahead=): every env's track, at every step, the one
    on-demand generation makes, eagerly and replayed from a torch graph."""

    STEPS = 90

    def setUp(self):
        super().setUp()
        from track_gen import tracks
        self.tracks = tracks

    def step_both(self, on_demand, ahead, states, family, after=lambda: None,
                  policy=tx.Policy.EAGER):
        """Runs both producers once, then STEPS steps on masks(), all with
        *family*, *ahead*'s first half under *policy* (EAGER, or REPLAY: its
        own graph) and its second half replayed from a torch graph
        (*after()* after each of its steps), and checks that they hold the
        same tracks and epochs after every step."""
        torch = self.torch
        for p in (on_demand, ahead):
            # The first call's family too: it is the one lookahead owes an
            # env's first spares, so the family stays from the first call.
            p.tensor("family").fill_(family)
            p.run()
        graph = None
        for t, mask in enumerate(self.masks()):
            for p in (on_demand, ahead):
                p.tensor("mask").copy_(mask)
                p.tensor("family").fill_(family)
            on_demand.run(policy=tx.Policy.EAGER)
            if t == self.STEPS // 2:  # the rest replayed from a torch graph
                graph = torch.cuda.CUDAGraph()
                with self.interop.graph(graph):
                    ahead.run()
            if graph is not None:
                graph.replay()
            else:
                ahead.run(policy=policy)
            after()
            torch.cuda.synchronize()
            for name in ("points", "control", "valid", "families", "sharpness"):
                self.assertTrue(torch.equal(on_demand.tensor(name), ahead.tensor(name)),
                                "%s after step %d" % (name, t))
            self.assertEqual(states[0].read(), states[1].read(), "epochs, step %d" % t)

    def masks(self):
        """A tenth of the envs a step, env 0 every other step, all at step 20."""
        torch = self.torch
        g = torch.Generator().manual_seed(3)
        for t in range(self.STEPS):
            m = torch.rand(N, generator=g) < 0.1
            m[0] |= t % 2 == 0
            yield (torch.ones(N, dtype=torch.bool) if t == 20 else m).to(torch.uint8)

    def test_equals_on_demand(self):
        states = [seeds.SeedState(N, 11) for _ in range(2)]
        on_demand = self.tracks.TrackProducer(states[0], advance=True)
        ahead = self.tracks.TrackProducer(states[1], advance=True, lookahead=3,
                                          refill_batch=6)
        self.assertEqual((on_demand.lookahead, ahead.lookahead), (0, 3))
        # A family that stays: a new one reaches lookahead L episodes later.
        self.step_both(on_demand, ahead, states, family=2)
        self.assertGreaterEqual(states[1].read()[1][0], self.STEPS // 2)
        ahead.reset()
        for x in (on_demand, ahead, *states):
            x.close()

    def test_own_graph_equals_on_demand(self):
        """The same, the first half replayed from the producer's own graph."""
        states = [seeds.SeedState(N, 12) for _ in range(2)]
        on_demand = self.tracks.TrackProducer(states[0], advance=True)
        ahead = self.tracks.TrackProducer(states[1], advance=True, lookahead=2,
                                          refill_batch=4)
        self.step_both(on_demand, ahead, states, family=1, policy=tx.Policy.REPLAY)
        for x in (on_demand, ahead, *states):
            x.close()

    def test_config_refused(self):
        state = seeds.SeedState(N, 11)
        for kwargs, name in (({"lookahead": 9, "advance": True}, "lookahead"),
                             ({"lookahead": 2}, "advance"),
                             ({"lookahead": 2, "advance": True, "refill_batch": 0},
                              "refill_batch")):
            with self.subTest(kwargs=kwargs):
                with self.assertRaisesRegex(tx.ArgumentError, name):
                    self.tracks.TrackProducer(state, **kwargs)
        for bad, exc in ((-1, ValueError), (2.0, TypeError), (True, TypeError),
                         (2 ** 40, ValueError)):
            with self.subTest(lookahead=bad):
                with self.assertRaisesRegex(exc, "lookahead"):
                    self.tracks.TrackProducer(state, advance=True, lookahead=bad)
        state.close()


class Overlap(tgtest.GpuCase):
    """TrackProducer(overlap=True): a heavy refill beside the steps gives the
    tracks on-demand generation makes, eagerly and replayed from a torch
    graph, with poll() after every step as a loop calls it.  Every spare
    runs all its iterations (min_iters), on demand each stops once smooth:
    the same tracks."""

    STEPS = 60
    HEAVY = dict(advance=True, max_iters=400, min_turn_radius=45.0)
    SPARES = dict(lookahead=2, refill_batch=4, overlap=True, min_iters=400)
    masks, step_both = Lookahead.masks, Lookahead.step_both

    def setUp(self):
        super().setUp()
        from track_gen import tracks
        self.tracks = tracks

    def test_heavy_refill_equals_on_demand(self):
        states = [seeds.SeedState(N, 17) for _ in range(2)]
        on_demand = self.tracks.TrackProducer(states[0], **self.HEAVY)
        ahead = self.tracks.TrackProducer(states[1], **self.SPARES, **self.HEAVY)
        self.step_both(on_demand, ahead, states, family=1, after=ahead.poll)
        ahead.wait_refill()
        stats = ahead.refill_stats()
        # Not vacuous: refills ran beside the steps and ends took their spares.
        self.assertEqual(stats["refills"], stats["started"])
        self.assertGreaterEqual(stats["started"], 3)
        self.assertGreater(stats["made"], 0)
        self.assertGreater(stats["freed"], stats["misses"])
        # The refills' blocks were timed (the first refill's left out of
        # both): the longest of each refill about as long as it, none longer
        # (1 ms for the two clocks).
        self.assertGreater(stats["blocks"], 0)
        self.assertGreaterEqual(stats["busy_ms"], 0.5 * stats["gpu_ms"])
        self.assertLessEqual(stats["busy_ms"], stats["blocks"] * (stats["gpu_ms"] + 1.0))
        for x in (on_demand, ahead, *states):
            x.close()

    def test_refiller_beside_a_torch_capture(self):
        """poll(), wait_refill() and close() on a thread of their own never
        break a torch capture this thread runs (global mode, torch's
        default), in which their event query, synchronization and frees
        would be unsafe calls."""
        torch = self.torch
        state = seeds.SeedState(N, 23)
        ahead = self.tracks.TrackProducer(state, **self.SPARES, **self.HEAVY)
        ahead.run()  # every env's first track, and every spare owed
        torch.cuda.synchronize()  # poll() reads what the call left
        self.assertTrue(ahead.poll())
        torch.cuda.synchronize()  # done, not yet timed: its end event to query
        ahead.tensor("mask").fill_(1)
        ahead.run()  # every env takes a spare: a refill due
        torch.cuda.synchronize()
        started, x = [], torch.zeros(8, device="cuda")
        g = torch.cuda.CUDAGraph()

        def refiller_user(i):
            started.append(ahead.poll())
            ahead.wait_refill()
            ahead.close()

        with torch.cuda.graph(g):
            x.add_(1)
            self.run_threads(refiller_user, 1)
            x.add_(1)
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(started, [True])
        self.assertTrue(torch.equal(x, torch.full_like(x, 2.0)))
        del g
        state.close()

    def test_overlap_refused(self):
        state = seeds.SeedState(N, 11)
        with self.assertRaisesRegex(TypeError, "overlap"):
            self.tracks.TrackProducer(state, advance=True, lookahead=2, overlap=1)
        with self.assertRaisesRegex(tx.ArgumentError, "overlap"):
            self.tracks.TrackProducer(state, advance=True, overlap=True)
        plain = self.tracks.TrackProducer(state, advance=True, lookahead=2)
        for call in (plain.poll, plain.wait_refill, plain.refill_stats):
            with self.assertRaisesRegex(tx.StateError, "overlap=True"):
                call()
        ahead = self.tracks.TrackProducer(state, advance=True, lookahead=2, overlap=True)
        self.assertFalse(ahead.poll())  # nothing ran: nothing is owed
        ahead.close()
        with self.assertRaisesRegex(tx.StateError, "closed"):
            ahead.poll()
        plain.close()
        state.close()


class Svg(unittest.TestCase):
    """track_gen.tracks without a device: the families and the SVG writer."""

    def test_families(self):
        from track_gen import tracks
        self.assertEqual(tracks.FAMILIES, ("polar", "stadium", "star"))
        self.assertEqual(tracks.family_name(99), "none")
        self.assertEqual(tracks.family_name(-1), "none")
        self.assertEqual(tracks.MAX_LOOKAHEAD, 8)

    def test_write_svg_from_bytes(self):
        from track_gen import tracks
        n_tracks, n_points = 3, 8
        ring = [(10 * math.cos(2 * math.pi * k / n_points),
                 10 * math.sin(2 * math.pi * k / n_points)) for k in range(n_points)]
        points = b"".join(struct.pack("<2f", *xy) for _ in range(n_tracks) for xy in ring)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.svg")
            # Fewer labels than tracks: the rest are numbered.
            tracks.write_svg(path, points, bytes([1, 0, 1]), n_tracks, n_points, 2.0,
                             ["first"])
            with open(path) as f:
                svg = f.read()
            self.assertIn("<svg", svg)
            self.assertIn("first", svg)
            self.assertIn("track 2", svg)
            with self.assertRaisesRegex(ValueError, "points"):
                tracks.write_svg(path, points[:-8], bytes(3), n_tracks, n_points, 2.0)
            with self.assertRaises(OSError):
                tracks.write_svg(os.path.join(tmp, "no", "such.svg"), points, bytes(3),
                                 n_tracks, n_points, 2.0)


if __name__ == "__main__":
    sys.exit(tap.main())
