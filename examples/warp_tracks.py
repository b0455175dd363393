# SPDX-License-Identifier: Apache-2.0
"""warp_tracks.py: simloop_warp.py's track generator in NVIDIA Warp kernels,
on demand (its lookahead: warp_lookahead.py).

An env's track depends on its effective seed (its (seed, epoch)) alone: its
control points come from a hash of it, joined linearly in polar form; a
bounded relaxation moves each point of a sharp turn to its neighbours'
midpoint until no turn is sharp; a validity test (no sharp turn left: the
relaxation converged) and its length close it.

On demand (Regen): a track_gen Producer of Warp stages regenerates the
tracks of the envs whose mask byte is set: the SeedState advances their
epochs, a kernel makes the points, a loop stage (a WHILE node) relaxes them
all together while any is sharp, a kernel tests and measures them.
"""
import simloop  # the constants of the hashes

import warp as wp

# No gradients (half the compiling), and no multiply-add contraction: a
# track is made by different kernels (on demand, a refill, the fused step),
# and the compiler contracts a function's products differently in each, so
# that one rounding could differ and the same (seed, epoch) give another
# track.  Each product and sum rounded on its own are the same everywhere.
wp.set_module_options({"enable_backward": False, "fuse_fp": False})

SCALE = 1.0 / (1 << 24)
GOLDEN = wp.constant(wp.uint64(simloop.GOLDEN))
MIX1 = wp.constant(wp.uint64(simloop.MIX1))
MIX2 = wp.constant(wp.uint64(simloop.MIX2))

# The track shape: 5 relaxation steps in the median, 9 at the 90th
# percentile, about 2% of the tracks still sharp after 12 (invalid).
RADIUS, R_JITTER, A_JITTER = 100.0, 0.55, 0.9
MIN_COS = 0.76604444  # cos(40 degrees): a sharper turn is relaxed

# Threads (a CUDA warp) that share the points of one track where a kernel
# would otherwise launch a thread per point for a few tracks at most.
LANES = wp.constant(32)

# Points a thread loads together where one thread walks a track.  Point by
# point, each load waits for the one before (a load may not pass a store
# that may alias it, and the loop is not unrolled): n round trips to memory
# for n points; a batch costs one.  It lives in registers (its loops are
# unrolled).
BATCH = wp.constant(8)
Batch = wp.types.matrix(shape=(BATCH, 2), dtype=wp.float32)


@wp.func
def mix64(z: wp.uint64):
    """SplitMix64's finalizer, as track_gen.seeds.mix64()."""
    z = (z ^ (z >> wp.uint64(30))) * MIX1
    z = (z ^ (z >> wp.uint64(27))) * MIX2
    return z ^ (z >> wp.uint64(31))


@wp.func
def effective_seed(seed: wp.uint64, epoch: wp.uint32):
    """The key of an env's generation, as track_gen.seeds.effective_seed()
    (epoch + 1 in 64 bits)."""
    return mix64(seed ^ ((wp.uint64(epoch) + wp.uint64(1)) * GOLDEN))


@wp.func
def high_unit(z: wp.uint64):
    """The top 24 bits of z as a float in [0, 1)."""
    return wp.float32(wp.int32(z >> wp.uint64(40))) * wp.float32(SCALE)


@wp.func
def low_unit(z: wp.uint64):
    """The low 24 bits of z as a float in [0, 1)."""
    return wp.float32(wp.int32(z & wp.uint64(0xFFFFFF))) * wp.float32(SCALE)


@wp.func
def control(key: wp.uint64, k: int, n_control: int, radius: float, r_jitter: float,
            a_jitter: float):
    """Control point k (any integer; its hash is k mod n_control's) in
    polar form: (radius, angle), angles increasing with k."""
    z = mix64(key ^ (wp.uint64(k % n_control + 1) * GOLDEN))
    r = radius * (1.0 + r_jitter * (2.0 * high_unit(z) - 1.0))
    a = (float(k) + a_jitter * (low_unit(z) - 0.5)) * (2.0 * wp.pi / float(n_control))
    return wp.vec2(r, a)


@wp.func
def track_point(key: wp.uint64, i: int, n: int, n_control: int, radius: float,
                r_jitter: float, a_jitter: float):
    """Point i of n of the centerline keyed *key*: the control points
    joined linearly in polar form."""
    k = i * n_control // n
    f = float(i * n_control - k * n) / float(n)
    p0 = control(key, k, n_control, radius, r_jitter, a_jitter)
    p1 = control(key, k + 1, n_control, radius, r_jitter, a_jitter)
    r = p0[0] + (p1[0] - p0[0]) * f
    a = p0[1] + (p1[1] - p0[1]) * f
    return wp.vec2(r * wp.cos(a), r * wp.sin(a))


@wp.func
def generate_row(key: wp.uint64, points: wp.array2d(dtype=wp.vec2), row: int, first: int,
                 stride: int, n_control: int, radius: float, r_jitter: float, a_jitter: float):
    """Points first, first + stride, ... of track *row*, keyed *key*."""
    n = points.shape[1]
    for i in range(first, n, stride):
        points[row, i] = track_point(key, i, n, n_control, radius, r_jitter, a_jitter)


@wp.func
def sharp(a: wp.vec2, b: wp.vec2, c: wp.vec2, min_cos: float):
    """Whether the turn at b is sharper than acos(min_cos)."""
    u = b - a
    v = c - b
    return wp.dot(u, v) < min_cos * wp.sqrt(wp.dot(u, u) * wp.dot(v, v))


@wp.func
def sharp_at(points: wp.array2d(dtype=wp.vec2), row: int, i: int, min_cos: float):
    """Whether the turn at point i of track *row* is sharp."""
    n = points.shape[1]
    return sharp(points[row, (i + n - 1) % n], points[row, i], points[row, (i + 1) % n],
                 min_cos)


@wp.func
def midpoint(a: wp.vec2, b: wp.vec2):
    """Where a relaxation step moves a point of a sharp turn: its
    neighbours' midpoint (every relaxation's one expression, so that each
    rounds alike)."""
    return 0.5 * (a + b)


@wp.func
def segment_length(a: wp.vec2, b: wp.vec2):
    """The length of a track's segment from a to b (the measure's one
    expression, likewise)."""
    return wp.length(b - a)


@wp.func
def relax(prev: wp.vec2, cur: wp.vec2, nxt: wp.vec2, min_cos: float):
    """A point after a relaxation step: its neighbours' midpoint where its
    turn is sharp, else itself."""
    if sharp(prev, cur, nxt, min_cos):
        return midpoint(prev, nxt)
    return cur


@wp.func
def relaxed_point(points: wp.array2d(dtype=wp.vec2), row: int, i: int, min_cos: float):
    """Point i of track *row* after a relaxation step."""
    n = points.shape[1]
    return relax(points[row, (i + n - 1) % n], points[row, i], points[row, (i + 1) % n],
                 min_cos)


@wp.func
def load_batch(points: wp.array2d(dtype=wp.vec2), row: int, start: int, stride: int):
    """Points start, start + stride, ... (BATCH of them, indices mod n) of
    track *row*, loaded together."""
    n = points.shape[1]
    q = Batch()
    for j in range(BATCH):
        q[j] = points[row, (start + j * stride) % n]
    return q


@wp.func
def batch_point(q: Batch, j: int):
    return wp.vec2(q[j, 0], q[j, 1])


@wp.func
def relax_pass(src: wp.array2d(dtype=wp.vec2), dst: wp.array2d(dtype=wp.vec2), row: int,
               min_cos: float):
    """A relaxation step of track *row*, from *src* into *dst*: relax_kernel's
    then settle_kernel's, in one pass over the points with the old and new
    ones around point i in registers, the old ones loaded a batch at a time.
    Returns 1 when a turn of the new track is sharp."""
    n = src.shape[1]
    a0 = src[row, n - 1]  # old points i - 1, i
    a1 = src[row, 0]
    b0 = a0  # new points i - 2, i - 1 (from i = 2 on)
    b1 = a1
    go = int(0)
    for base in range(0, n, BATCH):
        q = load_batch(src, row, base + 1, 1)  # old points i + 1
        for j in range(BATCH):
            i = base + j
            if i < n:
                a2 = batch_point(q, j)
                b2 = relax(a0, a1, a2, min_cos)
                dst[row, i] = b2
                if i >= 2 and sharp(b0, b1, b2, min_cos):  # new point i - 1's turn
                    go = 1
                a0 = a1
                a1 = a2
                b0 = b1
                b1 = b2
    first = dst[row, 0]  # the turns across the seam: new points n - 1 and 0
    if sharp(b0, b1, first, min_cos) or sharp(b1, first, dst[row, 1], min_cos):
        go = 1
    return go


@wp.func
def copy_row(src: wp.array2d(dtype=wp.vec2), src_row: int, dst: wp.array2d(dtype=wp.vec2),
             dst_row: int, first: int, stride: int):
    """Points first, first + stride, ... of track *src_row* into track
    *dst_row*, a batch at a time."""
    n = src.shape[1]
    for base in range(first, n, stride * BATCH):
        q = load_batch(src, src_row, base, stride)
        for j in range(BATCH):
            i = base + j * stride
            if i < n:
                dst[dst_row, i] = batch_point(q, j)


@wp.func
def measure_row(points: wp.array2d(dtype=wp.vec2), row: int, valid: wp.array(dtype=wp.uint8),
                lengths: wp.array(dtype=wp.float32), min_cos: float):
    """Track *row*'s validity (no sharp turn left) and its length, summed in
    a fixed order, into valid[row] and lengths[row]."""
    n = points.shape[1]
    total = float(0.0)
    smooth = int(1)
    prev = points[row, n - 1]
    cur = points[row, 0]
    for base in range(0, n, BATCH):
        q = load_batch(points, row, base + 1, 1)  # the points after point i
        for j in range(BATCH):
            if base + j < n:
                nxt = batch_point(q, j)
                total += segment_length(cur, nxt)
                if sharp(prev, cur, nxt, min_cos):
                    smooth = 0
                prev = cur
                cur = nxt
    lengths[row] = total
    valid[row] = wp.uint8(smooth)


@wp.func
def relax_row(points: wp.array2d(dtype=wp.vec2), relaxed: wp.array2d(dtype=wp.vec2), row: int,
              max_iters: int, min_cos: float):
    """Track *row*'s relaxation, at most max_iters steps while a turn is
    sharp, as the WHILE runs them for it (the first step always: a smooth
    track is left as it is), ping-ponging between *points* and its scratch
    *relaxed*; the result in *points*."""
    go = int(1)
    it = int(0)
    while go != 0 and it < max_iters:
        if it % 2 == 0:
            go = relax_pass(points, relaxed, row, min_cos)
        else:
            go = relax_pass(relaxed, points, row, min_cos)
        it += 1
    if it % 2 == 1:
        copy_row(relaxed, row, points, row, 0, 1)


@wp.func
def make_row(key: wp.uint64, points: wp.array2d(dtype=wp.vec2),
             relaxed: wp.array2d(dtype=wp.vec2), valid: wp.array(dtype=wp.uint8),
             lengths: wp.array(dtype=wp.float32), row: int, n_control: int, max_iters: int):
    """Track *row* keyed *key*, made whole by one thread: its points, its
    relaxation, its validity and length, bit for bit as Regen makes it."""
    generate_row(key, points, row, 0, 1, n_control, RADIUS, R_JITTER, A_JITTER)
    relax_row(points, relaxed, row, max_iters, MIN_COS)
    measure_row(points, row, valid, lengths, MIN_COS)


# -- on demand: the kernels of Regen's stages ---------------------------------

@wp.kernel
def generate_kernel(keys: wp.array(dtype=wp.uint64), mask: wp.array(dtype=wp.uint8),
                    points: wp.array2d(dtype=wp.vec2), go: wp.array(dtype=wp.int32),
                    n_control: int, radius: float, r_jitter: float, a_jitter: float):
    """Point i of a masked env's centerline, from its effective seed."""
    e, i = wp.tid()
    if mask[e] == wp.uint8(0):
        return
    points[e, i] = track_point(keys[e], i, points.shape[1], n_control, radius, r_jitter,
                               a_jitter)
    if i == 0:
        go[0] = 1  # the relaxation runs; every writer writes 1


@wp.kernel
def relax_kernel(mask: wp.array(dtype=wp.uint8), points: wp.array2d(dtype=wp.vec2),
                 relaxed: wp.array2d(dtype=wp.vec2), go: wp.array(dtype=wp.int32),
                 min_cos: float):
    """A relaxation step's first half: a masked env's point i, relaxed, into
    *relaxed*.  A track with no sharp turn is left as it is, so an env's
    track is the same whatever the other envs' tracks keep the loop going
    for."""
    e, i = wp.tid()
    if e == 0 and i == 0:
        go[0] = 0  # until settle_kernel finds a sharp turn
    if mask[e] == wp.uint8(0):
        return
    relaxed[e, i] = relaxed_point(points, e, i, min_cos)


@wp.kernel
def settle_kernel(mask: wp.array(dtype=wp.uint8), points: wp.array2d(dtype=wp.vec2),
                  relaxed: wp.array2d(dtype=wp.vec2), go: wp.array(dtype=wp.int32),
                  min_cos: float):
    """Its second half: the relaxed points become the track; the loop goes
    on while a turn is still sharp."""
    e, i = wp.tid()
    if mask[e] == wp.uint8(0):
        return
    points[e, i] = relaxed[e, i]
    if sharp_at(relaxed, e, i, min_cos):
        go[0] = 1  # every writer writes 1


@wp.kernel
def measure_kernel(mask: wp.array(dtype=wp.uint8), points: wp.array2d(dtype=wp.vec2),
                   valid: wp.array(dtype=wp.uint8), lengths: wp.array(dtype=wp.float32),
                   min_cos: float):
    """A masked env's validity and length."""
    e = wp.tid()
    if mask[e] == wp.uint8(0):
        return
    measure_row(points, e, valid, lengths, min_cos)


class Regen:
    """The on-demand regeneration of the envs of *state*: a track_gen
    Producer of Warp stages over Warp arrays (its bindings), run for the
    envs whose mask byte is set.  *advance*: each run first advances their
    epochs, as TrackProducer(advance=True) does."""

    def __init__(self, tg, twarp, state, args, advance):
        n, dev = state.n_envs, "cuda:%d" % state.device
        self.n = n
        self.arrays = {
            "mask": wp.ones(n, dtype=wp.uint8, device=dev),
            "keys": wp.zeros(n, dtype=wp.uint64, device=dev),
            **track_arrays(n, args.points, dev),
            "go": wp.zeros(1, dtype=wp.int32, device=dev),
            "loop_status": wp.zeros(2, dtype=wp.int32, device=dev),
        }
        shape = (args.control, RADIUS, R_JITTER, A_JITTER)

        def seeds(ctx):  # TrackGen's own kernels, on the stage's stream
            if advance:
                state.advance(ctx.stream, mask=ctx.binding("mask"))
            state.fill_effective(ctx.binding("keys"), ctx.stream)

        @twarp.stage(device=state.device)
        def generate(ctx):
            wp.launch(generate_kernel, (n, args.points),
                      inputs=bound(ctx, "keys", "mask", "points", "go") + list(shape))

        @twarp.stage(device=state.device)
        def relax(ctx):  # the loop's body
            for kernel in (relax_kernel, settle_kernel):
                wp.launch(kernel, (n, args.points), inputs=bound(
                    ctx, "mask", "points", "relaxed", "go") + [MIN_COS])

        @twarp.stage(device=state.device)
        def measure(ctx):
            wp.launch(measure_kernel, n,
                      inputs=bound(ctx, "mask", "points", "valid", "lengths") + [MIN_COS])

        p = self.producer = tg.exec.Producer("warp-tracks", state.device)
        bind(p, self.arrays, {
            p.add_device_stage("seeds", seeds, capture_safe=True): ("mask", "keys"),
            p.add_device_stage("generate", generate, capture_safe=True):
                ("keys", "mask", "points", "go"),
            p.add_loop_stage("relax", relax, flag="go", status="loop_status",
                             max_iters=args.max_iters, capture_safe=True):
                ("mask", "points", "relaxed"),
            p.add_device_stage("measure", measure, capture_safe=True):
                ("mask", "points", "valid", "lengths"),
        })

    def __getitem__(self, name):
        return self.arrays[name]

    def run(self, stream, policy, condition=None):
        self.producer.run(stream, policy, condition)

    def close(self):
        self.producer.close()


def track_arrays(rows, n_points, dev, prefix="", scratch=True):
    """The arrays of *rows* tracks of *n_points*, by name: their points, the
    relaxation's scratch (unless not *scratch*: the refills relax in shared
    memory), their validity and length."""
    arrays = {prefix + "points": wp.zeros((rows, n_points), dtype=wp.vec2, device=dev),
              prefix + "valid": wp.zeros(rows, dtype=wp.uint8, device=dev),
              prefix + "lengths": wp.zeros(rows, dtype=wp.float32, device=dev)}
    if scratch:
        arrays[prefix + "relaxed"] = wp.zeros((rows, n_points), dtype=wp.vec2, device=dev)
    return arrays


def bound(ctx, *names):
    """A stage's bindings, in order."""
    return [ctx.binding(name) for name in names]


def bind(producer, arrays, uses):
    """Declares the bindings each stage uses (*uses*: stage -> names), like
    *arrays*, and binds them."""
    for stage, names in uses.items():
        for name in names:
            producer.declare_binding(stage, name, like=arrays[name])
    for name, array in arrays.items():
        producer.bind(name, array)



if __name__ == "__main__":
    import sys
    print("warp_tracks.py: a module of simloop_warp.py and race_mjwarp.py, which run it", file=sys.stderr)
    sys.exit(2)
