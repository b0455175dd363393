# SPDX-License-Identifier: Apache-2.0
"""warp_lookahead.py's refill relaxation (refill_relax_kernel(): a tiled
kernel, a warp a slot) compiled ahead of time for sm_90 as launch_tiled()
loads it, no GPU needed: what its results on a GPU rest on and the CPU
tests (test_warp_tracks) cannot see, read from its PTX.  No multiply-add
contraction (every float sum and product rounded on its own, as in
warp_tracks.py's kernels), and the barrier the ping-pong of its steps needs
between one step's shared-memory stores and the next step's loads and
stores; and its shared memory, which bounds --points.  Without Warp, or
where Warp cannot compile for sm_90 (no NVRTC), they skip."""
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


def kernel_lines(ptx):
    """The instructions and labels of the PTX's one kernel, one a line."""
    entries = re.findall(r"^\.visible \.entry\b.*?^\}", ptx, re.S | re.M)
    assert len(entries) == 1, "%d kernels" % len(entries)
    lines = (line.split("//")[0].strip() for line in entries[0].splitlines())
    return [line for line in lines if line]


def point_load(line):
    return line.startswith("ld.shared") and ".f32" in line


def point_store(line):
    return line.startswith("st.shared") and ".f32" in line


def relax_loop(lines):
    """The lines of the relaxation's loop, from its head to its back edge:
    the innermost loop that loads and stores points in shared memory and
    reduces among its lanes (tile_max())."""
    heads = {m.group(1): i for i, line in enumerate(lines) if (m := LABEL.match(line))}
    loops = []
    for i, line in enumerate(lines):
        m = BRANCH.match(line)
        head = heads.get(m.group(3), i) if m else i
        body = lines[head:i + 1]
        if head < i and any(map(point_load, body)) and any(map(point_store, body)) and any(
                "shfl.sync" in b for b in body):
            loops.append(body)
    assert loops, "no relaxation loop found"
    return min(loops, key=len)


def missing_barriers(body):
    """What the ping-pong needs and the loop *body* lacks: a block barrier
    after each store of points before the next load of points (this step's
    writes seen by the next step's reads) and, round the back edge, after
    each load before the next step's first store (this step's reads made
    before the next step writes their row).  A step's own loads and stores
    need none: they are different rows."""
    first_store = next(i for i, line in enumerate(body) if point_store(line))
    missing = []
    for i, line in enumerate(body):
        if point_store(line):
            after = body[i + 1:] + body[:i]
            stop = next((j for j, b in enumerate(after) if point_load(b)), len(after))
            if not any(BARRIER.match(b) for b in after[:stop]):
                missing.append("after %r" % line)
        elif point_load(line):
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

    @classmethod
    def setUpClass(cls):
        if wp is None:
            raise unittest.SkipTest("no warp (pip install warp-lang)")
        sys.path.insert(0, EXAMPLES)
        import warp_lookahead
        cls.wl = wl = warp_lookahead
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
            module = wl.refill_relax_kernel(n).module
            with module_options(module, block_dim=wl.LANES):
                cls.ptx[n], cls.smem[n] = compile_ptx(wl.refill_relax_kernel(n),
                                                      os.path.join(cls.tmp.name, str(n)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_contraction(self):
        for n, ptx in self.ptx.items():
            lines = kernel_lines(ptx)
            self.assertEqual(contractions(lines), [], n)
            self.assertTrue(any(line.startswith("mul.rn.f32") for line in lines), n)

    def test_contraction_seen(self):
        """The check above sees contraction where the module allows it."""
        kernel = self.wl.refill_relax_kernel(self.POINTS[0])
        with module_options(kernel.module, block_dim=self.wl.LANES, fuse_fp=True):
            ptx, _ = compile_ptx(kernel, os.path.join(self.tmp.name, "fused"))
        self.assertTrue(any(line.startswith("fma.") for line in contractions(kernel_lines(ptx))))

    def test_step_barriers(self):
        for n, ptx in self.ptx.items():
            body = relax_loop(kernel_lines(ptx))
            self.assertEqual(missing_barriers(body), [], n)
            # and the check sees the last one (tile_assign()'s) taken out
            last = max(i for i, b in enumerate(body) if BARRIER.match(b))
            self.assertNotEqual(missing_barriers(body[:last] + body[last + 1:]), [], n)

    def test_shared_memory(self):
        """The dynamic shared memory Lookahead's check of --points counts on
        is Warp's."""
        for n, smem in self.smem.items():
            self.assertEqual(self.wl.relax_smem_bytes(n), smem, n)


if __name__ == "__main__":
    sys.exit(tap.main())
