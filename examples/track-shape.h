/* SPDX-License-Identifier: Apache-2.0 */
/* track-shape.h: what the track producer's C code and its kernels share, in
 * plain C with standard types.  The kernels include this header, not
 * track-producer.h: GLib's headers carry host-compiler attributes that
 * nvcc's device front end warns about (#1217). */
#ifndef TRACK_SHAPE_H
#define TRACK_SHAPE_H

#include <stdint.h>

/* Declares a function of a .cu file with C linkage, seen from C or C++. */
#ifdef __cplusplus
#define TRACK_EXTERN_C extern "C"
#else
#define TRACK_EXTERN_C
#endif

#define TRACK_BLOCK 128       /* threads of every per-env kernel */
#define TRACK_MAX_POINTS 512  /* N: a multiple of 32 in [32, 512] */
#define TRACK_MAX_CONTROL 64  /* K: in [4, 64] */
#define TRACK_MAX_LOOKAHEAD 8 /* L: spare tracks an env may keep ready */

/* Shape families: how the K control points of a track are drawn, each from
 * the env's effective seed alone (see track-kernels.cu). */
typedef enum
{
  /* Around a circle, with angle and radius jitter. */
  TRACK_FAMILY_POLAR = 0,
  /* On a stadium (two straights, two half circles) of random proportions
   * and heading, at evenly spaced arc lengths, pushed along its normal. */
  TRACK_FAMILY_STADIUM = 1,
  /* Around a circle with alternating outer and inner radii: a star whose K/2
   * tips are hairpins. */
  TRACK_FAMILY_STAR = 2,
  TRACK_N_FAMILIES
} TrackFamily;

/* The geometry of every track of a batch (lengths in metres). */
typedef struct
{
  uint32_t n_points;     /* N centerline points */
  uint32_t n_control;    /* K control points */
  float radius;          /* mean radius of the control points */
  float radius_jitter;   /* relative radius jitter, in [0, 0.9] */
  float angle_jitter;    /* angle jitter as a share of the spacing, in [0, 0.95] */
  float width;           /* track width, for the clearance test */
  float min_turn_radius; /* relaxation target: the tightest turn allowed */
} TrackShape;

/* The relaxation of a track made whole in one kernel (a spare track, with
 * lookahead): it stops once the track is smooth enough, after at most @max
 * iterations, but not before @min.  A smooth track does not move, so @min
 * changes no track, only what one costs: a stand-in for a slow generator. */
typedef struct
{
  uint32_t min;
  uint32_t max;
} TrackIters;

/* The envs a call regenerates: the first kernel after the epoch advance
 * lists the masked envs' ids, and the kernels after it loop over that list
 * alone on a small grid, so that a call costs in proportion to the envs it
 * regenerates, not to the batch (track-kernels.cu).  The other fields are
 * what the blocks of one kernel gather for its last block, which decides for
 * all and leaves them at 0 for the next kernel. */
typedef struct
{
  uint32_t n;       /* envs listed, in the "ids" binding */
  uint32_t counted; /* the listing kernel's running count */
  uint32_t blocks;  /* blocks of the running kernel that are done */
  int32_t sharp;    /* whether a listed env is still too sharp, so far */
} TrackList;

/* With lookahead (track-producer.h), an env's spare tracks: a ring of L
 * slots, the next one at @head, @ready of them made from @seed for the
 * epochs after @epoch, the epoch of the env's current track. */
typedef struct
{
  uint64_t seed;  /* of the env's spares: another in the seed state makes them stale */
  uint32_t epoch; /* of the current track: another in the seed state, likewise */
  uint8_t head;   /* the slot of the next track */
  uint8_t ready;  /* slots made, from @head on: epochs @epoch + 1 .. + @ready */
  uint8_t listed;  /* the env is in a refill's list */
  uint8_t follows; /* @seed and @epoch are set (zeroed slots follow no env) */
} TrackSlots;

/* The batched refill of spent spares.  Two lists of envs, in "refill_ids":
 * one that the envs whose first slot is spent are appended to, the other
 * one refilled by the call after the one that decided it. */
typedef struct
{
  uint32_t n[2];   /* envs in each list */
  uint32_t cur;    /* the list ends append to */
  int32_t go;      /* this call refills list 1 - cur */
  uint32_t spent;  /* slots spent since the last refill was decided */
  int32_t urgent;  /* this call: an env has no spare left */
  uint32_t blocks; /* blocks of the running kernel that are done */
} TrackRefill;

/* The overlapped refill (TrackConfig.overlap): a refill that runs beside
 * the steps, on a stream of its own, while the steps' kernels switch ended
 * envs to their spares.  Each spare slot has a state word
 * ("slot_states", 64 bits a slot, track-overlap.cuh) that both sides change
 * with atomics; these are the running totals both report. */
typedef struct
{
  uint32_t freed;  /* slots freed by ends, owed a track (wraps) */
  uint32_t misses; /* ends whose next slot was not made yet: made at once */
  uint32_t urgent; /* switch calls after which an env's next slot was not made */
  uint32_t made;   /* slots made by refills */
  uint32_t refills; /* refills done */
  uint32_t unused;
  uint64_t busy_ns; /* the refills' blocks' time, summed: with a block an SM,
                       the SM time the refills held */
} TrackTotals;

/* "overlap": the device side of the overlapped refill.  After each switch
 * call (its last block, or fused a later kernel's thread) and each refill
 * kernel, @totals are copied to @host, mapped host memory the track
 * producer owns (freed after its device buffers, so after its kernels),
 * which a TrackRefiller reads with no synchronization.  With no refiller,
 * no refill runs, and every end makes its track at once. */
typedef struct
{
  TrackTotals totals;
  uint32_t blocks;        /* blocks of the running switch kernel that are done */
  uint32_t refill_blocks; /* blocks of the running refill that are done */
  uint32_t cursor;        /* the running refill's next slot of its list ... */
  uint32_t n_owed;        /* ... of the slots owed when it started */
  int32_t urgent;         /* the running switch kernel: an env's next slot is not made */
  uint32_t changed;       /* the running switch kernel changed the totals */
  TrackTotals *host;
  TrackShape shape;       /* the generator the producer was made with, which */
  TrackIters iters;       /* a refiller's config must match */
} TrackOverlap;

#endif /* TRACK_SHAPE_H */
