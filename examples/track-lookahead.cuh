/* SPDX-License-Identifier: Apache-2.0 */
// track-lookahead.cuh: one call of the lookahead, as a device function: the
// track producer's own kernel runs it (track-lookahead.cu), and so may a
// simulator's step kernel, right after its agents moved (fused: no kernel
// of the lookahead's own on the step).  An env keeps L spare tracks, made
// ahead for the epochs after its current one.  A call has two kinds of
// blocks: switch blocks, a thread per env, copy an ended env's next spare
// over its current track (a warp per ended env, a few hundred bytes) and
// list it for the refill; refill blocks make the spares of the envs a
// refill decided in the previous call took, or return at once.  Each track
// is made by the functions of track-env.cuh, as on-demand generation makes
// it: the same (seed, epoch, family) gives the same track bit for bit.
#ifndef TRACK_LOOKAHEAD_CUH
#define TRACK_LOOKAHEAD_CUH

#include "track-rows.cuh"

// A switch block makes the track of an env that ended with no spare itself.
#define SWITCH_BLOCK TRACK_BLOCK

// The switch and the refill of one env, in one kernel.  Called by the
// track producer's own kernel, the envs that ended are known before it runs
// (its @mask): a refill block leaves those alone.  Fused into a simulator's
// step kernel (sp.claims set), an env may end in the very call that
// refills it: then each side claims the env (a word of sp.claims) around
// what it reads and writes of it.  A refill that finds it claimed leaves it
// for the next refill, as an ended one; one that claims it after its switch
// refills it; a switch waits for the refill that holds it (a block already
// running, which makes its tracks and lets go).  The tracks, epochs and
// counters are the producer's own calls', bit for bit; when the refills
// run may differ.

// An env's slots, its epoch and its spares' families are read from L2
// (__ldcg): fused, the other side may have changed them in this very kernel
// (under the env's claim) after this SM's L1 last held their line.
static __device__ __forceinline__ TrackSlots
load_slots (const TrackSlots *p)
{
  static_assert (sizeof (TrackSlots) == sizeof (uint4), "TrackSlots: 16 bytes");
  const uint4 v = __ldcg ((const uint4 *)p);
  TrackSlots s;

  memcpy (&s, &v, sizeof s);
  return s;
}

// Claim words: free, held by a refill block, held by a switch.
#define CLAIM_FREE 0u
#define CLAIM_REFILL 1u
#define CLAIM_SWITCH 2u

static __device__ void
claim_for_switch (const TrackSpares &sp, uint32_t e)
{
  if (sp.claims == nullptr)
    return;
  while (atomicCAS (sp.claims + e, CLAIM_FREE, CLAIM_SWITCH) != CLAIM_FREE)
    __nanosleep (256);
  __threadfence (); // the refill's tracks and slots before this switch's reads
}

// Whether the block may refill env @e: not ended in this call (@mask), or,
// fused, claimed.  Every thread of the block calls it.
static __device__ bool
claim_for_refill (const TrackSpares &sp, const uint8_t *mask, uint32_t e)
{
  __shared__ bool claimed;

  if (sp.claims == nullptr)
    return !mask[e];
  __syncthreads (); // every thread read the last env's claim
  if (threadIdx.x == 0)
    {
      claimed = atomicCAS (sp.claims + e, CLAIM_FREE, CLAIM_REFILL) == CLAIM_FREE;
      if (claimed)
        __threadfence (); // the last switch's slots before this refill's reads
    }
  __syncthreads ();
  return claimed;
}

// Lets env @e go, once what its holder wrote landed (one thread, after a
// barrier that ordered the block's writes before it).
static __device__ void
release (const TrackSpares &sp, uint32_t e)
{
  if (sp.claims == nullptr)
    return;
  __threadfence ();
  atomicExch (sp.claims + e, CLAIM_FREE);
}

// The switch blocks' part: a thread per env.  With the family in range, an
// ended env moves on to its next epoch and takes its next slot, and the
// slot it frees is owed the track of the epoch L ahead, of the family of now
// (kept in the slot's family until a refill makes it): a track is a function
// of (seed, epoch, family) whenever it is made, a family set now reaches an
// env's tracks L episodes later.  Spares are usable while the env's seed
// and epoch are the ones they follow.  An env whose next slot is not made
// yet gets that slot's track, of the family it is owed, from its block at
// once: its tracks depend on its own ends alone, never on when a refill
// came.  Returns whether the env spent a slot; *@urgent: it has no spare
// left.
static __device__ int
switch_env (TrackShape shape, TrackIters iters, uint32_t e, bool ended, int32_t f,
            const uint64_t *seeds, uint32_t *epochs, TrackRows current, TrackSpares sp,
            uint32_t list, float2 *smem, int *urgent)
{
  __shared__ OwedTracks owed;
  int64_t from = -1; // the spare row this env takes
  int64_t freed = -1; // the slot it frees
  int64_t at = -1;    // its place in list @list, if it joins it now
  int spent = 0;

  if (threadIdx.x == 0)
    owed.n = 0;
  __syncthreads ();
  if (ended)
    {
      claim_for_switch (sp, e);
      TrackSlots s = load_slots (sp.slots + e);
      const uint64_t seed = seeds[e];
      const uint32_t epoch = __ldcg (epochs + e);

      if (!follows (s, seed, epoch)) // set since: every slot owed anew
        {
          s.seed = seed;
          s.follows = 1;
          s.ready = 0;
          for (uint32_t j = 0; j < sp.lookahead; j++)
            sp.spares.families[(size_t)e * sp.lookahead + j] = (uint8_t)f;
        }
      freed = (int64_t)e * sp.lookahead + s.head;
      s.head = (uint8_t)((s.head + 1) % sp.lookahead);
      if (s.ready > 0)
        {
          from = freed;
          s.ready--;
        }
      else
        {
          owed_add (owed, e, tg_effective_seed (seed, epoch + 1),
                    __ldcg (sp.spares.families + freed));
        }
      spent = 1;
      epochs[e] = s.epoch = epoch + 1; // wraps, as tg_seed_state_advance()
      *urgent = s.ready == 0;
      if (!s.listed)
        {
          s.listed = 1;
          at = atomicAdd (&sp.refill->n[list], 1u); // in flight during the copy
        }
      sp.slots[e] = s;
    }

  // Every lane takes part, those past n_envs too: the warp copies together,
  // fused, after the claims of its ended lanes (their acquires).
  if (sp.claims != nullptr)
    __syncwarp ();
  take_rows (shape, current, sp.spares, e, from);
  if (at >= 0)
    sp.ids[(size_t)list * sp.n_envs + at] = e;
  __syncthreads (); // the rows are copied and the owed families read ...
  if (freed >= 0)   // ... before the slots are owed anew
    sp.spares.families[freed] = (uint8_t)f;
  if (ended)
    release (sp, e); // after the warp's copy: the barrier above orders it
  make_owed (owed, shape, iters, current, smem); // rare: at once, in the step
  return spent;
}

// Env @e, still listed, joins list @next (the one ends append to), by the
// block's thread 0.
static __device__ void
relist (const TrackSpares &sp, uint32_t next, uint32_t e)
{
  if (threadIdx.x == 0)
    sp.ids[(size_t)next * sp.n_envs + atomicAdd (&sp.refill->n[next], 1u)] = e;
}

// The refill blocks' part: the envs of list @list, a block per env at a
// time, each one's empty slots, of the families they are owed, for the
// epochs after the one its seed state holds.  An env that ends in this call
// is left for the next refill (its switch block has its slots): by its
// @mask byte, or, fused (claims), when its switch holds its claim; fused,
// one whose switch already let it go is refilled now, past its end (its
// tracks are the same: they depend on (seed, epoch, family) alone).
static __device__ void
refill_envs (TrackShape shape, TrackIters iters, uint32_t block, uint32_t n_blocks,
             const uint8_t *mask, int32_t f, const uint64_t *seeds,
             const uint32_t *epochs, TrackSpares sp, uint32_t list, uint32_t next,
             float2 *smem)
{
  const uint32_t n = sp.refill->n[list];

  for (uint32_t i = block; i < n; i += n_blocks)
    {
      const uint32_t e = sp.ids[(size_t)list * sp.n_envs + i];

      if (!claim_for_refill (sp, mask, e))
        {
          relist (sp, next, e);
          continue;
        }
      const uint64_t seed = seeds[e];
      const uint32_t base = __ldcg (epochs + e);
      TrackSlots s = load_slots (sp.slots + e);
      const bool stale = !follows (s, seed, base);

      if (stale && !family_in_range (f))
        {
          relist (sp, next, e);
          if (threadIdx.x == 0)
            release (sp, e);
          continue;
        }
      if (stale) // set since it was listed: every slot anew, of the family of now
        s.ready = 0;
      for (uint32_t j = s.ready; j < sp.lookahead; j++)
        {
          const size_t row = (size_t)e * sp.lookahead + (s.head + j) % sp.lookahead;

          make_track (shape, stale ? f : __ldcg (sp.spares.families + row),
                      tg_effective_seed (seed, base + 1 + j), iters, sp.spares, row,
                      smem);
        }
      __syncthreads (); // every thread read the slots before they change
      if (threadIdx.x == 0)
        {
          s.seed = seed;
          s.follows = 1;
          s.epoch = base;
          s.ready = (uint8_t)sp.lookahead;
          s.listed = 0;
          sp.slots[e] = s;
          release (sp, e);
        }
    }
}

// The next call's refill, decided once every block of this call tallied,
// by one thread, for family @f: an env listed, and an env with no spare
// left or at least @batch slots spent since the last refill.  The words
// were changed with atomics in this call: read together (both lists'
// lengths, none waiting for @cur), one round trip.
static __device__ void
lookahead_decide (TrackRefill *r, uint32_t batch, int32_t f)
{
  const uint32_t cur = relaxed (r->cur), go = relaxed (r->go);
  const uint32_t n0 = relaxed (r->n[0]), n1 = relaxed (r->n[1]);
  const uint32_t spent = relaxed (r->spent), listed = cur ? n1 : n0;
  const int32_t urgent = relaxed (r->urgent);
  const bool next = family_in_range (f) && listed > 0 && (urgent != 0 || spent >= batch);

  if (go)
    r->n[1 - cur] = 0; // refilled, or moved to the list ends append to
  if (next)            // the next call refills what this one listed
    {
      r->cur = 1 - cur;
      r->spent = 0;
    }
  r->go = next;
  r->urgent = 0;
}

// One call of the lookahead, by the block that runs it: of a kernel of
// n_switch switch blocks (a thread per env: @ended, whether this thread's
// env ended) and refill blocks after them, TRACK_BLOCK threads and
// track_env_smem() bytes of dynamic shared memory each, with family @f.
// @mask: the ended envs, known before the kernel ran (the producer's own
// kernel), or NULL when sp.claims guards them (a simulator's step kernel
// that calls this once its agents moved).  @decide: the kernel's last block
// decides the next refill (lookahead_decide(), after a ticket every block
// takes); false: one thread of a later kernel calls lookahead_decide(),
// before the next call (a simulator's kernel that runs after its step
// kernel anyway: the ticket's round trips leave the step).  See
// track_launch_lookahead().
static __device__ void
lookahead_call (TrackShape shape, TrackIters iters, uint32_t n_switch, bool ended,
                const uint8_t *mask, int32_t f, const uint64_t *seeds, uint32_t *epochs,
                TrackRows current, TrackSpares sp, bool decide)
{
  extern __shared__ float2 smem[];
  const uint32_t e = blockIdx.x * SWITCH_BLOCK + threadIdx.x;
  const bool can_make = family_in_range (f);
  // Written only by the decision, after every block read them (the last
  // block's, or a later kernel's).
  const uint32_t cur = sp.refill->cur, go = sp.refill->go;
  int spent = 0, urgent = 0;

  if (!go) // no refill in this call: no env to guard
    sp.claims = nullptr;
  if (blockIdx.x < n_switch)
    spent = switch_env (shape, iters, e, can_make && ended, f, seeds, epochs, current,
                        sp, cur, smem, &urgent);
  else if (go)
    refill_envs (shape, iters, blockIdx.x - n_switch, gridDim.x - n_switch, mask, f,
                 seeds, epochs, sp, 1 - cur, cur, smem);

  spent = __syncthreads_count (spent);
  urgent = __syncthreads_or (urgent);
  if (threadIdx.x == 0)
    {
      if (spent)
        atomicAdd (&sp.refill->spent, (uint32_t)spent);
      if (urgent)
        atomicOr (&sp.refill->urgent, 1);
      // This block's lists, tallies and slots land before its ticket.
      if (decide && last_block (&sp.refill->blocks, spent || go))
        lookahead_decide (sp.refill, sp.refill_batch, f);
    }
}

#endif // TRACK_LOOKAHEAD_CUH
