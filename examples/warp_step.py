# SPDX-License-Identifier: Apache-2.0
"""warp_step.py: simloop_warp.py's step in NVIDIA Warp kernels: the agents'
move, the episodes' ends and the step's tally, and the switch of an ended
env to its next track (warp_lookahead.py's spares) inside the step's own
kernels, or with the refill fused into them.

move() is simloop.py's agent step: a noisy speed drawn from a hash of the
env's effective seed (its track's (seed, epoch)), its global index and the
step number; an episode ends after a lap, a crash or at once on an invalid
track.  On demand, step_kernel marks the ended envs and tally_kernel sets
the any-done flag; with lookahead, step_switch_kernel switches an ended env
to its next spare and switch_kernel copies its points and decides the
refill; with the refill fused, step_fused_kernel and switch_fused_kernel
make it too (the latter tiled, made for the tracks' point count, as
warp_lookahead.py's refill relaxation is).  start_kernel puts an agent at
its start.  step_launches() gives a step's launches and launch() launches
them, for the simulator (simloop_warp.py's Sim) and the CPU tests
(test_warp_tracks) alike.
"""
import functools

import warp as wp

# Warp resolves a kernel's functions and constants in its own module's
# globals: those of warp_tracks.py and warp_lookahead.py that this module's
# kernels call, by name.
import warp_lookahead as wl
from warp_lookahead import (DRAINED, F_TOOK, SPENT, apply_refilled, copy_taken, env_words,
                            fused_due, refill_due, spare_row, switch_env, switch_fused)
from warp_tracks import GOLDEN, LANES, copy_row, high_unit, low_unit, mix64

# As warp_tracks.py's and warp_lookahead.py's, for the same reason: no
# gradients, and no multiply-add contraction.  Their functions compiled into
# this module's kernels (the switch, the fused refill) must round as they do
# there: on the GPU a product contracted differently here would change a
# track; the CPU tests cannot see it.
wp.set_module_options({"enable_backward": False, "fuse_fp": False})


@wp.func
def move(e: int, keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
         step_no: wp.array(dtype=wp.int64), valid: wp.array(dtype=wp.uint8),
         progress: wp.array(dtype=wp.float32), counters: wp.array(dtype=wp.int64),
         mean_speed: wp.float32, crash_prob: wp.float32, lap: wp.float32):
    """Env e's agent's step, as simloop.py's, its episode's end counted
    with integer atomics (any order gives the same sums): 1 when it
    ended."""
    z = mix64(keys[e] ^ salt[e] ^ (wp.uint64(step_no[0]) * GOLDEN))
    moved = progress[e] + mean_speed * (0.5 + high_unit(z))
    crashed = low_unit(z) < crash_prob
    done = int(0)
    if valid[e] == wp.uint8(0) or crashed or moved >= lap:
        progress[e] = 0.0
        done = 1
        slot = 0  # a lap, unless a crash (1), unless an invalid track (2)
        if valid[e] == wp.uint8(0):
            slot = 2
        elif crashed:
            slot = 1
        wp.atomic_add(counters, slot, wp.int64(1))
    else:
        progress[e] = moved
    return done


# A step is a few microseconds: each load that waits for another load, or
# comes after a store (which the compiler cannot move it above), costs a
# round trip to memory in a row.  So each kernel loads every word its
# thread may need first, all at once, and computes and stores after.

@wp.func
def step_counts(counters: wp.array(dtype=wp.int64), step_no: wp.array(dtype=wp.int64)):
    """The words count_step() moves on, loaded: the steps that regenerated,
    those that skipped it, the step's number."""
    return counters[3], counters[4], step_no[0]


@wp.func
def count_step(run: int, regen: wp.int64, skipped: wp.int64, step: wp.int64,
               counters: wp.array(dtype=wp.int64), step_no: wp.array(dtype=wp.int64)):
    """A step that regenerates (run 1) or skips it, and the next step's
    number, from step_counts()."""
    counters[3] = regen + wp.int64(run)
    counters[4] = skipped + wp.int64(1 - run)
    step_no[0] = step + wp.int64(1)


@wp.kernel
def step_kernel(keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
                step_no: wp.array(dtype=wp.int64), valid: wp.array(dtype=wp.uint8),
                progress: wp.array(dtype=wp.float32), mask: wp.array(dtype=wp.uint8),
                n_done: wp.array(dtype=wp.int32), counters: wp.array(dtype=wp.int64),
                mean_speed: wp.float32, crash_prob: wp.float32, lap: wp.float32):
    """One env's step, its end marked in *mask* and counted."""
    e = wp.tid()
    done = move(e, keys, salt, step_no, valid, progress, counters, mean_speed,
                crash_prob, lap)
    mask[e] = wp.uint8(done)
    if done != 0:
        wp.atomic_add(n_done, 0, 1)


@wp.kernel
def tally_kernel(n_done: wp.array(dtype=wp.int32), any_done: wp.array(dtype=wp.int32),
                 counters: wp.array(dtype=wp.int64), step_no: wp.array(dtype=wp.int64)):
    """One thread: the any-done flag, the steps that regenerate or skip."""
    n = n_done[0]
    regen, skipped, step = step_counts(counters, step_no)
    done = 0
    if n > 0:
        done = 1
    any_done[0] = done
    count_step(done, regen, skipped, step, counters, step_no)
    n_done[0] = 0


@wp.kernel
def step_switch_kernel(keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
                       step_no: wp.array(dtype=wp.int64), valid: wp.array(dtype=wp.uint8),
                       progress: wp.array(dtype=wp.float32),
                       mask: wp.array(dtype=wp.uint8), counters: wp.array(dtype=wp.int64),
                       seeds: wp.array(dtype=wp.uint64), epochs: wp.array(dtype=wp.uint32),
                       lengths: wp.array(dtype=wp.float32), head: wp.array(dtype=wp.int32),
                       ready: wp.array(dtype=wp.int32),
                       spare_valid: wp.array(dtype=wp.uint8),
                       spare_lengths: wp.array(dtype=wp.float32),
                       counts: wp.array(dtype=wp.int32), mean_speed: wp.float32,
                       crash_prob: wp.float32, lap: wp.float32, n_spares: int):
    """One env's step with lookahead: an env that ends switches to its
    next spare track at once (its thread already knows it ended)."""
    e = wp.tid()
    seed, epoch, h, left = env_words(e, seeds, epochs, head, ready)
    done = move(e, keys, salt, step_no, valid, progress, counters, mean_speed,
                crash_prob, lap)
    mask[e] = wp.uint8(done)
    if done != 0:
        switch_env(e, seed, epoch, h, left, epochs, keys, valid, lengths, head, ready,
                   spare_valid, spare_lengths, counts, n_spares)


@wp.kernel
def switch_kernel(mask: wp.array(dtype=wp.uint8), head: wp.array(dtype=wp.int32),
                  spare_points: wp.array2d(dtype=wp.vec2),
                  points: wp.array2d(dtype=wp.vec2), counts: wp.array(dtype=wp.int32),
                  refill: wp.array(dtype=wp.int32), counters: wp.array(dtype=wp.int64),
                  step_no: wp.array(dtype=wp.int64), n_spares: int, batch: int):
    """A switched env's new points, from its spare slot, by LANES
    threads, each a point in LANES; thread 0 tallies as tally_kernel
    does, the refill flag for the any-done flag.  Run on n_envs * LANES
    threads: a thread per point would be 4 times as many to launch at
    every step, for about one env that ends."""
    t = wp.tid()
    e = t // LANES
    ended = mask[e]
    h = head[e]
    if t == 0:
        spent = counts[SPENT]
        drained = counts[DRAINED]
        regen, skipped, step = step_counts(counters, step_no)
        due = refill_due(spent, drained, batch)
        refill[0] = due
        count_step(due, regen, skipped, step, counters, step_no)
    if ended == wp.uint8(0):
        return
    copy_row(spare_points, spare_row(e, h, n_spares), points, e, t % LANES, LANES)


@wp.kernel
def step_fused_kernel(keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
                      step_no: wp.array(dtype=wp.int64), valid: wp.array(dtype=wp.uint8),
                      progress: wp.array(dtype=wp.float32),
                      mask: wp.array(dtype=wp.uint8), counters: wp.array(dtype=wp.int64),
                      seeds: wp.array(dtype=wp.uint64), epochs: wp.array(dtype=wp.uint32),
                      lengths: wp.array(dtype=wp.float32),
                      points: wp.array2d(dtype=wp.vec2),
                      relaxed: wp.array2d(dtype=wp.vec2), head: wp.array(dtype=wp.int32),
                      ready: wp.array(dtype=wp.int32), refilled: wp.array(dtype=wp.int32),
                      made: wp.array(dtype=wp.uint8), spare_valid: wp.array(dtype=wp.uint8),
                      spare_lengths: wp.array(dtype=wp.float32),
                      tallies: wp.array(dtype=wp.int32), took: wp.array(dtype=wp.int32),
                      phase: wp.array(dtype=wp.int32),
                      counts: wp.array(dtype=wp.int32), mean_speed: wp.float32,
                      crash_prob: wp.float32, lap: wp.float32, n_spares: int,
                      n_control: int, max_iters: int):
    """One env's step with the refill fused: the last refill's ready
    count applied, then the step; an env that ends switches to its next
    spare, or makes its next track itself when it has none."""
    e = wp.tid()
    seed, epoch, h, left = env_words(e, seeds, epochs, head, ready)
    r = refilled[e]
    done = move(e, keys, salt, step_no, valid, progress, counters, mean_speed,
                crash_prob, lap)
    p = int(step_no[0] % wp.int64(2))
    if e == 0:
        phase[0] = p  # for the next kernel, whose thread 0 moves step_no on
    left = apply_refilled(e, r, left, ready, refilled)
    mask[e] = wp.uint8(done)
    if done != 0:
        made[e] = wp.uint8(switch_fused(e, p, seed, epoch, h, left, epochs, keys, valid,
                                        lengths, points, relaxed, head, ready, spare_valid,
                                        spare_lengths, tallies, took, counts, n_spares,
                                        n_control, max_iters))


@functools.cache
def switch_fused_kernel(n_points):
    """The fused switch kernel for tracks of *n_points* (its refill's tiles
    are shaped by it), launched tiled, LANES lanes a block (a warp), in a
    module of its own.  Its refill needs every block to have its LANES
    lanes: on Warp's CPU, with wp.config.enable_cpu_blocks set."""
    refill = wl.refill_fused_block(n_points)

    @wp.kernel(module="unique", module_options=wl.MODULE_OPTIONS)
    def switch_fused_kernel(mask: wp.array(dtype=wp.uint8), made: wp.array(dtype=wp.uint8),
                            took: wp.array(dtype=wp.int32), head: wp.array(dtype=wp.int32),
                            spare_points: wp.array2d(dtype=wp.vec2),
                            points: wp.array2d(dtype=wp.vec2), phase: wp.array(dtype=wp.int32),
                            flags: wp.array(dtype=wp.int32), tallies: wp.array(dtype=wp.int32),
                            acc: wp.array(dtype=wp.int32), counters: wp.array(dtype=wp.int64),
                            step_no: wp.array(dtype=wp.int64),
                            seeds: wp.array(dtype=wp.uint64),
                            epochs: wp.array(dtype=wp.uint32), ready: wp.array(dtype=wp.int32),
                            refilled: wp.array(dtype=wp.int32),
                            spare_valid: wp.array(dtype=wp.uint8),
                            spare_lengths: wp.array(dtype=wp.float32), n_spares: int,
                            batch: int, n_control: int, max_iters: int, n_warps: int):
        """switch_kernel's copy and tally with the refill fused: thread 0
        decides the next step's refill, the warps copy the points of the
        envs that took a spare, and the refill the last step decided runs
        here, a block (a warp) its LANES slots, one track after another
        (wl.fused_threads(): a lane a slot, and at least COPY_WARPS blocks
        for the copy)."""
        block, lane = wp.tid()
        t = block * LANES + lane
        p = phase[0]
        f0 = flags[0]
        f1 = flags[1]
        taken0 = tallies[F_TOOK]
        taken1 = tallies[3 + F_TOOK]
        if t == 0:
            regen, skipped, step = step_counts(counters, step_no)
            due = fused_due(p, f0, f1, tallies, acc, n_spares, batch)
            flags[p] = due  # the next kernel's: flags[1 - p] stays as every thread read it
            count_step(due, regen, skipped, step, counters, step_no)
        running = wp.where(p == 0, f1, f0)
        copy_taken(t, p, wp.where(p == 0, taken0, taken1), took, spare_points, points,
                   n_spares, n_warps)
        if running == 0:
            return  # every thread alike: the refill's tile operations need the whole block
        refill(block, lane, seeds, epochs, mask, made, head, ready, refilled, spare_points,
               spare_valid, spare_lengths, n_spares, n_control, max_iters)

    return switch_fused_kernel


@wp.kernel
def start_kernel(keys: wp.array(dtype=wp.uint64), salt: wp.array(dtype=wp.uint64),
                 progress: wp.array(dtype=wp.float32), lap: wp.float32):
    """An agent's start on its first track, as simloop.py's."""
    e = wp.tid()
    progress[e] = lap * (1.0 - high_unit(mix64(keys[e] ^ salt[e])))


# The arrays of the step's kernels, in their order.
AGENT = ("keys", "salt", "step_no", "valid", "progress", "mask")
STEP_USES = {
    "step": AGENT + ("n_done", "counters"),
    "tally": ("n_done", "any_done", "counters", "step_no"),
    "step_switch": AGENT + ("counters", "seeds", "epochs", "lengths", "head", "ready",
                            "spare_valid", "spare_lengths", "counts"),
    "switch": ("mask", "head", "spare_points", "points", "counts", "refill", "counters",
               "step_no"),
    "step_fused": AGENT + ("counters", "seeds", "epochs", "lengths", "points", "relaxed", "head",
                           "ready", "refilled", "made", "spare_valid", "spare_lengths",
                           "tallies", "took", "phase", "counts"),
    "switch_fused": ("mask", "made", "took", "head", "spare_points", "points", "phase", "flags",
                     "tallies", "acc", "counters", "step_no", "seeds", "epochs", "ready",
                     "refilled", "spare_valid", "spare_lengths"),
}


def step_launches(array, n, slots, args):
    """A step's kernel launches, as (kernel, dim, inputs, block_dim), their
    arrays array(name), for *n* envs with *slots* spares each (0: on demand,
    or the floor: no switch); block_dim None for a launch of dim threads, or
    the lanes of each of dim blocks of a tiled launch (launch())."""
    def inputs(name):
        return [array(a) for a in STEP_USES[name]]

    shape = [args.points / args.lap_steps, args.crash_prob, float(args.points)]
    if not slots:
        return [(step_kernel, n, inputs("step") + shape, None),
                (tally_kernel, 1, inputs("tally"), None)]
    if args.refill == "fused":
        blocks = wl.fused_threads(n, slots) // LANES
        return [(step_fused_kernel, n,
                 inputs("step_fused") + shape + [slots, args.control, args.max_iters], None),
                (switch_fused_kernel(args.points), blocks,
                 inputs("switch_fused") + [slots, args.refill_batch, args.control,
                                           args.max_iters, blocks], LANES)]
    return [(step_switch_kernel, n, inputs("step_switch") + shape + [slots], None),
            (switch_kernel, n * LANES, inputs("switch") + [slots, args.refill_batch], None)]


def launch(launches, **where):
    """Launches step_launches()' *launches* in order; *where*: wp.launch()'s
    device or stream, if any."""
    for kernel, dim, inputs, block_dim in launches:
        if block_dim is None:
            wp.launch(kernel, dim, inputs=inputs, **where)
        else:
            wp.launch_tiled(kernel, dim=dim, block_dim=block_dim, inputs=inputs, **where)



if __name__ == "__main__":
    import sys
    print("warp_step.py: a module of simloop_warp.py, which run it", file=sys.stderr)
    sys.exit(2)
