# SPDX-License-Identifier: Apache-2.0
"""warp_tracks.py: simloop_warp.py's track generator in NVIDIA Warp kernels,
on demand or with lookahead.

An env's track depends on its effective seed (its (seed, epoch)) alone: its
control points come from a hash of it, joined linearly in polar form; a
bounded relaxation moves each point of a sharp turn to its neighbours'
midpoint until no turn is sharp; a validity test (no sharp turn left: the
relaxation converged) and its length close it.

On demand (Regen): a track_gen Producer of Warp stages regenerates the
tracks of the envs whose mask byte is set: the SeedState advances their
epochs, a kernel makes the points, a loop stage (a WHILE node) relaxes them
all together while any is sharp, a kernel tests and measures them.

With lookahead (Lookahead): each env keeps its next L tracks ready in a ring
of spare slots, made ahead from (seed, epoch + 1) ... (seed, epoch + L), so
they are the tracks on-demand generation makes, bit for bit.  An env that
ends switches to its next spare (switch_env() in the simulator's step
kernel, spare_row() in a kernel after it for the points), its epoch advanced
by one in the SeedState's own array.  The spent slots are refilled by a
Producer of two kernels, gated by a refill flag that the step sets on the
device (refill_due()): the generation of every empty slot's points, then
the relaxation iterated inside one kernel, a thread per slot, each stopping
when its track is smooth as the WHILE does for it, and the test and
measure.  No WHILE node: no iteration costs a node.  The simulator runs it
under conditional(refill), or at every step, where its kernels return at
once while the flag is 0: no conditional node at all.  Or fused: no node of
its own, the refill made by the simulator's second kernel in the step after
the one that decided it, a thread a slot (see "lookahead, fused" below).
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

# The lookahead's counts (Lookahead's "counts"): the slots spent and the envs
# left with no spare since the last refill, those envs over the run, and,
# fused, the envs that made their own track over the run.
SPENT, DRAINED, DRAINED_TOTAL, MADE_TOTAL = 0, 1, 2, 3

# The fused refill's tallies of a step (Lookahead's "tallies", one set per
# parity of the step's number): its switches, the envs it left with no
# spare, and those that took a spare (listed in "took", one list per parity,
# for the copy of their points).
F_SPENT, F_DRAINED, F_TOOK = 0, 1, 2

# Warps of the fused switch kernel at least, each copying the points of the
# envs that took a spare, one after another.
COPY_WARPS = 32

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
def relax(prev: wp.vec2, cur: wp.vec2, nxt: wp.vec2, min_cos: float):
    """A point after a relaxation step: its neighbours' midpoint where its
    turn is sharp, else itself."""
    if sharp(prev, cur, nxt, min_cos):
        return 0.5 * (prev + nxt)
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
                total += wp.length(nxt - cur)
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


# -- lookahead: the switch and the refill --------------------------------------

@wp.func
def next_epoch(e: int, seeds: wp.array(dtype=wp.uint64), epochs: wp.array(dtype=wp.uint32),
               keys: wp.array(dtype=wp.uint64), head: wp.array(dtype=wp.int32), n_spares: int):
    """Env e, which ended, moves on to its next epoch (its key with it) and
    past its next slot.  Returns that slot's row and the new key."""
    row = e * n_spares + head[e]
    epoch = epochs[e] + wp.uint32(1)  # wraps as the SeedState's advance does
    epochs[e] = epoch
    key = effective_seed(seeds[e], epoch)
    keys[e] = key
    head[e] = (head[e] + 1) % n_spares
    return row, key


@wp.func
def switch_env(e: int, seeds: wp.array(dtype=wp.uint64), epochs: wp.array(dtype=wp.uint32),
               keys: wp.array(dtype=wp.uint64), valid: wp.array(dtype=wp.uint8),
               lengths: wp.array(dtype=wp.float32), head: wp.array(dtype=wp.int32),
               ready: wp.array(dtype=wp.int32), spare_valid: wp.array(dtype=wp.uint8),
               spare_lengths: wp.array(dtype=wp.float32), counts: wp.array(dtype=wp.int32),
               n_spares: int):
    """Env e, which ended, switches to its next spare: its epoch grows by
    one, its key, validity and length are the spare's, the spare's slot is
    spent.  Its points follow in spare_row()'s kernel.  A refill runs before
    the next step whenever an env is left with no spare, so an env that ends
    always has one."""
    row, key = next_epoch(e, seeds, epochs, keys, head, n_spares)
    valid[e] = spare_valid[row]
    lengths[e] = spare_lengths[row]
    left = ready[e] - 1
    ready[e] = left
    wp.atomic_add(counts, SPENT, 1)
    if left == 0:
        wp.atomic_add(counts, DRAINED, 1)
        wp.atomic_add(counts, DRAINED_TOTAL, 1)


@wp.func
def spare_row(e: int, head: wp.array(dtype=wp.int32), n_spares: int):
    """The slot env e switched to in this step (switch_env() moved its
    head past it)."""
    return e * n_spares + (head[e] + n_spares - 1) % n_spares


@wp.func
def refill_due(counts: wp.array(dtype=wp.int32), batch: int):
    """Whether the spent slots are to be refilled now: at least *batch* of
    them, or an env has no spare left."""
    due = int(0)
    if counts[SPENT] >= batch or counts[DRAINED] > 0:
        due = 1
    return due


@wp.kernel
def refill_generate_kernel(refill: wp.array(dtype=wp.int32), seeds: wp.array(dtype=wp.uint64),
                           epochs: wp.array(dtype=wp.uint32), head: wp.array(dtype=wp.int32),
                           ready: wp.array(dtype=wp.int32), fill: wp.array(dtype=wp.int32),
                           spare_points: wp.array2d(dtype=wp.vec2), n_spares: int,
                           n_control: int, radius: float, r_jitter: float, a_jitter: float):
    """When the refill flag is set, the points of slot *row* (env row /
    n_spares) if it is empty, by LANES threads, each a point in LANES: the
    track of the env's epoch + d, d its place after the env's ready spares;
    fill[row] = d, or 0 for a slot kept.  Run on n_slots * LANES threads."""
    t = wp.tid()
    if refill[0] == 0:
        return
    row = t // LANES
    e = row // n_spares
    ahead = (row % n_spares - head[e] + n_spares) % n_spares
    d = int(0)
    if ahead >= ready[e]:
        d = ahead + 1
    lane = t % LANES
    if lane == 0:
        fill[row] = d
    if d == 0:
        return
    generate_row(effective_seed(seeds[e], epochs[e] + wp.uint32(d)), spare_points, row, lane,
                 LANES, n_control, radius, r_jitter, a_jitter)


@wp.kernel
def refill_relax_kernel(refill: wp.array(dtype=wp.int32), fill: wp.array(dtype=wp.int32),
                        ready: wp.array(dtype=wp.int32),
                        spare_points: wp.array2d(dtype=wp.vec2),
                        spare_relaxed: wp.array2d(dtype=wp.vec2),
                        spare_valid: wp.array(dtype=wp.uint8),
                        spare_lengths: wp.array(dtype=wp.float32),
                        counts: wp.array(dtype=wp.int32), n_spares: int, max_iters: int,
                        min_cos: float):
    """When the refill flag is set, a filled slot's relaxation, at most
    max_iters steps while a turn is sharp, as the WHILE runs them for it
    (the first step always: a smooth track is left as it is), ping-ponging
    between its points and its scratch; then its validity and length; every
    env's spares ready again."""
    row = wp.tid()
    if refill[0] == 0:
        return
    if row == 0:
        counts[SPENT] = 0
        counts[DRAINED] = 0
    if row % n_spares == 0:
        ready[row // n_spares] = n_spares
    if fill[row] == 0:
        return
    relax_row(spare_points, spare_relaxed, row, max_iters, min_cos)
    measure_row(spare_points, row, spare_valid, spare_lengths, min_cos)


# -- lookahead, fused: the refill inside the step's second kernel --------------
#
# With the refill fused (simloop_warp.py --refill fused) it has no node of its
# own: the step's second kernel, beside its copy of the switched envs'
# points, makes the refill that the step before decided, a thread per slot
# making an empty slot's track whole.  No thread reads what another thread of
# the same kernel writes: the flags and tallies are kept per parity of the
# step's number ("phase", which the first kernel leaves), and the ready
# counts a refill leaves are applied by the next step's first kernel
# ("refilled", -1 for none).  The refill leaves alone the slot an env took in
# this very step (its copy reads it now): the next refill makes it.  An env
# that ends with no spare left (its refill still to come) makes its next
# track in its own thread of the first kernel, as Regen makes it: its tracks
# never depend on when a refill came, and a step waits for that thread.

@wp.func
def apply_refilled(e: int, ready: wp.array(dtype=wp.int32), refilled: wp.array(dtype=wp.int32)):
    """Env e's ready spares as the last refill left them, if one ran."""
    r = refilled[e]
    if r >= 0:
        ready[e] = r
        refilled[e] = -1


@wp.func
def switch_fused(e: int, p: int, seeds: wp.array(dtype=wp.uint64),
                 epochs: wp.array(dtype=wp.uint32), keys: wp.array(dtype=wp.uint64),
                 valid: wp.array(dtype=wp.uint8), lengths: wp.array(dtype=wp.float32),
                 points: wp.array2d(dtype=wp.vec2), relaxed: wp.array2d(dtype=wp.vec2),
                 head: wp.array(dtype=wp.int32), ready: wp.array(dtype=wp.int32),
                 spare_valid: wp.array(dtype=wp.uint8), spare_lengths: wp.array(dtype=wp.float32),
                 tallies: wp.array(dtype=wp.int32), took: wp.array(dtype=wp.int32),
                 counts: wp.array(dtype=wp.int32), n_spares: int, n_control: int,
                 max_iters: int):
    """Env e, which ended, switches to its next spare as switch_env() does,
    tallied in parity p's tallies and, for the copy of its points, listed in
    parity p's list (*took*); with none left, it makes its next track
    itself.  Returns 1 when it did."""
    row, key = next_epoch(e, seeds, epochs, keys, head, n_spares)
    left = ready[e]
    made = int(0)
    wp.atomic_add(tallies, p * 3 + F_SPENT, 1)
    if left > 0:
        valid[e] = spare_valid[row]
        lengths[e] = spare_lengths[row]
        left = left - 1
        ready[e] = left
        took[p * seeds.shape[0] + wp.atomic_add(tallies, p * 3 + F_TOOK, 1)] = e
    else:
        make_row(key, points, relaxed, valid, lengths, e, n_control, max_iters)
        made = 1
        wp.atomic_add(counts, MADE_TOTAL, 1)
    if left == 0:
        wp.atomic_add(tallies, p * 3 + F_DRAINED, 1)
        wp.atomic_add(counts, DRAINED_TOTAL, 1)
    return made


@wp.func
def fused_due(p: int, running: int, tallies: wp.array(dtype=wp.int32),
              acc: wp.array(dtype=wp.int32), n_spares: int, batch: int):
    """One thread: whether the next step makes a refill, from the spent slots
    and the envs with no spare (acc) after this step's switches (parity p's
    tallies) and, when one runs in this step (*running*), its refill: it
    leaves empty only the slots taken in this step.  Clears the next step's
    tallies."""
    spent = tallies[p * 3 + F_SPENT]
    if running != 0:
        taken = tallies[p * 3 + F_TOOK]
        acc[0] = taken
        acc[1] = 0
        if n_spares == 1:  # a slot taken was its env's only one
            acc[1] = taken
    else:
        acc[0] = acc[0] + spent
        acc[1] = acc[1] + tallies[p * 3 + F_DRAINED]
    for k in range(3):
        tallies[(1 - p) * 3 + k] = 0
    due = int(0)
    if acc[0] >= batch or acc[1] > 0:
        due = 1
    return due


@wp.func
def copy_taken(t: int, p: int, tallies: wp.array(dtype=wp.int32), took: wp.array(dtype=wp.int32),
               head: wp.array(dtype=wp.int32), spare_points: wp.array2d(dtype=wp.vec2),
               points: wp.array2d(dtype=wp.vec2), n_spares: int, n_warps: int):
    """Thread t's part of the copy of the points of the envs that took a
    spare in this step (parity p's list): a warp an env, LANES points at a
    time, the *n_warps* warps of the kernel taking the list in turn."""
    n = points.shape[0]
    j = t // LANES
    while j < tallies[p * 3 + F_TOOK]:
        e = took[p * n + j]
        copy_row(spare_points, spare_row(e, head, n_spares), points, e, t % LANES, LANES)
        j += n_warps


@wp.func
def refill_fused_slot(row: int, seeds: wp.array(dtype=wp.uint64),
                      epochs: wp.array(dtype=wp.uint32), mask: wp.array(dtype=wp.uint8),
                      made: wp.array(dtype=wp.uint8), head: wp.array(dtype=wp.int32),
                      ready: wp.array(dtype=wp.int32), refilled: wp.array(dtype=wp.int32),
                      spare_points: wp.array2d(dtype=wp.vec2),
                      spare_relaxed: wp.array2d(dtype=wp.vec2),
                      spare_valid: wp.array(dtype=wp.uint8),
                      spare_lengths: wp.array(dtype=wp.float32), n_spares: int,
                      n_control: int, max_iters: int):
    """Slot *row*'s part of a fused refill: the track of its env's epoch + d,
    d its place after the env's ready spares, if it is empty and was not
    taken in this step; the env's ready count after, by its first slot."""
    e = row // n_spares
    took = int(0)  # a spare in this step: its copy reads the slot now
    if mask[e] != wp.uint8(0) and made[e] == wp.uint8(0):
        took = 1
    if row % n_spares == 0:
        refilled[e] = n_spares - took
    ahead = (row % n_spares - head[e] + n_spares) % n_spares
    if ahead < ready[e] or (took != 0 and ahead == n_spares - 1):
        return
    make_row(effective_seed(seeds[e], epochs[e] + wp.uint32(ahead + 1)), spare_points,
             spare_relaxed, spare_valid, spare_lengths, row, n_control, max_iters)


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


# The arrays of the refill's stages, in their kernels' order.
REFILL_USES = {
    "generate": ("refill", "seeds", "epochs", "head", "ready", "fill", "spare_points"),
    "relax": ("refill", "fill", "ready", "spare_points", "spare_relaxed", "spare_valid",
              "spare_lengths", "counts"),
}


def refill_launch(stage, array, slots, args):
    """The launch of the refill's stage *stage* ("generate" or "relax") as
    (kernel, dim, inputs), its arrays array(name) (Lookahead's, by name),
    for *slots* spares per env and the track options of *args*."""
    inputs = [array(name) for name in REFILL_USES[stage]]
    rows = array("fill").shape[0]  # the slots, a row each
    if stage == "generate":
        return (refill_generate_kernel, rows * LANES,
                inputs + [slots, args.control, RADIUS, R_JITTER, A_JITTER])
    return refill_relax_kernel, rows, inputs + [slots, args.max_iters, MIN_COS]


class Lookahead:
    """The spare tracks of the envs of *state*: a ring of *args.lookahead*
    slots per env (row e * L + r of the spare arrays; "head" the env's next
    spare, "ready" how many are ready), the "counts" a switch leaves for the
    refill's decision, and the refill: a track_gen Producer of Warp stages
    that fills every empty slot when self["refill"] is set (the flag the
    simulator's step sets with refill_due()), in the state's own seed and
    epoch arrays (valid while the state is).  With the state of a fused
    refill too (fused_arrays()): the producer makes the first spares, the
    step's kernels the rest."""

    def __init__(self, tg, twarp, state, args):
        n, slots, dev = state.n_envs, args.lookahead, "cuda:%d" % state.device
        self.n, self.slots = n, slots
        rows = n * slots
        self.arrays = {
            "seeds": wp.array(ptr=state.seeds_ptr, dtype=wp.uint64, shape=(n,), device=dev),
            "epochs": wp.array(ptr=state.epochs_ptr, dtype=wp.uint32, shape=(n,), device=dev),
            "head": wp.zeros(n, dtype=wp.int32, device=dev),
            "ready": wp.zeros(n, dtype=wp.int32, device=dev),
            "fill": wp.zeros(rows, dtype=wp.int32, device=dev),
            **track_arrays(rows, args.points, dev, "spare_"),
            "counts": wp.zeros(4, dtype=wp.int32, device=dev),
            "refill": wp.zeros(1, dtype=wp.int32, device=dev),
            **fused_arrays(n, dev),
        }

        def stage(name):
            @twarp.stage(device=state.device)
            def run(ctx):
                kernel, dim, inputs = refill_launch(name, ctx.binding, slots, args)
                wp.launch(kernel, dim, inputs=inputs)
            return run

        p = self.producer = tg.exec.Producer("warp-refill", state.device)
        bind(p, self.arrays, {p.add_device_stage(name, stage(name), capture_safe=True): uses
                              for name, uses in REFILL_USES.items()})

    def __getitem__(self, name):
        return self.arrays[name]

    def reset(self, stream, policy):
        """Every env's ring empty, then filled: its next L tracks made."""
        for name in ("head", "ready", "counts"):
            self.arrays[name].zero_()
        reset_fused(self.arrays)
        self.arrays["refill"].fill_(1)
        self.producer.run(stream, policy)

    def run(self, stream, policy, condition=None):
        self.producer.run(stream, policy, condition)

    def close(self):
        self.producer.close()


def fused_arrays(n, dev):
    """The state of a fused refill for *n* envs, as reset_fused() leaves it."""
    arrays = {"refilled": wp.zeros(n, dtype=wp.int32, device=dev),
              "made": wp.zeros(n, dtype=wp.uint8, device=dev),
              "tallies": wp.zeros(6, dtype=wp.int32, device=dev),
              "took": wp.zeros(2 * n, dtype=wp.int32, device=dev),
              "acc": wp.zeros(2, dtype=wp.int32, device=dev),
              "flags": wp.zeros(2, dtype=wp.int32, device=dev),
              "phase": wp.zeros(1, dtype=wp.int32, device=dev)}
    reset_fused(arrays)
    return arrays


def fused_threads(n, slots):
    """The fused switch kernel's threads for *n* envs of *slots* spares: one
    a slot, COPY_WARPS warps at least, whole warps."""
    return -(-max(n * slots, COPY_WARPS * LANES) // LANES) * LANES


def reset_fused(arrays):
    """No refill decided or left to apply, no tally."""
    for name in ("made", "tallies", "acc", "flags", "phase"):
        arrays[name].zero_()
    arrays["refilled"].fill_(-1)


def track_arrays(rows, n_points, dev, prefix=""):
    """The arrays of *rows* tracks of *n_points*, by name: their points, the
    relaxation's scratch, their validity and length."""
    return {prefix + "points": wp.zeros((rows, n_points), dtype=wp.vec2, device=dev),
            prefix + "relaxed": wp.zeros((rows, n_points), dtype=wp.vec2, device=dev),
            prefix + "valid": wp.zeros(rows, dtype=wp.uint8, device=dev),
            prefix + "lengths": wp.zeros(rows, dtype=wp.float32, device=dev)}


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
