# SPDX-License-Identifier: Apache-2.0
"""warp_lookahead.py's refill relaxation (relax_track(): tiled, a warp a
slot) in its two kernels, refill_relax_kernel() and the fused refill's
warp_step.switch_fused_kernel(), compiled ahead of time for sm_90 as
launch_tiled() loads them, no GPU needed: what their results on a GPU rest
on and the CPU tests (test_warp_tracks) cannot see, read from their PTX.  No
multiply-add contraction (every float sum and product rounded on its own,
as in warp_tracks.py's kernels), and the barrier the ping-pong of its steps
needs between one step's shared-memory stores and the next step's loads and
stores; in the fused kernel, the barriers between the tracks a block makes
one after another; and their shared memory, which bounds --points.  Without
Warp, or where Warp cannot compile for sm_90 (no NVRTC), they skip."""
import contextlib
import json
import os
import re
import sys
import tempfile
import unittest

import tap

try:
    import warp as wp
    wp.config.log_level = wp.LOG_ERROR  # no banner, no "no CUDA driver" warning
except ImportError:
    wp = None

EXAMPLES = os.path.join(os.environ.get("abs_top_srcdir",
                                       os.path.join(os.path.dirname(__file__), "..", "..")),
                        "examples")
ARCH = 90
BARRIER = re.compile(r"^(bar|barrier)(\.cta)?\.sync\b")  # a block's barrier, not a warp's
BRANCH = re.compile(r"^(@!?%p\w+\s+)?bra(\.uni)?\s+(\$L\w+);")
LABEL = re.compile(r"^(\$L\w+):")
# A float sum, difference or product with no rounding of its own: ptxas may
# contract it with its neighbour into a multiply-add.
UNROUNDED = re.compile(r"^(add|sub|mul)(\.ftz)?(\.sat)?\.f32\b")


def compile_ptx(kernel, out):
    """The PTX of *kernel*'s module for sm_90, and its dynamic shared
    memory (the .meta's figure)."""
    paths = wp.compile_aot_module(kernel.module, arch=ARCH, module_dir=out, use_ptx=True)
    with open(paths[-1], "rb") as f:
        ptx = f.read().replace(b"\0", b"").decode()
    meta = [os.path.join(out, name) for name in os.listdir(out) if name.endswith(".meta")]
    with open(meta[0]) as f:
        smem = [v for k, v in json.load(f).items() if k.endswith("_forward_smem_bytes")]
    return ptx, smem[0]


@contextlib.contextmanager
def module_options(module, **options):
    """*module* compiled with *options* (block_dim, as launch_tiled() asks
    for, or a contraction allowed), as it was after."""
    saved = dict(module.options)
    module.options.update(options)
    module.mark_modified()
    try:
        yield
    finally:
        module.options.clear()
        module.options.update(saved)
        module.mark_modified()


def kernel_lines(ptx, name=""):
    """The instructions and labels of the PTX's one kernel (or its one
    kernel whose name has *name* in it), one a line."""
    entries = [e for e in re.findall(r"^\.visible \.entry\b.*?^\}", ptx, re.S | re.M)
               if name in e.split("(")[0]]
    assert len(entries) == 1, "%d kernels" % len(entries)
    lines = (line.split("//")[0].strip() for line in entries[0].splitlines())
    return [line for line in lines if line]


def point_load(line):
    return line.startswith("ld.shared") and ".f32" in line


def point_store(line):
    return line.startswith("st.shared") and ".f32" in line


def shared_data(lines):
    """Predicates of a line that loads and one that stores the block's
    shared data: tiles, not the per-lane counters of Warp's allocator of
    shared memory (tile.h's smem_base, each lane's own), which need no
    barrier."""
    own = set()  # the registers that address a lane's counter
    for line in lines:
        m = re.match(r"^(mov|add|cvta)\S*\s+(%\w+),\s*(.*);$", line)
        if m and ("get_smem_base" in m.group(3) or own & set(re.findall(r"%\w+", m.group(3)))):
            own.add(m.group(2))

    def access(op):
        def test(line):
            m = re.search(r"\[(%\w+)?", line)
            return line.startswith(op + ".shared") and not (m and m.group(1) in own)
        return test
    return access("ld"), access("st")


def loops(lines):
    """Every loop's (head, back edge) line numbers."""
    heads = {m.group(1): i for i, line in enumerate(lines) if (m := LABEL.match(line))}
    for i, line in enumerate(lines):
        m = BRANCH.match(line)
        if m and heads.get(m.group(3), i) < i:
            yield heads[m.group(3)], i


def relax_loop(lines):
    """The (head, back edge) of the relaxation's loop: the innermost loop
    that loads and stores points in shared memory and reduces among its
    lanes (tile_max())."""
    found = [(head, end) for head, end in loops(lines)
             if any(map(point_load, lines[head:end + 1]))
             and any(map(point_store, lines[head:end + 1]))
             and any("shfl.sync" in b for b in lines[head:end + 1])]
    assert found, "no relaxation loop found"
    return min(found, key=lambda loop: loop[1] - loop[0])


def relax_body(lines):
    """The lines of the relaxation's loop, from its head to its back edge."""
    head, end = relax_loop(lines)
    return lines[head:end + 1]


def missing_barriers(body, load=point_load, store=point_store):
    """What the ping-pong needs and the loop *body* lacks: a block barrier
    after each store of points before the next load of points (this step's
    writes seen by the next step's reads) and, round the back edge, after
    each load before the next step's first store (this step's reads made
    before the next step writes their row).  A step's own loads and stores
    need none: they are different rows.  Or the same of any *load* and
    *store* of shared memory (a loop over tracks, which reuse the same
    shared memory)."""
    first_store = next(i for i, line in enumerate(body) if store(line))
    missing = []
    for i, line in enumerate(body):
        if store(line):
            after = body[i + 1:] + body[:i]
            stop = next((j for j, b in enumerate(after) if load(b)), len(after))
            if not any(BARRIER.match(b) for b in after[:stop]):
                missing.append("after %r" % line)
        elif load(line):
            if not any(BARRIER.match(b) for b in body[i + 1:] + body[:first_store]):
                missing.append("after %r" % line)
    return missing


def contractions(lines):
    """The kernel's float multiply-adds and the float operations that ptxas
    may contract into one (integer mad.lo computes addresses)."""
    return [line for line in lines
            if re.match(r"^(fma|mad)(\.\w+)*\.f(16|32|64)\b", line) or UNROUNDED.match(line)]


class RefillRelaxPtx(unittest.TestCase):
    """refill_relax_kernel()'s PTX for sm_90 at point counts below, past and
    at multiples of its 32 lanes."""

    POINTS = (5, 33, 128)
    FUSED = False  # the kernel: the fused switch kernel's (SwitchFusedPtx)

    @classmethod
    def kernel(cls, n):
        return cls.wl.refill_relax_kernel(n)

    @classmethod
    def setUpClass(cls):
        if wp is None:
            raise unittest.SkipTest("no warp (pip install warp-lang)")
        sys.path.insert(0, EXAMPLES)
        import warp_lookahead
        import warp_step
        cls.wl, cls.sw = warp_lookahead, warp_step
        cls.tmp = tempfile.TemporaryDirectory()

        @wp.kernel(module="unique")
        def probe(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0

        try:
            compile_ptx(probe, os.path.join(cls.tmp.name, "probe"))
        except Exception as e:  # no NVRTC in this Warp, or no sm_90 in it
            cls.tmp.cleanup()
            raise unittest.SkipTest("Warp cannot compile for sm_%d here: %s" % (ARCH, e))
        cls.ptx, cls.smem = {}, {}
        for n in cls.POINTS:
            with module_options(cls.kernel(n).module, block_dim=cls.wl.LANES):
                cls.ptx[n], cls.smem[n] = compile_ptx(cls.kernel(n),
                                                      os.path.join(cls.tmp.name, str(n)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def contracting(self):
        """The kernel's PTX (at the fewest points) with contraction allowed."""
        kernel = self.kernel(self.POINTS[0])
        with module_options(kernel.module, block_dim=self.wl.LANES, fuse_fp=True):
            ptx, _ = compile_ptx(kernel, os.path.join(self.tmp.name, "contracting"))
        return kernel_lines(ptx)

    def test_no_contraction(self):
        for n, ptx in self.ptx.items():
            lines = kernel_lines(ptx)
            self.assertEqual(contractions(lines), [], n)
            self.assertTrue(any(line.startswith("mul.rn.f32") for line in lines), n)

    def test_contraction_seen(self):
        """The check above sees contraction where the module allows it."""
        self.assertTrue(any(line.startswith("fma.") for line in contractions(self.contracting())))

    def test_step_barriers(self):
        for n, ptx in self.ptx.items():
            body = relax_body(kernel_lines(ptx))
            self.assertEqual(missing_barriers(body), [], n)
            # and the check sees the last one (tile_assign()'s) taken out
            last = max(i for i, b in enumerate(body) if BARRIER.match(b))
            self.assertNotEqual(missing_barriers(body[:last] + body[last + 1:]), [], n)

    def test_shared_memory(self):
        """The dynamic shared memory Lookahead's check of --points counts on
        is Warp's."""
        for n, smem in self.smem.items():
            self.assertEqual(self.wl.relax_smem_bytes(n, self.FUSED), smem, n)


class SwitchFusedPtx(RefillRelaxPtx):
    """warp_step.switch_fused_kernel()'s PTX for sm_90 (the refill fused: a
    block makes its lanes' tracks one after another, each generated into
    a tile and relaxed by relax_track(), refill_relax_kernel()'s own): the
    same relaxation's barriers; no contraction, its multiply-adds only
    those of on-demand generation; the barriers between one track and the
    next; its shared memory."""

    FUSED = True

    @classmethod
    def kernel(cls, n):
        return cls.sw.switch_fused_kernel(n)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import warp_tracks  # on demand: generate_kernel, in its module
        ptx, _ = compile_ptx(warp_tracks.generate_kernel, os.path.join(cls.tmp.name, "tracks"))
        cls.generate = kernel_lines(ptx, "generate_kernel")

    def test_no_contraction(self):
        """No float operation ptxas may contract (each rounded on its own),
        and no multiply-add but those of on-demand generation's
        track_point() (the fmaf() calls of libdevice's sin and cos, the
        same code in every kernel), once for each point a lane generates
        (tile_map() over its ceil(n / 32) registers, unrolled)."""
        per_point = contractions(self.generate)
        self.assertTrue(per_point)
        self.assertTrue(all(line.startswith("fma.rn.f32") for line in per_point), per_point)
        for n, ptx in self.ptx.items():
            found = contractions(kernel_lines(ptx))
            self.assertEqual([line for line in found if not line.startswith("fma.rn.f32")], [],
                             n)
            self.assertEqual(len(found), len(per_point) * -(-n // self.wl.LANES), n)

    def test_contraction_seen(self):
        """The check above sees contraction where the module allows it:
        float operations ptxas may contract, and more multiply-adds."""
        found = contractions(self.contracting())
        self.assertTrue(any(UNROUNDED.match(line) for line in found))
        per_lane = -(-self.POINTS[0] // self.wl.LANES)  # points a lane generates
        self.assertGreater(sum(line.startswith("fma.") for line in found),
                           len(contractions(self.generate)) * per_lane)

    def test_track_barriers(self):
        """Between the tracks a block makes one after another (its loop
        over its lanes' slots, and the kernel's grid-stride loop round
        it), which hold the same shared memory: a barrier after each load
        of shared data before the next track's first store, and after each
        store before the next load."""
        for n, ptx in self.ptx.items():
            lines = kernel_lines(ptx)
            load, store = shared_data(lines)
            inner = relax_loop(lines)
            outer = sorted(((head, end) for head, end in loops(lines)
                            if head < inner[0] and end > inner[1]),
                           key=lambda loop: loop[1] - loop[0])
            self.assertEqual(len(outer), 2, n)
            for head, end in outer:
                self.assertEqual(missing_barriers(lines[head:end + 1], load, store), [],
                                 (n, head))
            # and the check sees the barrier before a track's first store
            # (the first tile's assign()'s) taken out
            body = lines[outer[0][0]:outer[0][1] + 1]
            first = next(i for i, line in enumerate(body) if store(line))
            bar = max(i for i, line in enumerate(body[:first]) if BARRIER.match(line))
            self.assertNotEqual(missing_barriers(body[:bar] + body[bar + 1:], load, store), [],
                                n)


if __name__ == "__main__":
    sys.exit(tap.main())
