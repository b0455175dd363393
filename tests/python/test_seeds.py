# SPDX-License-Identifier: Apache-2.0
"""track_gen.seeds: effective_seed bit-identical to the C host and device
functions, seed states with masks and streams given as torch objects,
snapshots, a state at given (seed, epoch) pairs, shards, and seed calls
recorded into a torch.cuda.graph."""
import random
import sys
import unittest

import tap
import tgtest
from track_gen import exec as tx
from track_gen import seeds

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Host(unittest.TestCase):
    """The formulas of trackgen/kernel.h, on the host: runs everywhere."""

    def test_effective_seed_is_the_documented_formula(self):
        rng = random.Random(17)
        edge = [(0, 0), (M64, 0xFFFFFFFF), (1, 0xFFFFFFFF), (GOLDEN, 7)]
        for seed, epoch in edge + [(rng.getrandbits(64), rng.getrandbits(32))
                                   for _ in range(2000)]:
            want = mix64(seed ^ (((epoch + 1) * GOLDEN) & M64))
            self.assertEqual(seeds.effective_seed(seed, epoch), want)
            self.assertEqual(seeds.mix64(seed), mix64(seed))

    def test_env_seed_is_the_documented_formula(self):
        for base, env in [(0, 0), (42, 1), (M64, 0xFFFFFFFF), (12345, 4095)]:
            self.assertEqual(seeds.env_seed(base, env),
                             mix64((base + (env + 1) * GOLDEN) & M64))

    def test_known_answers(self):
        # The table of tests/seeds-test.c, which the C tests check on the
        # host and on the device.
        for z, out in [(0, 0), (1, 0x5692161D100B05E5), (M64, 0xB4D055FCF2CBBD7B),
                       (0x0123456789ABCDEF, 0xB2C058E4EBB5112C)]:
            self.assertEqual(seeds.mix64(z), out)
        for seed, epoch, out in [
                (0, 0, 0xE220A8397B1DCDAF), (0, 1, 0x6E789E6AA1B965F4),
                (1, 0, 0xE4D971771B652C20), (M64, 0xFFFFFFFF, 0x9011E6053017523E),
                (0x0123456789ABCDEF, 42, 0x95F2F51FE5430CE8),
                (42, 0, 0xBDD732262FEB6E95),
                (0xDEADBEEFCAFEBABE, 0x80000000, 0x8985E64ECFCFDE94),
                (0x8000000000000000, 7, 0x6250485B3CDEFBBD),
                # doc/seeds.md's: effective_seed(env_seed(42, 0), 0), the
                # env seed as the env table below has it, and
                # effective_seed(42, 7).
                (0xBDD732262FEB6E95, 0, 0xE37241C09304F97F),
                (42, 7, 0xB4346C5A4AC089C3)]:
            self.assertEqual(seeds.effective_seed(seed, epoch), out)
        for base, env, out in [(0, 0, 0xE220A8397B1DCDAF), (42, 0, 0xBDD732262FEB6E95),
                               (42, 1, 0x28EFE333B266F103), (42, 63, 0x0B7DCBD429A0BAAA),
                               (M64, 0xFFFFFFFF, 0xD3C3FC2C2DE810EC)]:
            self.assertEqual(seeds.env_seed(base, env), out)

    def test_mix64_takes_64_bit_ints_only(self):
        # libtrackgen's tg_mix64(): no value wraps to another.
        for bad, cls in ((-1, OverflowError), (1 << 64, OverflowError), (1.0, TypeError)):
            with self.subTest(bad=bad), self.assertRaises(cls):
                seeds.mix64(bad)

    def test_zero_envs_refused(self):
        with self.assertRaises(tx.ArgumentError) as caught:
            seeds.SeedState(0)
        self.assertEqual(caught.exception.domain, "tg-argument-error-quark")


class Device(tgtest.GpuCase):
    def effective(self, state, stream=None):
        torch = self.torch
        out = torch.zeros(state.n_envs, dtype=torch.int64, device="cuda")
        state.fill_effective(out, stream)
        torch.cuda.synchronize()
        return [v & M64 for v in out.cpu().tolist()]

    def test_new_state_and_fill_match_the_host(self):
        n, base = 1000, 99
        with seeds.SeedState(n, base) as state:
            s, e = state.read()
            self.assertEqual(s, [seeds.env_seed(base, i) for i in range(n)])
            self.assertEqual(e, [0] * n)
            self.assertEqual(self.effective(state),
                             [seeds.effective_seed(x, 0) for x in s])

    def test_masked_advance_and_reset(self):
        torch = self.torch
        n = 513
        stream = torch.cuda.current_stream()
        with seeds.SeedState(n, 7) as state:
            mask = (torch.arange(n, device="cuda") % 3 == 0).to(torch.uint8)
            state.advance(stream, mask)
            state.advance(stream, mask)
            state.advance(stream)
            _, epochs = state.read(stream)
            self.assertEqual(epochs, [3 if i % 3 == 0 else 1 for i in range(n)])
            state.reset_epochs(stream, mask)
            _, epochs = state.read(stream)
            self.assertEqual(epochs, [0 if i % 3 == 0 else 1 for i in range(n)])
            with self.assertRaises(tx.ArgumentError):
                state.advance(stream, mask[:-1])
            with self.assertRaises(ValueError):
                state.advance(stream, mask.cpu())

    def test_snapshot_restore_and_at(self):
        n = 64
        with seeds.SeedState(n, 3) as state:
            state.advance()
            snap = state.snapshot()
            state.advance()
            state.restore(snap)
            s, e = state.read()
            self.assertEqual(e, [1] * n)
            at = seeds.SeedState.at(s[:5], [0, 1, 2, 2 ** 32 - 1, 9])
            self.assertEqual(self.effective(at),
                             [seeds.effective_seed(x, k)
                              for x, k in zip(s[:5], [0, 1, 2, 2 ** 32 - 1, 9])])
            at.close()

    def test_write_every_env(self):
        n = 8
        with seeds.SeedState(n, 3) as state:
            want_s = [M64 - i for i in range(n)]
            want_e = [2 ** 32 - 1] + list(range(1, n))
            state.write(want_s, want_e)
            self.assertEqual(state.read(), (want_s, want_e))
            state.write(epochs=[0] * n)
            self.assertEqual(state.read(), (want_s, [0] * n))
            for kwargs, cls in (({"seeds": [0] * (n - 1)}, ValueError),
                                ({"epochs": [2 ** 32] * n}, OverflowError),
                                ({"seeds": [-1] * n}, OverflowError)):
                with self.subTest(kwargs=kwargs), self.assertRaises(cls):
                    state.write(**kwargs)
            self.assertEqual(state.read(), (want_s, [0] * n))

    def test_shards_equal_one_state(self):
        base, n = 5, 300
        whole = seeds.SeedState(n, base)
        parts = [seeds.SeedState.shard(0, 100, base), seeds.SeedState.shard(100, 200, base)]
        s_whole, _ = whole.read()
        s_parts = parts[0].read()[0] + parts[1].read()[0]
        self.assertEqual(s_whole, s_parts)
        self.assertEqual(parts[1].first_env, 100)
        for st in [whole] + parts:
            st.close()

    def test_set_seeds(self):
        torch = self.torch
        with seeds.SeedState(16, 1) as state:
            state.advance()
            state.set_seeds([2, 5], [111, 222])
            s, e = state.read()
            self.assertEqual((s[2], s[5], e[2], e[5], e[0]), (111, 222, 0, 0, 1))
            ids = torch.tensor([7], dtype=torch.int32, device="cuda")
            vals = torch.tensor([333], dtype=torch.int64, device="cuda")
            state.set_seeds_device(ids, vals)
            s, e = state.read()
            self.assertEqual((s[7], e[7]), (333, 0))
            with self.assertRaises(tx.ArgumentError):
                state.set_seeds([1, 1], [1, 2])

    def test_recorded_into_a_torch_graph(self):
        torch = self.torch
        n = 256
        state = seeds.SeedState(n, 11)
        mask = torch.zeros(n, dtype=torch.uint8, device="cuda")
        out = torch.zeros(n, dtype=torch.int64, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            with self.interop.registered():
                state.advance(None, mask)  # None: the registered capture
                state.fill_effective(out)
                self.interop.retain(state, mask, out)
        s, _ = state.read()
        epochs = [0] * n
        for round_ in range(3):
            mask.copy_((torch.arange(n, device="cuda") % (round_ + 2) == 0).to(torch.uint8))
            g.replay()
            torch.cuda.synchronize()
            for i in range(n):
                epochs[i] += i % (round_ + 2) == 0
            self.assertEqual(state.read()[1], epochs)
            self.assertEqual([v & M64 for v in out.cpu().tolist()],
                             [seeds.effective_seed(x, k) for x, k in zip(s, epochs)])
        state.close()
        del mask, out
        # The graph holds the state: it replays after the Python side let go.
        g.replay()
        torch.cuda.synchronize()
        del g

    def test_blocking_call_refuses_a_capture(self):
        torch = self.torch
        state = seeds.SeedState(8, 1)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            with self.assertRaises(tx.NotCapturableError):
                state.snapshot(torch.cuda.current_stream())
            # Creating a state during the capture is fine, and leaves it intact.
            other = seeds.SeedState(8, 2)
            self.assertEqual(tx.capture_state(torch.cuda.current_stream())[0],
                             tx.CaptureState.ACTIVE)
        del g
        state.close()
        other.close()


if __name__ == "__main__":
    sys.exit(tap.main())
