/* SPDX-License-Identifier: Apache-2.0 */
/* track-kernels.h: launchers of the track producer's kernels
 * (track-kernels.cu), in plain C.  Each enqueues on @stream and returns the
 * launch's own cudaError_t.  The per-env kernels give each env a block of
 * TRACK_BLOCK threads, one env after another, and take only the envs that
 * track_launch_list() listed (a TrackList, track-shape.h). */
#ifndef TRACK_KERNELS_H
#define TRACK_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <trackgen/kernel.h>

#include "track-shape.h"

/* Where tracks are kept: an env's current track (a row per env), or the
 * spare slots (a row per env and slot, env-major). */
typedef struct
{
  float2 *points;    /* N per row */
  float2 *control;   /* K per row */
  uint8_t *families; /* one per row */
  uint8_t *valid;    /* one per row */
  float *sharpness;  /* one per row */
} TrackRows;

/* Lists the envs whose mask byte is non-zero: their ids into @ids (in an
 * order that varies from run to run) and their number into list->n, which
 * the kernels below read when they run; with @epochs (a seed state's), adds
 * 1 to each listed env's epoch, wrapping, as tg_seed_state_advance() does.
 * The only kernel here whose cost grows with @n_envs: a byte an env. */
TRACK_EXTERN_C cudaError_t track_launch_list (cudaStream_t stream, uint32_t n_envs,
                                              const uint8_t *mask, uint32_t *epochs,
                                              uint32_t *ids, TrackList *list);

/* The kernels below run @n_blocks blocks (fixed when a graph captures them)
 * that loop over the listed envs; blocks past the list leave at once. */

/* Listed envs: the K control points of @family (a TrackFamily; others are
 * cudaErrorInvalidValue) drawn from tg_effective_seed(seeds[e], epochs[e])
 * into @control (K per env), families[e] := @family, and the closed
 * Catmull-Rom curve through the control points, resampled to N points
 * evenly spaced by arc length, into @points, with its sharpness; *flag :=
 * whether a listed env's sharpness is over 1.  Sets *generated to 1,
 * whatever the list. */
TRACK_EXTERN_C cudaError_t track_launch_generate (
    cudaStream_t stream, int family, TrackShape shape, uint32_t n_blocks,
    TrackList *list, const uint32_t *ids, const uint64_t *seeds, const uint32_t *epochs,
    float2 *control, uint8_t *families, float2 *points, float *sharpness, int32_t *flag,
    int32_t *generated);

/* One iteration of the relaxation: listed envs still too sharp (sharpness >
 * 1) get a few passes of local Laplacian smoothing around their sharp
 * points, then their new sharpness; *flag := whether one is still too
 * sharp, and the iteration ends with tg_loop_next (@loop, !*flag), so the
 * loop goes on while an env is too sharp, up to its cap. */
TRACK_EXTERN_C cudaError_t track_launch_relax (cudaStream_t stream, TrackShape shape,
                                               uint32_t n_blocks, TrackList *list,
                                               const uint32_t *ids, float2 *points,
                                               float *sharpness, int32_t *flag,
                                               TgDeviceLoop loop);

/* When *generated is set (a case ran), listed envs: valid[e] = no two
 * segments cross, and points far apart along the track are at least the
 * track width apart; then clears *flag and *generated: the next call starts
 * with nothing generated and nothing left to relax.  Else nothing. */
TRACK_EXTERN_C cudaError_t track_launch_validate (cudaStream_t stream, TrackShape shape,
                                                  uint32_t n_blocks, TrackList *list,
                                                  const uint32_t *ids,
                                                  const float2 *points, uint8_t *valid,
                                                  int32_t *flag, int32_t *generated);

/* Lookahead (track-lookahead.cu): spare tracks made ahead, an env that ends
 * switching to its next one, and their batched refill, in one kernel. */

/* What the lookahead's kernel takes: the spare slots and their rings. */
typedef struct
{
  uint32_t n_envs;       /* E */
  uint32_t lookahead;    /* L slots per env */
  uint32_t refill_batch; /* spent slots that start a refill */
  TrackRows spares;      /* L rows per env, env-major */
  TrackSlots *slots;     /* per env */
  uint32_t *ids;         /* the refill's two lists, E each */
  TrackRefill *refill;
  uint32_t *claims;      /* a word per env (track-lookahead.cuh): what a call
                            fused into a simulator's kernel guards envs with */
} TrackSpares;

/* One call of the lookahead: with *@family in range, every env whose @mask
 * byte is set moves on to its next epoch: its next spare (made for that
 * epoch, from the same seed) is copied into its row of @current, and the
 * slot it frees is owed the track L epochs ahead, of family *@family; an
 * env with no spare gets its track made at once.  With *@family out of
 * range nothing changes (as on demand).  Envs that spend their first slot
 * are listed for a refill; when the previous call decided one, @n_refill_blocks
 * blocks make the empty slots of the envs it listed (those that end in
 * this call wait for the next), each track made whole (control points,
 * centerline, at most @iters.max relaxation iterations, each env stopping
 * when smooth as the loop stage does but not before @iters.min, validity):
 * bit for bit the tracks of on-demand generation.  The last block decides
 * the next refill: an env listed, and an env with no spare left or at least
 * refill_batch slots spent since the last one. */
TRACK_EXTERN_C cudaError_t track_launch_lookahead (
    cudaStream_t stream, TrackShape shape, uint32_t n_refill_blocks, TrackIters iters,
    const uint8_t *mask, const int32_t *family, const uint64_t *seeds, uint32_t *epochs,
    TrackRows current, TrackSpares spares);

/* How many blocks of the lookahead's kernel for @shape one SM holds at once,
 * into *@n: a refill's blocks up to that many a SM make their tracks side by
 * side. */
TRACK_EXTERN_C cudaError_t track_lookahead_blocks_per_sm (TrackShape shape, int *n);

/* The overlapped refill (track-overlap.cu): the spares and their states. */
typedef struct
{
  uint32_t n_envs;    /* E */
  uint32_t lookahead; /* L slots per env */
  TrackRows spares;   /* L rows per env, env-major */
  unsigned long long *states; /* a state word per slot */
  TrackSlots *slots;  /* per env: its seed, epoch and head (not ready, listed) */
  uint32_t *owed;     /* the refill's list: E * L slots at most */
  TrackOverlap *overlap;
} TrackOverlapSpares;

/* A fused call: the producer's call of a step made inside the simulator's
 * own step kernel (one kernel node fewer a step: on a light step, that
 * node is most of what the lookahead costs).  The simulator's kernel, right
 * after its agents moved, calls with what this holds, each thread with
 * whether its env ended, the env of thread t of block b being
 * b * TRACK_BLOCK + t, on blocks of TRACK_BLOCK threads with
 * track_env_smem() bytes of dynamic shared memory:
 *   - lookahead_call() (track-lookahead.cuh): ceil(n_envs / TRACK_BLOCK)
 *     switch blocks, then n_refill_blocks refill blocks; with decide
 *     false, one thread of a kernel the simulator runs after it calls
 *     lookahead_decide() on spares.refill, exactly once after each such
 *     call and before the next call of either kind (missed, the next call
 *     refills the last list again; twice, a decided list is dropped): the
 *     last block's ticket then leaves the step kernel;
 *   - with overlap, overlap_switch_call() (track-overlap.cuh): the switch
 *     blocks alone (the refill runs beside, started by a TrackRefiller);
 *     with publish false, one thread of a later kernel calls
 *     overlap_publish() on overlap_spares.overlap, after each such call
 *     and before the next (missed, the refiller sees the ends of that call
 *     only at the next publish: its refills come later).
 * The tracks, epochs and counters are those of the producer's own calls,
 * bit for bit (in the step graph, the envs that end in the very call that
 * refills them are guarded by their claims; in either mode, when refills
 * run may differ).  The producer's own calls (a reset, a first call) and
 * fused calls may take turns on one stream, each fused call of decide
 * (publish) false decided (published) before the next.  Made by
 * track_fused_init() (track-producer.h). */
typedef struct
{
  TrackShape shape;
  TrackIters iters;
  uint32_t n_refill_blocks; /* in the step graph, as the producer's own kernel */
  const uint64_t *seeds;    /* the seed state's */
  uint32_t *epochs;
  TrackRows current;
  uint32_t overlap; /* which of the two below */
  TrackSpares spares;
  TrackOverlapSpares overlap_spares;
} TrackFused;

/* One call of the lookahead with an overlapped refill, a thread per env:
 * with *@family in range, every env whose @mask byte is set moves on to its
 * next epoch and takes its next slot: copied into its row of @current when
 * a refill made it, else made at once by its block (of the family the slot
 * is owed: an env's tracks do not depend on when refills run); the slot it
 * frees is owed the track L epochs ahead, of family *@family.  Its last
 * block copies the totals to the refiller's host memory. */
TRACK_EXTERN_C cudaError_t track_launch_switch_overlap (
    cudaStream_t stream, TrackShape shape, TrackIters iters, const uint8_t *mask,
    const int32_t *family, const uint64_t *seeds, uint32_t *epochs, TrackRows current,
    TrackOverlapSpares spares);

/* One refill: lists the slots owed, then @n_blocks blocks claim each in
 * turn and make its track whole (as the switch would), and mark it made
 * unless a switch owed it anew meanwhile.  Runs beside the switch calls. */
TRACK_EXTERN_C cudaError_t track_launch_refill_overlap (cudaStream_t stream,
                                                        TrackShape shape,
                                                        uint32_t n_blocks,
                                                        TrackIters iters,
                                                        TrackOverlapSpares spares);

#endif /* TRACK_KERNELS_H */
