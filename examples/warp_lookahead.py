# SPDX-License-Identifier: Apache-2.0
"""warp_lookahead.py: the lookahead of warp_tracks.py's generator
(simloop_warp.py's tracks) in NVIDIA Warp kernels.

With lookahead (Lookahead): each env keeps its next L tracks ready in a ring
of spare slots, made ahead from (seed, epoch + 1) ... (seed, epoch + L), so
they are the tracks on-demand generation makes, bit for bit.  An env that
ends switches to its next spare (switch_env() in the simulator's step
kernel, spare_row() in a kernel after it for the points), its epoch advanced
by one in the SeedState's own array.  The spent slots are refilled by a
Producer of two kernels, gated by a refill flag that the step sets on the
device (refill_due()): the generation of every empty slot's points, then
the relaxation iterated inside one kernel, a warp per slot (a tiled kernel:
its lanes relax the track's points together, pass by pass), each slot
stopping when its track is smooth as the WHILE does for it, and the test
and measure.  No WHILE node: no iteration costs a node.  The simulator runs it
under conditional(refill), or at every step, where its kernels return at
once while the flag is 0: no conditional node at all.  Or fused: no node of
its own, the refill made by the simulator's second kernel in the step after
the one that decided it, a warp 32 slots, the tracks its lanes' slots need
made one after another with the same tiled relaxation (see "lookahead,
fused" below).
"""
import functools

import warp as wp

# Warp resolves a kernel's functions and constants in its own module's
# globals: those of warp_tracks.py that this module's kernels and functions
# call, by name.
from warp_tracks import (A_JITTER, LANES, MIN_COS, R_JITTER, RADIUS, bind, copy_row,
                         effective_seed, generate_row, make_row, midpoint, segment_length,
                         sharp, track_arrays, track_point)

# As warp_tracks.py's, for the same reason: no gradients (half the
# compiling), and no multiply-add contraction: a track is made by different
# kernels (on demand, a refill, the fused step), and the compiler contracts a
# function's products differently in each, so that one rounding could differ
# and the same (seed, epoch) give another track.  Each product and sum
# rounded on its own are the same everywhere.  warp_tracks.py's functions
# compiled into this module's kernels round as they do there.  The refill's
# tiled kernels, made for a point count (refill_relax_kernel(), and
# warp_step.switch_fused_kernel() with the refill fused), each have a module
# of their own, with the same options.
MODULE_OPTIONS = {"enable_backward": False, "fuse_fp": False}
wp.set_module_options(MODULE_OPTIONS)

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


# -- lookahead: the switch and the refill --------------------------------------

@wp.func
def env_words(e: int, seeds: wp.array(dtype=wp.uint64), epochs: wp.array(dtype=wp.uint32),
              head: wp.array(dtype=wp.int32), ready: wp.array(dtype=wp.int32)):
    """Env e's seed, epoch, head and ready spares, which its switch reads:
    loaded by every env's thread with the step's first loads, before the
    agent's stores, so that an env that ends does not wait for them then
    (warp_step.py's step kernels)."""
    return seeds[e], epochs[e], head[e], ready[e]


@wp.func
def next_epoch(e: int, seed: wp.uint64, epoch: wp.uint32, h: int,
               epochs: wp.array(dtype=wp.uint32), keys: wp.array(dtype=wp.uint64),
               head: wp.array(dtype=wp.int32), n_spares: int):
    """Env e, which ended (its *seed*, *epoch* and head *h* from
    env_words()), moves on to its next epoch (its key with it) and past its
    next slot.  Returns that slot's row and the new key."""
    next_ = epoch + wp.uint32(1)  # wraps as the SeedState's advance does
    epochs[e] = next_
    key = effective_seed(seed, next_)
    keys[e] = key
    head[e] = (h + 1) % n_spares
    return e * n_spares + h, key


@wp.func
def switch_env(e: int, seed: wp.uint64, epoch: wp.uint32, h: int, left: int,
               epochs: wp.array(dtype=wp.uint32), keys: wp.array(dtype=wp.uint64),
               valid: wp.array(dtype=wp.uint8), lengths: wp.array(dtype=wp.float32),
               head: wp.array(dtype=wp.int32), ready: wp.array(dtype=wp.int32),
               spare_valid: wp.array(dtype=wp.uint8),
               spare_lengths: wp.array(dtype=wp.float32), counts: wp.array(dtype=wp.int32),
               n_spares: int):
    """Env e, which ended (env_words(): *seed*, *epoch*, head *h*, *left*
    spares ready), switches to its next spare: its epoch grows by one, its
    key, validity and length are the spare's, the spare's slot is spent.
    Its points follow in spare_row()'s kernel.  A refill runs before the
    next step whenever an env is left with no spare, so an env that ends
    always has one."""
    row = e * n_spares + h
    spare_ok = spare_valid[row]  # both loads before next_epoch()'s stores
    spare_length = spare_lengths[row]
    next_epoch(e, seed, epoch, h, epochs, keys, head, n_spares)
    valid[e] = spare_ok
    lengths[e] = spare_length
    left = left - 1
    ready[e] = left
    wp.atomic_add(counts, SPENT, 1)
    if left == 0:
        wp.atomic_add(counts, DRAINED, 1)
        wp.atomic_add(counts, DRAINED_TOTAL, 1)


@wp.func
def spare_row(e: int, h: int, n_spares: int):
    """The slot env e switched to in this step, from its head *h*, which
    switch_env() moved past it."""
    return e * n_spares + (h + n_spares - 1) % n_spares


@wp.func
def refill_due(spent: int, drained: int, batch: int):
    """Whether the spent slots are to be refilled now: at least *batch* of
    them spent since the last refill, or an env left with no spare
    (*drained* > 0); the counts' SPENT and DRAINED, or the fused refill's
    accumulated ones (fused_due())."""
    due = int(0)
    if spent >= batch or drained > 0:
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


@wp.func
def sharp_flag(prev: wp.vec2, cur: wp.vec2, nxt: wp.vec2, min_cos: float):
    """1 where the turn at cur is sharp (relax()'s test), else 0."""
    return wp.where(sharp(prev, cur, nxt, min_cos), 1, 0)


@wp.func
def relaxed_flagged(turn: int, prev: wp.vec2, cur: wp.vec2, nxt: wp.vec2):
    """relax() of a point whose turn's sharp_flag() is *turn*."""
    if turn != 0:
        return midpoint(prev, nxt)
    return cur


@functools.cache
def relax_track(n_points):
    """The refill's relaxation of a track of *n_points* (a tile's shape is a
    constant of its code), by a block of LANES lanes together, every lane
    calling it: the track *start* (a tile of its points) relaxed, at most
    max_iters steps while a turn is sharp, as the WHILE runs them for it,
    into row *row* of spare_points; then its validity and length, stored
    by lane 0."""
    last, first = n_points - 1, 1 - n_points  # tile_arange() takes constants

    @wp.func(module="unique")
    def relax_track(start: wp.tile[wp.vec2, n_points], row: int, lane: int,
                    spare_points: wp.array2d(dtype=wp.vec2),
                    spare_valid: wp.array(dtype=wp.uint8),
                    spare_lengths: wp.array(dtype=wp.float32), max_iters: int,
                    min_cos: float):
        # The track ping-pongs between the two rows of *both*: a step reads
        # row cur and writes the other, so no lane writes a point that
        # another may still read in the same step.  The one barrier the
        # steps need is the one tile_assign() of a register tile ends with
        # (tile.h: WP_TILE_SYNC(), __syncthreads() on a GPU): its writes
        # seen by every lane before the next step reads them, and every
        # read of this step made before the next step writes its row.  No
        # other: tile_max() of one warp is shuffles only on a GPU.
        # The first tile_assign() into *both* begins with no barrier either;
        # the tiles written before it do: a shared tile assigned a register
        # tile (tile_arange() into *before*) waits for every lane first
        # (tile.h's assign(), once the tile is initialized, as a tile is
        # when allocated).  So a block that makes one track after another
        # (the fused refill) writes none of this track's shared memory,
        # which held the last one's, before every lane is done reading it.
        # test_warp_ptx.py checks these barriers in both kernels' sm_90 PTX.
        #
        # Point i's neighbours, i - 1 and i + 1 - n: an index below 0 counts
        # from the end, so i + 1, and 0 after the last.
        before = wp.tile_arange(-1, last, 1, dtype=int, storage="shared")
        after = wp.tile_arange(first, 1, 1, dtype=int, storage="shared")
        both = wp.tile_empty(shape=(2, n_points), dtype=wp.vec2, storage="shared")
        wp.tile_assign(wp.tile_view(both, offset=(0,)), start)
        # A step replaces each point by relax() of the old ones.  A track is
        # tested before each step (a step on a smooth track changes nothing,
        # so the WHILE's first step is skipped then) and, unless a test
        # stopped it, once more after the last (none allowed: only that
        # one).  range(max_iters): no bound overflows.
        cur = int(0)
        go = int(1)
        for _ in range(max_iters):
            src = wp.tile_view(both, offset=(cur,))
            prev = src[before]
            nxt = src[after]
            turns = wp.tile_map(sharp_flag, prev, src, nxt, min_cos)
            go = wp.tile_extract(wp.tile_max(turns), 0)
            if go == 0:
                break
            wp.tile_assign(wp.tile_view(both, offset=(1 - cur,)),
                           wp.tile_map(relaxed_flagged, turns, prev, src, nxt))
            cur = 1 - cur
        pts = wp.tile_view(both, offset=(cur,))
        if go != 0:  # the same in every lane: the block takes this branch whole
            go = wp.tile_extract(wp.tile_max(
                wp.tile_map(sharp_flag, pts[before], pts, pts[after], min_cos)), 0)
        wp.tile_store(spare_points[row], pts)
        # Valid: no sharp turn left (the last test's); the length summed in
        # measure_row()'s order, one segment after another (a tree's sum
        # would round otherwise).  Every lane makes the same sum and lane 0
        # stores it: no tile operation under a branch that some lanes do not
        # take, whatever storage (and barriers) tile_extract() comes with.
        segments = wp.tile_zeros(shape=n_points, dtype=float, storage="shared")
        wp.tile_assign(segments, wp.tile_map(segment_length, pts, pts[after]))
        total = float(0.0)
        for i in range(n_points):
            total += wp.tile_extract(segments, i)
        if lane == 0:
            spare_lengths[row] = total
            spare_valid[row] = wp.uint8(1 - go)

    return relax_track


@functools.cache
def refill_relax_kernel(n_points):
    """The refill's relaxation kernel for tracks of *n_points*, launched
    tiled, a block a slot: when the refill flag is set, a filled slot's
    relaxation, validity and length (relax_track()); every env's spares
    ready again."""
    relax = relax_track(n_points)

    @wp.kernel(module="unique", module_options=MODULE_OPTIONS)
    def refill_relax_kernel(refill: wp.array(dtype=wp.int32), fill: wp.array(dtype=wp.int32),
                            ready: wp.array(dtype=wp.int32),
                            spare_points: wp.array2d(dtype=wp.vec2),
                            spare_valid: wp.array(dtype=wp.uint8),
                            spare_lengths: wp.array(dtype=wp.float32),
                            counts: wp.array(dtype=wp.int32), n_spares: int, max_iters: int,
                            min_cos: float):
        row, lane = wp.tid()
        if refill[0] == 0:
            return  # the whole block: the tile operations below need all its lanes
        if lane == 0:
            if row == 0:
                counts[SPENT] = 0
                counts[DRAINED] = 0
            if row % n_spares == 0:
                ready[row // n_spares] = n_spares
        if fill[row] == 0:
            return
        relax(wp.tile_load(spare_points[row], shape=n_points), row, lane, spare_points,
              spare_valid, spare_lengths, max_iters, min_cos)

    return refill_relax_kernel


# -- lookahead, fused: the refill inside the step's second kernel --------------
#
# With the refill fused (simloop_warp.py --refill fused) it has no node of its
# own: the step's second kernel (tiled, a warp a block), beside its copy of
# the switched envs' points, makes the refill that the step before decided:
# each lane decides for a slot of its own whether it is to be made, and its
# block makes its lanes' tracks one after another, all its lanes together,
# each track's points generated into a tile and relaxed, tested and
# measured by relax_track(), the conditional refill's own.  Beyond the tiles
# a block's lanes share, no thread reads what another thread of the same
# kernel writes: the flags and tallies are kept per parity of the step's
# number ("phase", which the first kernel leaves), and the ready counts a
# refill leaves are applied by the next step's first kernel ("refilled", -1
# for none).  The refill leaves alone the slot an env took in
# this very step (its copy reads it now): the next refill makes it.  An env
# that ends with no spare left (its refill still to come) makes its next
# track in its own thread of the first kernel, as Regen makes it: its tracks
# never depend on when a refill came, and a step waits for that thread.

@wp.func
def apply_refilled(e: int, r: int, left: int, ready: wp.array(dtype=wp.int32),
                   refilled: wp.array(dtype=wp.int32)):
    """Env e's ready spares as the last refill left them (*r*, its
    "refilled" word, loaded with the step's first loads), if one ran, else
    *left* (its ready count, env_words()); returns them."""
    if r >= 0:
        ready[e] = r
        refilled[e] = -1
        return r
    return left


@wp.func
def switch_fused(e: int, p: int, seed: wp.uint64, epoch: wp.uint32, h: int, left: int,
                 epochs: wp.array(dtype=wp.uint32), keys: wp.array(dtype=wp.uint64),
                 valid: wp.array(dtype=wp.uint8), lengths: wp.array(dtype=wp.float32),
                 points: wp.array2d(dtype=wp.vec2), relaxed: wp.array2d(dtype=wp.vec2),
                 head: wp.array(dtype=wp.int32), ready: wp.array(dtype=wp.int32),
                 spare_valid: wp.array(dtype=wp.uint8), spare_lengths: wp.array(dtype=wp.float32),
                 tallies: wp.array(dtype=wp.int32), took: wp.array(dtype=wp.int32),
                 counts: wp.array(dtype=wp.int32), n_spares: int, n_control: int,
                 max_iters: int):
    """Env e, which ended (env_words(), its ready count as apply_refilled()
    left it), switches to its next spare as switch_env() does, tallied in
    parity p's tallies and, for the copy of its points, its slot's row
    listed in parity p's list (*took*); with none left, it makes its next
    track itself.  Returns 1 when it did."""
    row, key = next_epoch(e, seed, epoch, h, epochs, keys, head, n_spares)
    made = int(0)
    wp.atomic_add(tallies, p * 3 + F_SPENT, 1)
    if left > 0:
        # The list's place and the spare's words, all in flight at once.
        at = wp.atomic_add(tallies, p * 3 + F_TOOK, 1)
        spare_ok = spare_valid[row]
        spare_length = spare_lengths[row]
        valid[e] = spare_ok
        lengths[e] = spare_length
        left = left - 1
        ready[e] = left
        took[p * keys.shape[0] + at] = row
    else:
        make_row(key, points, relaxed, valid, lengths, e, n_control, max_iters)
        made = 1
        wp.atomic_add(counts, MADE_TOTAL, 1)
    if left == 0:
        wp.atomic_add(tallies, p * 3 + F_DRAINED, 1)
        wp.atomic_add(counts, DRAINED_TOTAL, 1)
    return made


@wp.func
def fused_due(p: int, f0: int, f1: int, tallies: wp.array(dtype=wp.int32),
              acc: wp.array(dtype=wp.int32), n_spares: int, batch: int):
    """One thread: whether the next step makes a refill, from the spent slots
    and the envs with no spare (acc) after this step's switches (parity p's
    tallies) and, when one runs in this step (flags[1 - p]: *f0*, *f1*), its
    refill: it leaves empty only the slots taken in this step.  Clears the
    next step's tallies.  Both parities' words are loaded and selected by p,
    with no branch: a load used on one branch only would be sunk into it,
    after the round trip that decides the branch."""
    spent = wp.where(p == 0, tallies[F_SPENT], tallies[3 + F_SPENT])
    drained = wp.where(p == 0, tallies[F_DRAINED], tallies[3 + F_DRAINED])
    taken = wp.where(p == 0, tallies[F_TOOK], tallies[3 + F_TOOK])
    running = wp.where(p == 0, f1, f0)
    a0 = wp.where(running != 0, taken, acc[0] + spent)
    # A slot taken was its env's only one, with one slot.
    a1 = wp.where(running != 0, wp.where(n_spares == 1, taken, 0), acc[1] + drained)
    acc[0] = a0
    acc[1] = a1
    for k in range(3):
        tallies[(1 - p) * 3 + k] = 0
    return refill_due(a0, a1, batch)


@wp.func
def copy_taken(t: int, p: int, n_taken: int, took: wp.array(dtype=wp.int32),
               spare_points: wp.array2d(dtype=wp.vec2), points: wp.array2d(dtype=wp.vec2),
               n_spares: int, n_warps: int):
    """Thread t's part of the copy of the points of the *n_taken* slots
    taken in this step (parity p's list, their rows), each into its env's
    track: a warp a slot, LANES points at a time, the *n_warps* warps of the
    kernel taking the list in turn."""
    n = points.shape[0]
    j = t // LANES
    while j < n_taken:
        row = took[p * n + j]
        copy_row(spare_points, row, points, row // n_spares, t % LANES, LANES)
        j += n_warps


@wp.func
def refill_fused_slot(row: int, seeds: wp.array(dtype=wp.uint64),
                      epochs: wp.array(dtype=wp.uint32), mask: wp.array(dtype=wp.uint8),
                      made: wp.array(dtype=wp.uint8), head: wp.array(dtype=wp.int32),
                      ready: wp.array(dtype=wp.int32), refilled: wp.array(dtype=wp.int32),
                      n_rows: int, n_spares: int):
    """Slot *row*'s part of a fused refill, decided by its own lane: its
    track is the one of its env's epoch + d, d its place after the env's
    ready spares, if it is empty and was not taken in this step; the env's
    ready count after, by its first slot.  Returns 1 and that track's key
    when its track is to be made, else 0 (and no slot past the last:
    *n_rows*)."""
    if row >= n_rows:
        return 0, wp.uint64(0)
    e = row // n_spares
    took = int(0)  # a spare in this step: its copy reads the slot now
    if mask[e] != wp.uint8(0) and made[e] == wp.uint8(0):
        took = 1
    if row % n_spares == 0:
        refilled[e] = n_spares - took
    ahead = (row % n_spares - head[e] + n_spares) % n_spares
    if ahead < ready[e] or (took != 0 and ahead == n_spares - 1):
        return 0, wp.uint64(0)
    return 1, effective_seed(seeds[e], epochs[e] + wp.uint32(ahead + 1))


@wp.func
def generated_point(i: int, key: wp.uint64, n: int, n_control: int):
    """Point i of n of the track keyed *key*, as generate_row() makes it
    (tile_map() takes the index first)."""
    return track_point(key, i, n, n_control, RADIUS, R_JITTER, A_JITTER)


@functools.cache
def refill_fused_block(n_points):
    """The fused refill's part of a block of the switch kernel
    (warp_step.switch_fused_kernel(), launched tiled, LANES lanes a block),
    for tracks of *n_points*, every lane of the block calling it."""
    relax = relax_track(n_points)

    @wp.func(module="unique")
    def refill_fused_block(block: int, lane: int, seeds: wp.array(dtype=wp.uint64),
                           epochs: wp.array(dtype=wp.uint32), mask: wp.array(dtype=wp.uint8),
                           made: wp.array(dtype=wp.uint8), head: wp.array(dtype=wp.int32),
                           ready: wp.array(dtype=wp.int32),
                           refilled: wp.array(dtype=wp.int32),
                           spare_points: wp.array2d(dtype=wp.vec2),
                           spare_valid: wp.array(dtype=wp.uint8),
                           spare_lengths: wp.array(dtype=wp.float32), n_spares: int,
                           n_control: int, max_iters: int):
        # Each lane decides for its slot (row block * LANES + lane); then
        # the block makes its lanes' tracks one after another, every lane
        # taking part in each (the same tile operations in every lane, a
        # branch on a value of the whole block's): its points generated
        # straight into a tile, then relax_track(), the conditional
        # refill's own.
        need, key = refill_fused_slot(block * LANES + lane, seeds, epochs, mask, made, head,
                                      ready, refilled, spare_points.shape[0], n_spares)
        needs = wp.tile(need)
        keys = wp.tile(key)
        for i in range(LANES):
            if wp.tile_extract(needs, i) != 0:
                start = wp.tile_map(generated_point, wp.tile_arange(n_points, dtype=int),
                                    wp.tile_extract(keys, i), n_points, n_control)
                relax(start, block * LANES + i, lane, spare_points, spare_valid,
                      spare_lengths, max_iters, MIN_COS)

    return refill_fused_block


# The arrays of the refill's stages, in their kernels' order.
REFILL_USES = {
    "generate": ("refill", "seeds", "epochs", "head", "ready", "fill", "spare_points"),
    "relax": ("refill", "fill", "ready", "spare_points", "spare_valid", "spare_lengths",
              "counts"),
}


def launch_refill(stage, array, slots, args, **where):
    """Launches the refill's stage *stage* ("generate" or "relax"), its
    arrays array(name) (Lookahead's, by name), for *slots* spares per env
    and the track options of *args*; *where*: wp.launch()'s device or
    stream, if any."""
    inputs = [array(name) for name in REFILL_USES[stage]]
    rows, n_points = array("spare_points").shape  # the slots, a row each
    if stage == "generate":
        wp.launch(refill_generate_kernel, rows * LANES,
                  inputs=inputs + [slots, args.control, RADIUS, R_JITTER, A_JITTER], **where)
    else:  # a warp a slot
        wp.launch_tiled(refill_relax_kernel(n_points), dim=rows, block_dim=LANES,
                        inputs=inputs + [slots, args.max_iters, MIN_COS], **where)


# Static shared memory that Warp's tile kernels keep beside their tiles (128
# bytes on sm_90 with Warp 1.19, by ptxas), with a margin.
STATIC_SMEM = 1024


def relax_smem_bytes(n_points, fused=False):
    """The dynamic shared memory of refill_relax_kernel(n_points), as Warp
    counts it: the track's two rows of points, its neighbours' indices and
    its segments' lengths, each tile 16-byte aligned, and tile_max()'s
    two results (the steps' test and the last one), all relax_track()'s;
    *fused*: of warp_step.switch_fused_kernel(n_points), which keeps its
    lanes' flags and keys beside them (refill_fused_block())."""
    def tile(size):
        return -(-size // 16) * 16
    smem = tile(2 * 8 * n_points) + 3 * tile(4 * n_points) + 2 * 16
    if fused:
        smem += tile(4 * LANES) + tile(8 * LANES)
    return smem


def max_refill_points(max_smem, fused=False):
    """The most points a track of the refill (*fused* or not) may have on a
    device of *max_smem* bytes of shared memory a block (its opt-in
    maximum)."""
    n = max(0, (max_smem - STATIC_SMEM) // 28)  # about 28 bytes a point
    while n > 0 and relax_smem_bytes(n, fused) + STATIC_SMEM > max_smem:
        n -= 1
    return n


def refill_points_error(n_points, device, fused=False):
    """Why the refill's relaxation (refill_relax_kernel(), and with *fused*
    the fused switch kernel too) cannot take tracks of *n_points* on
    *device* (a block's shared memory holds the track), or None."""
    d = wp.get_device(device)
    limit = max_refill_points(d.max_shared_memory_per_block, fused)
    if n_points <= limit:
        return None
    return ("--points %d: with lookahead, the refill relaxes a track in a block's shared "
            "memory, at most %d points a track on %s (%d bytes a block)%s; use --points %d "
            "or fewer, or --lookahead 0" % (n_points, limit, d.name,
                                            d.max_shared_memory_per_block,
                                            ", the refill fused" if fused else "", limit))


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
        why = refill_points_error(args.points, dev, args.refill == "fused")
        if why:
            raise ValueError(why)
        self.n, self.slots = n, slots
        rows = n * slots
        self.arrays = {
            "seeds": wp.array(ptr=state.seeds_ptr, dtype=wp.uint64, shape=(n,), device=dev),
            "epochs": wp.array(ptr=state.epochs_ptr, dtype=wp.uint32, shape=(n,), device=dev),
            "head": wp.zeros(n, dtype=wp.int32, device=dev),
            "ready": wp.zeros(n, dtype=wp.int32, device=dev),
            "fill": wp.zeros(rows, dtype=wp.int32, device=dev),
            **track_arrays(rows, args.points, dev, "spare_", scratch=False),
            "counts": wp.zeros(4, dtype=wp.int32, device=dev),
            "refill": wp.zeros(1, dtype=wp.int32, device=dev),
            **fused_arrays(n, dev),
        }

        def stage(name):
            @twarp.stage(device=state.device)
            def run(ctx):
                launch_refill(name, ctx.binding, slots, args)
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



if __name__ == "__main__":
    import sys
    print("warp_lookahead.py: a module of simloop_warp.py, which run it", file=sys.stderr)
    sys.exit(2)
