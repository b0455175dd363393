/* SPDX-License-Identifier: Apache-2.0 */
// track-overlap.cuh: the lookahead with an overlapped refill, its switch
// side as a device function (overlap_switch_call()), which the producer's
// own switch kernel runs (track-overlap.cu) and so may a simulator's step
// kernel.  The refill runs on a stream of its own, beside any number of
// switch calls, so the two meet in a state word per spare slot, changed
// with atomics:
//   bits 0-1   NONE (zeroed: owed nothing yet), OWED, FILLING or READY
//   bits 2-7   the family the slot is owed
//   bits 8-31  a tag, bumped each time a switch owes the slot anew
//   bits 32-63 the epoch whose track the slot is owed
// A refill claims an OWED slot (OWED -> FILLING), makes its track and marks
// it READY only if the word is still the one it claimed: a switch that owed
// the slot anew meanwhile (its env ended before the track was made, or its
// seed was set) changed the tag, and the track is dropped.  A switch reads
// a READY slot's rows, then owes the slot anew; a refill never writes a
// READY slot.  An env whose next slot is not READY gets that slot's track,
// of the family it is owed, made at once by its block.  Every track is made
// by the functions of track-env.cuh: the same (seed, epoch, family) gives
// the same track bit for bit, whichever side makes it, and whenever.
#ifndef TRACK_OVERLAP_CUH
#define TRACK_OVERLAP_CUH

#include <cuda/atomic>

#include "track-rows.cuh"

enum
{
  SLOT_NONE = 0,
  SLOT_OWED = 1,
  SLOT_FILLING = 2,
  SLOT_READY = 3,
};

typedef unsigned long long Word;
typedef cuda::atomic_ref<Word, cuda::thread_scope_device> WordRef;

static __device__ __forceinline__ uint32_t
state_of (Word w)
{
  return (uint32_t)(w & 3u);
}

static __device__ __forceinline__ uint32_t
family_of (Word w)
{
  return (uint32_t)(w >> 2) & 0x3fu;
}

static __device__ __forceinline__ uint32_t
epoch_of (Word w)
{
  return (uint32_t)(w >> 32);
}

static __device__ __forceinline__ Word
with_state (Word w, uint32_t state)
{
  return (w & ~(Word)3u) | state;
}

// Slot @w owed anew: the track of @epoch, of @family, under the next tag.
static __device__ __forceinline__ Word
owed_anew (Word w, uint32_t epoch, int32_t family)
{
  const uint32_t tag = ((uint32_t)(w >> 8) + 1u) & 0xffffffu;

  return (Word)epoch << 32 | (Word)tag << 8 | (Word)((uint32_t)family & 0x3fu) << 2
         | SLOT_OWED;
}

static __device__ __forceinline__ WordRef
slot_state (const TrackOverlapSpares &sp, size_t slot)
{
  return WordRef (sp.states[slot]);
}

// The seed an env's slots follow, as a refill reads it beside the switches.
static __device__ __forceinline__ cuda::atomic_ref<Word, cuda::thread_scope_device>
slots_seed (const TrackOverlapSpares &sp, uint32_t e)
{
  return cuda::atomic_ref<Word, cuda::thread_scope_device> (
      *reinterpret_cast<Word *> (&sp.slots[e].seed));
}

// The switch of env @e (a thread each, every thread of the block calls it):
// when @ended, it moves on to its next epoch and takes its next slot.
// Returns whether it did; *@missed: that slot was not made; *@urgent:
// neither is the one after.
static __device__ int
overlap_switch_env (TrackShape shape, TrackIters iters, uint32_t e, bool ended,
                    int32_t f, const uint64_t *seeds, uint32_t *epochs,
                    TrackRows current, const TrackOverlapSpares &sp, float2 *smem,
                    int *missed, int *urgent)
{
  __shared__ OwedTracks owed;
  int64_t from = -1; // the slot whose rows this env takes
  size_t slot = 0;   // the slot it frees
  uint32_t epoch = 0;
  Word w = 0;

  if (threadIdx.x == 0)
    owed.n = 0;
  __syncthreads ();
  if (ended)
    {
      TrackSlots s = sp.slots[e];
      const uint64_t seed = seeds[e];
      const size_t base = (size_t)e * sp.lookahead;

      epoch = epochs[e];
      // Set since: every slot owed anew, of the family of now.
      if (!follows (s, seed, epoch))
        {
          // The seed lands before the states a refill claims and keys by it.
          slots_seed (sp, e).store (seed, cuda::memory_order_relaxed);
          __threadfence ();
          s.seed = seed;
          s.follows = 1;
          s.head = 0;
          for (uint32_t k = 0; k < sp.lookahead; k++)
            {
              WordRef ref = slot_state (sp, base + k);

              ref.store (
                  owed_anew (ref.load (cuda::memory_order_relaxed), epoch + 1 + k, f),
                  cuda::memory_order_relaxed);
            }
        }
      slot = base + s.head;
      w = slot_state (sp, slot).load (cuda::memory_order_acquire);
      if (state_of (w) == SLOT_READY)
        from = (int64_t)slot;
      else
        {
          owed_add (owed, e, tg_effective_seed (seed, epoch + 1), family_of (w));
          *missed = 1;
        }
      s.head = (uint8_t)((s.head + 1) % sp.lookahead);
      epochs[e] = s.epoch = epoch + 1; // wraps, as tg_seed_state_advance()
      sp.slots[e] = s;
      // With one slot, the next is the one this end frees.
      *urgent = sp.lookahead == 1
                || state_of (
                       slot_state (sp, base + s.head).load (cuda::memory_order_relaxed))
                       != SLOT_READY;
    }

  __syncwarp (); // the lanes' acquiring loads before any lane reads the rows
  take_rows (shape, current, sp.spares, e, from);
  __syncthreads (); // the rows are copied before their slots are owed anew
  if (ended)
    slot_state (sp, slot).store (owed_anew (w, epoch + 1 + sp.lookahead, f),
                                 cuda::memory_order_release);
  make_owed (owed, shape, iters, current, smem); // the misses, in the step
  return ended;
}

// The switch calls' totals, copied to the refiller's host memory when a
// call changed them, by one thread once every block of the call tallied:
// the call's last block, or a thread of a kernel the simulator runs after
// its step kernel anyway (overlap_switch_call() with @publish false).
// No block of the call changes them any more (a refill running beside
// changes other totals), and the next call comes after.
static __device__ void
overlap_publish (TrackOverlap *o)
{
  // Read together: one round trip.
  const uint32_t changed = relaxed (o->changed), freed = relaxed (o->totals.freed),
                 misses = relaxed (o->totals.misses);
  const int32_t urgent_any = relaxed (o->urgent);
  volatile TrackTotals *host = o->host;

  if (!changed)
    return;
  o->changed = 0;
  if (urgent_any)
    {
      o->urgent = 0;
      o->totals.urgent++;
    }
  // Only when they changed (a step with no end writes no host memory); the
  // refiller reads them with no synchronization, in no order: no fence (a
  // step's cost), a late one only delays a refill by a poll.
  host->freed = freed;
  host->misses = misses;
  host->urgent = o->totals.urgent;
}

// One switch call, by the block that runs it: of a kernel of a thread per
// env (TRACK_BLOCK threads and track_env_smem() bytes of dynamic shared
// memory a block), @ended whether this thread's env ended, with family @f.
// Every block of the kernel calls it once, with all its threads.
// @publish: its last block (a ticket over gridDim) publishes the totals
// (overlap_publish()); false: one thread of a later kernel calls
// overlap_publish() after each call and before the next (a simulator's
// kernel that runs after its step kernel anyway: the ticket's round trips
// leave the step).  The track producer's own switch kernel runs it, and so
// may a simulator's step kernel right after its agents moved (fused:
// TrackFused); a refill may run beside either.
static __device__ void
overlap_switch_call (TrackShape shape, TrackIters iters, bool ended, int32_t f,
                     const uint64_t *seeds, uint32_t *epochs, TrackRows current,
                     TrackOverlapSpares sp, bool publish)
{
  extern __shared__ float2 smem[];
  const uint32_t e = blockIdx.x * TRACK_BLOCK + threadIdx.x;
  TrackOverlap *o = sp.overlap;
  int spent, missed = 0, urgent = 0;

  spent = overlap_switch_env (shape, iters, e, family_in_range (f) && ended, f, seeds,
                              epochs, current, sp, smem, &missed, &urgent);
  spent = __syncthreads_count (spent);
  missed = __syncthreads_count (missed);
  urgent = __syncthreads_or (urgent);
  if (threadIdx.x != 0)
    return;
  // Their results unused: reductions, none waits for its round trip.
  if (spent)
    atomicAdd (&o->totals.freed, (uint32_t)spent);
  if (missed)
    atomicAdd (&o->totals.misses, (uint32_t)missed);
  if (urgent)
    atomicOr (&o->urgent, 1);
  if (spent)
    atomicOr (&o->changed, 1u);
  if (publish && last_block (&o->blocks, spent != 0))
    overlap_publish (o);
}

#endif // TRACK_OVERLAP_CUH
